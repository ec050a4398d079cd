package crfsuite

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/crf/crftest"
)

// TestHashLittle checks the hash against lookup3's published values (the
// first four, from the comments of Jenkins' lookup3.c) and values of
// CRFsuite's own lookup3.c (compiled from CRFsuite 0.12.2's sources) for
// keys as CQDB hashes them, with their NUL, across the 12-byte blocks.
func TestHashLittle(t *testing.T) {
	for _, c := range []struct {
		key     string
		initval uint32
		want    uint32
	}{
		{"", 0, 0xdeadbeef},
		{"", 0xdeadbeef, 0xbd5b7dde},
		{"Four score and seven years ago", 0, 0x17770551},
		{"Four score and seven years ago", 1, 0xcd628161},
		{"\x00", 0, 0x8ba9414b},
		{"a\x00", 0, 0x42b17671},
		{"B-NP\x00", 0, 0xe10ba755},
		{"lower(w[0])=the\x00", 0, 0x35e68bf9},
		{"0123456789ab", 0, 0x1065e50a},
		{"0123456789ab\x00", 0, 0x9f97732d},
		{"0123456789abc\x00", 0, 0x96e775d5},
		{"pos[-1]|pos[0]|pos[1]=NN|IN|DT\x00", 0, 0x686e73a9},
	} {
		if got := hashLittle([]byte(c.key), c.initval); got != c.want {
			t.Errorf("hashLittle(%q, %#x) = %#08x, want %#08x", c.key, c.initval, got, c.want)
		}
	}
}

// parsed is a CRFsuite model file read back as CRFsuite's reader does:
// names are found through the string databases' hash tables.
type parsed struct {
	b                  []byte
	labels, attrs      []string
	labelDB, attrDB    []byte
	numFeat            int
	offFeat            int
	offLabRef, offAttr int
}

func u32(b []byte, off int) int { return int(binary.LittleEndian.Uint32(b[off:])) }

func parse(t *testing.T, b []byte) *parsed {
	t.Helper()
	if string(b[0:4]) != fileMagic || string(b[8:12]) != modelType || u32(b, 12) != version || u32(b, 4) != len(b) {
		t.Fatalf("header %q", b[:16])
	}
	p := &parsed{b: b, numFeat: u32(b, 16), offFeat: u32(b, 28), offLabRef: u32(b, 40), offAttr: u32(b, 44)}
	L, A := u32(b, 20), u32(b, 24)
	p.labelDB, p.attrDB = b[u32(b, 32):], b[u32(b, 36):]
	p.labels = cqdbStrings(t, p.labelDB, L)
	p.attrs = cqdbStrings(t, p.attrDB, A)
	if string(b[p.offFeat:p.offFeat+4]) != "FEAT" || u32(b, p.offFeat+8) != p.numFeat {
		t.Fatalf("feature chunk")
	}
	return p
}

// cqdbStrings reads the n strings of a CQDB by its id → record array.
func cqdbStrings(t *testing.T, db []byte, n int) []string {
	t.Helper()
	if string(db[:4]) != "CQDB" || u32(db, 12) != cqdbByteOrder || u32(db, 16) != n {
		t.Fatalf("CQDB header %q, %d names, want %d", db[:4], u32(db, 16), n)
	}
	bwd := u32(db, 20)
	out := make([]string, n)
	for id := range n {
		rec := u32(db, bwd+4*id)
		if u32(db, rec) != id {
			t.Fatalf("CQDB record of id %d holds id %d", id, u32(db, rec))
		}
		size := u32(db, rec+4)
		out[id] = string(db[rec+8 : rec+8+size-1])
	}
	return out
}

// lookup finds name's id in a CQDB through its hash tables, as
// cqdb_to_id does, or returns -1.
func lookup(db []byte, name string) int {
	key := append([]byte(name), 0)
	hv := hashLittle(key, 0)
	ref := cqdbHeader + 8*int(hv%cqdbTables)
	off, n := u32(db, ref), u32(db, ref+4)
	if off == 0 {
		return -1
	}
	for k := int(hv>>8) % n; ; k = (k + 1) % n {
		h, rec := u32(db, off+8*k), u32(db, off+8*k+4)
		if rec == 0 {
			return -1
		}
		if uint32(h) == hv && bytes.Equal(db[rec+8:rec+8+u32(db, rec+4)], key) {
			return u32(db, rec)
		}
	}
}

// features returns the features listed for item i of a refs chunk.
func (p *parsed) features(chunk, i int) [][4]float64 {
	b := p.b
	off := u32(b, chunk+chunkSize+4*i)
	var fs [][4]float64
	for j := range u32(b, off) {
		fid := u32(b, off+4+4*j)
		f := p.offFeat + chunkSize + featureSize*fid
		w := math.Float64frombits(binary.LittleEndian.Uint64(b[f+12:]))
		fs = append(fs, [4]float64{float64(u32(b, f)), float64(u32(b, f+4)), float64(u32(b, f+8)), w})
	}
	return fs
}

// TestWriteModelReadsBack writes random models (some weights zero, as in the
// observed feature space) and reads every weight back the way CRFsuite's
// tagger finds it: names through the hash tables, features through the
// per-attribute and per-label lists. Every non-zero weight must be found
// exactly, and nothing else.
func TestWriteModelReadsBack(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 20 {
		A, K := 1+rng.IntN(300), 1+rng.IntN(12)
		lay := crf.Layout{NumAttrs: A, NumLabels: K, NoBias: trial%2 == 0}
		w := crftest.RandomWeights(rng, lay, 1)
		for i := range w {
			if rng.IntN(3) == 0 {
				w[i] = 0
			}
		}
		m := &crf.Model{Layout: lay, Weights: w, Meta: map[string]string{}}
		for a := range A {
			m.AttrNames = append(m.AttrNames, fmt.Sprintf("w[%d]=a:b\\%d|é", a%7, a))
		}
		for y := range K {
			m.LabelNames = append(m.LabelNames, fmt.Sprintf("L%d", y))
		}
		var buf bytes.Buffer
		s, err := WriteModel(&buf, m)
		if err != nil {
			t.Fatal(err)
		}
		p := parse(t, buf.Bytes())
		if s.Bytes != int64(buf.Len()) || s.Features != p.numFeat || s.Labels != K || len(p.labels) != K {
			t.Fatalf("summary %+v for a file of %d bytes, %d features, %d labels", s, buf.Len(), p.numFeat, len(p.labels))
		}
		for y, n := range m.LabelNames {
			if p.labels[y] != n || lookup(p.labelDB, n) != y {
				t.Fatalf("label %d %q: read %q, found id %d", y, n, p.labels[y], lookup(p.labelDB, n))
			}
		}
		found := 0
		for a, n := range m.AttrNames {
			row := w[a*K : (a+1)*K]
			id := lookup(p.attrDB, n)
			if id < 0 {
				for y := range K {
					if row[y] != 0 {
						t.Fatalf("attribute %q has weight %g for label %d, but the file does not hold it", n, row[y], y)
					}
				}
				continue
			}
			got := make([]float64, K)
			for _, f := range p.features(p.offAttr, id) {
				if f[0] != stateFeature || int(f[1]) != id {
					t.Fatalf("attribute %q lists feature %v", n, f)
				}
				got[int(f[2])] += f[3]
				found++
			}
			for y := range K {
				if got[y] != row[y] {
					t.Fatalf("attribute %q label %d: read %g, want %g", n, y, got[y], row[y])
				}
			}
		}
		if !lay.NoBias {
			mk := MarkersOf(m)
			for i, n := range []string{mk.Bias, mk.Start, mk.End} {
				want := w[lay.Bias()+i*K : lay.Bias()+(i+1)*K]
				got := make([]float64, K)
				if id := lookup(p.attrDB, n); id >= 0 {
					for _, f := range p.features(p.offAttr, id) {
						got[int(f[2])] += f[3]
						found++
					}
				}
				for y := range K {
					if got[y] != want[y] {
						t.Fatalf("marker %q label %d: read %g, want %g", n, y, got[y], want[y])
					}
				}
			}
		}
		for y := range K {
			got := make([]float64, K)
			for _, f := range p.features(p.offLabRef, y) {
				if f[0] != transFeature || int(f[1]) != y {
					t.Fatalf("label %d lists feature %v", y, f)
				}
				got[int(f[2])] += f[3]
				found++
			}
			for y2 := range K {
				if want := w[lay.Trans()+y*K+y2]; got[y2] != want {
					t.Fatalf("transition %d→%d: read %g, want %g", y, y2, got[y2], want)
				}
			}
		}
		if found != p.numFeat {
			t.Fatalf("%d features reached through the lists, %d in the file", found, p.numFeat)
		}
	}
}

// TestCheckRefuses: NUL bytes in names are refused with ErrNotExportable;
// bias, start and end weights are not (they become markers).
func TestCheckRefuses(t *testing.T) {
	lay := crf.Layout{NumAttrs: 2, NumLabels: 2}
	m := &crf.Model{Layout: lay, Weights: make([]float64, lay.Dim()), AttrNames: []string{"a", "b"}, LabelNames: []string{"X", "Y"}}
	m.Weights[lay.Bias()], m.Weights[lay.Start()+1], m.Weights[lay.End()] = 0.5, -1, 2
	if err := Check(m); err != nil {
		t.Fatalf("bias, start and end weights: %v", err)
	}
	m.AttrNames[1] = "a\x00b"
	if err := Check(m); !errors.Is(err, ErrNotExportable) {
		t.Errorf("NUL in an attribute: %v", err)
	}
	m.AttrNames[1], m.LabelNames[0] = "b", "X\x00"
	if _, err := WriteModel(&bytes.Buffer{}, m); !errors.Is(err, ErrNotExportable) {
		t.Errorf("NUL in a label: %v", err)
	}
}

// TestMarkersOf: the markers are "@bias", "@start" and "@end", lengthened
// past the model's own attributes of those names, distinct from each other
// and from every attribute; a model without bias has none.
func TestMarkersOf(t *testing.T) {
	for _, c := range []struct {
		attrs []string
		want  Markers
	}{
		{[]string{"w[0]=the", "bias"}, Markers{"@bias", "@start", "@end"}},
		{[]string{"@bias", "@bias@", "@end", "x"}, Markers{"@bias@@", "@start", "@end@"}},
		{[]string{"@start@", "@start"}, Markers{"@bias", "@start@@", "@end"}},
	} {
		lay := crf.Layout{NumAttrs: len(c.attrs), NumLabels: 2}
		m := &crf.Model{Layout: lay, AttrNames: c.attrs}
		if got := MarkersOf(m); got != c.want {
			t.Errorf("attributes %q: markers %+v, want %+v", c.attrs, got, c.want)
		}
		m.Layout.NoBias = true
		if got := MarkersOf(m); got != (Markers{}) {
			t.Errorf("no bias: markers %+v", got)
		}
	}
}

// TestExportScoresPaths reads random models with bias, start and end
// weights back as CRFsuite's tagger scores a sentence — per token the state
// features of its attributes (times their values) and of the markers
// present at it, plus the transitions — and compares every label path's
// score of small random sentences with crf.Dot, the score dualcrf decodes
// with. The markers make the two agree to rounding.
func TestExportScoresPaths(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 30 {
		A, K := 1+rng.IntN(8), 1+rng.IntN(4)
		lay := crf.Layout{NumAttrs: A, NumLabels: K, NoBias: trial%5 == 4}
		d := crftest.RandomDataset(rng, 4, 4, A, K, trial%2 == 0)
		w := crftest.RandomWeights(rng, lay, 1)
		m := &crf.Model{Layout: lay, Weights: w, AttrNames: d.AttrNames, LabelNames: d.LabelNames}
		for a := range A {
			m.AttrNames[a] = fmt.Sprintf("a%d", a)
		}
		var buf bytes.Buffer
		if _, err := WriteModel(&buf, m); err != nil {
			t.Fatal(err)
		}
		p := parse(t, buf.Bytes())
		state := func(name string, y int) float64 { // the weight of (name, y) in the file
			id := lookup(p.attrDB, name)
			if id < 0 {
				return 0
			}
			for _, f := range p.features(p.offAttr, id) {
				if int(f[2]) == y {
					return f[3]
				}
			}
			return 0
		}
		trans := func(y, y2 int) float64 {
			for _, f := range p.features(p.offLabRef, y) {
				if int(f[2]) == y2 {
					return f[3]
				}
			}
			return 0
		}
		mk := MarkersOf(m)
		for i := range d.Len() {
			s := d.Sentence(i)
			T := s.Len()
			for _, path := range crftest.Enumerate(lay, w, s).Paths {
				score := 0.0
				for tok := range T {
					y := int(path[tok])
					for j := s.AttrStart[tok]; j < s.AttrStart[tok+1]; j++ {
						v := 1.0
						if s.Values != nil {
							v = s.Values[j]
						}
						score += v * state(m.AttrNames[s.Attrs[j]], y)
					}
					if !lay.NoBias {
						score += state(mk.Bias, y)
						if tok == 0 {
							score += state(mk.Start, y)
						}
						if tok == T-1 {
							score += state(mk.End, y)
						}
					}
					if tok > 0 {
						score += trans(int(path[tok-1]), y)
					}
				}
				want := crf.Dot(w, lay, s, path)
				if math.Abs(score-want) > 1e-12*(1+math.Abs(want)) {
					t.Fatalf("trial %d, sentence %d, path %v: CRFsuite's score %.17g, crf.Dot %.17g", trial, i, path, score, want)
				}
			}
		}
	}
}
