/*
Package lexicon holds the language data of agentguard as a value: the verbs
that mark a tool as one that changes state, the phrases the rules look for
in answers, user turns and tool results, the vocabulary of the memory
card's extractor, how dates and times are written, and every reply the
guard writes to the user or to the model, per language.

It sits at the bottom, beside trace, and imports only the standard
library: both memory and guard read it. The guard takes one through
guard.Config.Lexicon and the memory card's rule-based extractor through
memory.RuleBased; nil means Default, English and Chinese merged.

# Building one

[English], [Chinese] and [Default] return new values. Change one's fields
before its first use, or combine several with [Merge], which concatenates
lists, merges maps and fills replies per language:

	lx := lexicon.Default()
	lx.WriteVerbs = append(lx.WriteVerbs, "ship")      // ship_order changes state
	lx.ClaimWords["ship"] = []string{"shipped", "已发货"} // and "shipped" claims it
	g := guard.New(guard.Config{Lexicon: lx})

A new language is a Lexicon of its own merged onto Default: its phrases,
and its [Replies] with the Unicode scripts that mark a user turn written
in it.

# Patterns

Phrases that vary are regular expressions (package regexp), kept as source
strings; a list of them matches where any one does. Patterns that give
values back name their groups: (?P<value>...). [Lexicon.Compiled] compiles
a Lexicon once, on first use, into [Compiled], which the rules read without
compiling or allocating per call; [Lexicon.Check] reports a pattern that
does not compile. [Compiled.MayMatch] turns away, before the pattern runs,
a text that holds none of the words every match of it holds, and a rule
that looks for any of a list of words uses a [WordSet], which reads the
text once whatever the length of the list.

The memory card's vocabulary ([Memory]) is plain words, not patterns: the
extractor finds values by their structure and reads the words around them
(negation, permission, change, question words, the words of each contact
channel). Teach it a channel by adding its words:

	lx.Memory.Channels = append(lx.Memory.Channels, lexicon.Words{Name: "wechat", Words: []string{"wechat", "微信"}})

# Replies

A reply is never a mix of languages: [Compiled.LangOf] picks the language
of the user's latest turn — Chinese when it holds a Chinese character,
English otherwise; with more languages, the one whose script has the most
letters in the turn — and every reply, question and observation the guard
writes in answer to that turn comes from [Compiled.Replies] for that one
language. Identifiers (tool names, argument keys, intent labels) are shown
by the name [Replies.Names] gives them; English shows unnamed ones as
words, other languages show them as they are, and an intent the reply's
language cannot name is not offered.
*/
package lexicon
