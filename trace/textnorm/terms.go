package textnorm

// The vocabulary of Clauses. These tables are data, not code: they are read
// only, never written after package initialization, and they belong in the
// lexicon (language data) once that exists; the code that reads them knows
// nothing of English or Chinese beyond the shape of numerals.

// abbreviation is how one abbreviation of a section-like word is spelled
// out.
type abbreviation struct {
	word    string // the word it stands for, in lower case
	needDot bool   // it counts only when written with a full stop ("No." but not "no")
}

// abbreviations maps abbreviations of section-like words, in lower case and
// without the full stop, to the words they stand for. Clauses spells one out
// only when a numeral follows it: "Sec. 7.3", "Art.IV", "§7", "cl 12".
// Abbreviations that are also ordinary words or names ("no", "pt", "SEC")
// count only with their full stop.
var abbreviations = map[string]abbreviation{
	"§":      {"section", false},
	"§§":     {"sections", false},
	"¶":      {"paragraph", false},
	"¶¶":     {"paragraphs", false},
	"sec":    {"section", true}, // "SEC 10-K" is the regulator's form
	"sect":   {"section", false},
	"secs":   {"sections", true},
	"subsec": {"subsection", false},
	"art":    {"article", false},
	"arts":   {"articles", false},
	"cl":     {"clause", false},
	"cls":    {"clauses", false},
	"para":   {"paragraph", false},
	"paras":  {"paragraphs", false},
	"chap":   {"chapter", false},
	"ch":     {"chapter", true},
	"sch":    {"schedule", true},
	"pt":     {"part", true},
	"no":     {"number", true},
	"nos":    {"numbers", true},
}

// sectionWords are the words, in lower case, after which Clauses reads a
// Roman numeral as a number: "Section VII" is "Section 7", "Part II" is
// "Part 2". Those of five letters or more are also recognized when spelled
// with look-alike ASCII ("cIause", "SECTI0N"); see looseKey.
var sectionWords = map[string]bool{
	"section": true, "sections": true, "subsection": true, "subsections": true,
	"article": true, "articles": true,
	"clause": true, "clauses": true,
	"paragraph": true, "paragraphs": true,
	"chapter": true, "chapters": true,
	"part": true, "parts": true,
	"schedule": true, "schedules": true,
	"title": true, "annex": true, "appendix": true, "book": true, "volume": true,
	"item": true, "rule": true, "number": true, "numbers": true,
}

// hanUnits are the units that make 第<numeral><unit> a reference to a part
// of a document, whose numeral Clauses writes in digits: 条 article, 款
// paragraph, 项 item, 目 sub-item, 章 chapter, 节 section, 编 part, 部 part,
// 篇 part, 卷 volume, 段 paragraph, 页 page, 点 point.
var hanUnits = map[rune]bool{
	'条': true, '款': true, '项': true, '目': true, '章': true, '节': true, '编': true,
	'部': true, '篇': true, '卷': true, '段': true, '页': true, '点': true,
	'條': true, '項': true, '節': true, '編': true, '頁': true, '點': true, // traditional forms
}

// hanDigits are the Chinese digits, ordinary and financial (大写), and the
// values they stand for.
var hanDigits = map[rune]uint64{
	'〇': 0, '零': 0, '一': 1, '二': 2, '两': 2, '兩': 2, '三': 3, '四': 4, '五': 5,
	'六': 6, '七': 7, '八': 8, '九': 9,
	'壹': 1, '贰': 2, '貳': 2, '叁': 3, '參': 3, '肆': 4, '伍': 5, '陆': 6, '陸': 6,
	'柒': 7, '捌': 8, '玖': 9,
}

// hanMultipliers are the Chinese units of a numeral: 十 ten, 百 hundred,
// 千 thousand, 万 ten thousand, 亿 hundred million, with their financial
// and traditional forms.
var hanMultipliers = map[rune]uint64{
	'十': 10, '拾': 10, '百': 100, '佰': 100, '千': 1000, '仟': 1000,
	'万': 1e4, '萬': 1e4, '亿': 1e8, '億': 1e8,
}
