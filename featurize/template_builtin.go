package featurize

import (
	"fmt"
	"sort"
	"strings"
)

// tmplBuiltins holds the text of the built-in template sets.
var tmplBuiltins = map[string]string{
	// Sha & Pereira (2003) as used by Schmidt et al. (2015, SAG4CRF) and
	// Le Priol et al. (2018): 19 templates. Word unigrams and bigrams are
	// lower-cased; one boundary symbol per side. With a cutoff of 3
	// occurrences per attribute, CoNLL-2000 train yields 74,658
	// attributes, the paper's figure (per-offset symbols give 74,662,
	// skipping 73,619, bigrams not lower-cased 74,436).
	"chunking": `# Sha & Pereira chunking templates (19)
@boundary side
lower(w[-2])
lower(w[-1])
lower(w[0])
lower(w[1])
lower(w[2])
lower(w[-1])|lower(w[0])
lower(w[0])|lower(w[1])
pos[-2]
pos[-1]
pos[0]
pos[1]
pos[2]
pos[-2]|pos[-1]
pos[-1]|pos[0]
pos[0]|pos[1]
pos[1]|pos[2]
pos[-2]|pos[-1]|pos[0]
pos[-1]|pos[0]|pos[1]
pos[0]|pos[1]|pos[2]
`,
	// Named entities: the word and its spelling, a lower-cased window of
	// ±2, and the POS window when the input has a POS column.
	"ner": `# named-entity templates
w[0]
lower(w[0])
shape(w[0])
prefix1(w[0])
prefix2(w[0])
prefix3(w[0])
prefix4(w[0])
suffix1(w[0])
suffix2(w[0])
suffix3(w[0])
suffix4(w[0])
lower(w[-2])
lower(w[-1])
lower(w[1])
lower(w[2])
?pos[-2]
?pos[-1]
?pos[0]
?pos[1]
?pos[2]
`,
	// Part-of-speech tagging: the word and its spelling, a lower-cased
	// window of ±2, character-class tests, and another POS column (e.g.
	// XPOS when the label is UPOS) when the input has one.
	"pos": `# part-of-speech templates
w[0]
lower(w[0])
shape(w[0])
prefix1(w[0])
prefix2(w[0])
prefix3(w[0])
prefix4(w[0])
suffix1(w[0])
suffix2(w[0])
suffix3(w[0])
suffix4(w[0])
lower(w[-2])
lower(w[-1])
lower(w[1])
lower(w[2])
hasdigit(w[0])
hashyphen(w[0])
isupper(w[0])
istitle(w[0])
?pos[-1]
?pos[0]
?pos[1]
`,
}

// BuiltinNames returns the names of the built-in template sets, sorted.
func BuiltinNames() []string {
	names := make([]string, 0, len(tmplBuiltins))
	for name := range tmplBuiltins {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// Builtin returns the built-in template set called name:
//
//   - "chunking": the 19 templates of Sha & Pereira (2003) used by the
//     paper's experiments — lower-cased words at −2..+2, lower-cased word
//     bigrams (−1,0) and (0,+1), POS at −2..+2, the four POS bigrams and
//     the three POS trigrams — with "@boundary side". With a cutoff of 3
//     (VocabBuilder.Build(3)) CoNLL-2000 train yields the paper's 74,658
//     attributes.
//   - "ner": word, lower-cased word, shape, prefixes and suffixes of 1..4
//     runes, lower-cased words at ±1 and ±2, and POS at −2..+2 when the
//     input has a POS column (optional templates, dropped otherwise; so the
//     set works on CoNLL-2002's word,pos as on word-only input).
//   - "pos": word, lower-cased word, shape, prefixes and suffixes of 1..4
//     runes, lower-cased words at ±1 and ±2, hasdigit, hashyphen, isupper,
//     istitle, and POS at −1..+1 when the input has a POS column that is
//     not the label.
//
// Its errors name the file "builtin:NAME".
func Builtin(name string) (*TemplateSet, error) {
	text, ok := tmplBuiltins[name]
	if !ok {
		return nil, fmt.Errorf("unknown built-in template set %q (known: %s)", name, strings.Join(BuiltinNames(), ", "))
	}
	return ParseTemplates(strings.NewReader(text), "builtin:"+name)
}
