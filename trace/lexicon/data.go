package lexicon

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
)

// The shipped vocabularies, one file per language. They are plain data in
// the JSON form of a Lexicon (keys are the field names): edit them as
// text, and the package tests check that they decode strictly and are laid
// out as the formatter lays them out (go test ./trace/lexicon -update
// rewrites them so). Keep their phrasings generic, never one test's or one
// attack's strings.
var (
	//go:embed data/en.json
	englishData []byte
	//go:embed data/zh.json
	chineseData []byte
)

// decode reads a Lexicon from its JSON form, refusing unknown keys so that
// a misspelt field never silently drops words.
func decode(name string, data []byte) (*Lexicon, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	lx := &Lexicon{}
	if err := dec.Decode(lx); err != nil {
		return nil, fmt.Errorf("lexicon: %s: %w", name, err)
	}
	return lx, nil
}

// mustDecode is decode for the shipped files, which the tests check.
func mustDecode(name string, data []byte) *Lexicon {
	lx, err := decode(name, data)
	if err != nil {
		panic(err)
	}
	return lx
}

func english() *Lexicon { return mustDecode("data/en.json", englishData) }

func chinese() *Lexicon { return mustDecode("data/zh.json", chineseData) }
