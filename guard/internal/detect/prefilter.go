package detect

import (
	"regexp"

	"github.com/agentguard/agentguard/trace/lexicon"
)

// MayMatch reports whether re could match text; see lexicon.MayMatch.
func MayMatch(re *regexp.Regexp, text string) bool { return lexicon.MayMatch(re, text) }

func mayMatch(re *regexp.Regexp, text string) bool { return lexicon.MayMatch(re, text) }
