package featurize

import (
	"fmt"
	"strings"
)

// VocabBuilder counts attribute occurrences over a training corpus, then
// builds the Vocabulary of the attributes frequent enough. Its memory is
// proportional to the number of distinct attributes (each name is stored
// once, cloned from the extractor's buffers), not to the corpus size.
type VocabBuilder struct {
	ids       map[string]int32
	names     []string
	counts    []int64
	templates []int32 // template of each name's first occurrence
	nameBytes int64   // the names' bytes
}

// NewVocabBuilder returns an empty builder.
func NewVocabBuilder() *VocabBuilder {
	return &VocabBuilder{ids: make(map[string]int32)}
}

// Add counts one occurrence of f (whatever its value).
func (b *VocabBuilder) Add(f Feature) {
	if i, ok := b.ids[f.Name]; ok {
		b.counts[i]++
		return
	}
	name := strings.Clone(f.Name)
	b.nameBytes += int64(len(name))
	b.ids[name] = int32(len(b.names))
	b.names = append(b.names, name)
	b.counts = append(b.counts, 1)
	b.templates = append(b.templates, int32(f.Template))
}

// AddSentence counts every attribute of a sentence as returned by
// Extractor.Extract.
func (b *VocabBuilder) AddSentence(feats [][]Feature) {
	for _, tok := range feats {
		for _, f := range tok {
			b.Add(f)
		}
	}
}

// vocabEntryBytes is about what a distinct attribute costs a
// VocabBuilder besides its name's bytes, and then its Vocabulary, in all:
// string headers, count and template, map entries, and what the slices
// and maps allocate over their growth.
const vocabEntryBytes = 480

// MemoryBytes estimates what learning the vocabulary allocates at its size
// so far, the builder's and the vocabulary Build makes of it: an upper
// bound of what they hold at once, garbage included.
func (b *VocabBuilder) MemoryBytes() int64 {
	return b.nameBytes + vocabEntryBytes*int64(len(b.names))
}

// Len returns the number of distinct attributes seen.
func (b *VocabBuilder) Len() int { return len(b.names) }

// Count returns the number of occurrences of the attribute name.
func (b *VocabBuilder) Count(name string) int64 {
	if i, ok := b.ids[name]; ok {
		return b.counts[i]
	}
	return 0
}

// Build returns the vocabulary of the attributes seen at least minCount
// times (minCount ≤ 1 keeps all), ids in order of first appearance. Since
// an attribute's name includes its template's, the cutoff applies per
// template and value.
func (b *VocabBuilder) Build(minCount int) *Vocabulary {
	return b.BuildPerTemplate(minCount, nil)
}

// BuildPerTemplate is Build with a cutoff for each template: an attribute
// first produced by template i is kept when seen at least perTemplate[i]
// times, or minCount times when i is not in the map.
func (b *VocabBuilder) BuildPerTemplate(minCount int, perTemplate map[int]int) *Vocabulary {
	v := &Vocabulary{ids: make(map[string]int32)}
	for i, name := range b.names {
		cut := minCount
		if m, ok := perTemplate[int(b.templates[i])]; ok {
			cut = m
		}
		if b.counts[i] >= int64(cut) {
			v.ids[name] = int32(len(v.names))
			v.names = append(v.names, name)
		}
	}
	return v
}

// Vocabulary maps attribute names to dense ids 0..Len()-1. It is immutable
// and safe for concurrent use.
type Vocabulary struct {
	ids   map[string]int32
	names []string
}

// NewVocabulary returns the vocabulary whose id i names names[i], e.g. as
// stored in a table's metadata. Duplicate names are an error.
func NewVocabulary(names []string) (*Vocabulary, error) {
	v := &Vocabulary{ids: make(map[string]int32, len(names)), names: make([]string, len(names))}
	copy(v.names, names)
	for i, name := range v.names {
		if j, dup := v.ids[name]; dup {
			return nil, fmt.Errorf("vocabulary: attribute %q at both id %d and id %d", name, j, i)
		}
		v.ids[name] = int32(i)
	}
	return v, nil
}

// ID returns the id of the attribute name, false when it is unknown.
func (v *Vocabulary) ID(name string) (int32, bool) {
	id, ok := v.ids[name]
	return id, ok
}

// Name returns the name of attribute id, "" when id is out of range.
func (v *Vocabulary) Name(id int32) string {
	if id < 0 || int(id) >= len(v.names) {
		return ""
	}
	return v.names[id]
}

// Len returns the number of attributes.
func (v *Vocabulary) Len() int { return len(v.names) }

// Names returns a copy of the names in id order.
func (v *Vocabulary) Names() []string { return append([]string(nil), v.names...) }

// AppendIDs appends the ids and values of the known attributes among feats
// to ids and vals, and returns them with the number of unknown attributes
// dropped: test data featurized with the training vocabulary.
func (v *Vocabulary) AppendIDs(ids []int32, vals []float64, feats []Feature) ([]int32, []float64, int) {
	dropped := 0
	for _, f := range feats {
		id, ok := v.ids[f.Name]
		if !ok {
			dropped++
			continue
		}
		ids = append(ids, id)
		vals = append(vals, f.Value)
	}
	return ids, vals, dropped
}
