package tables

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/crf/crftest"
)

// TestModelRoundTrip writes models (with and without bias, compressed or
// not, both IPC formats) and reads them back, every Arrow buffer from a
// checked allocator that must end empty.
func TestModelRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	formats := []arrowio.Format{arrowio.FormatFile, arrowio.FormatStream}
	for _, noBias := range []bool{false, true} {
		for k, comp := range []arrowio.Compression{arrowio.CompressNone, arrowio.CompressZstd} {
			lay := crf.Layout{NumAttrs: 40000, NumLabels: 3, NoBias: noBias}
			m := &crf.Model{Layout: lay, Weights: crftest.RandomWeights(rng, lay, 1),
				LabelNames: []string{"B-NP", "I-NP", "O"}, Meta: map[string]string{"dualcrf.lambda": "0.01"}}
			for a := 0; a < lay.NumAttrs; a++ {
				m.AttrNames = append(m.AttrNames, "w[0]="+string(rune('a'+a%26))+strings.Repeat("x", a%7)+strconv.Itoa(a))
			}
			var buf bytes.Buffer
			if err := WriteModel(&buf, m, arrowio.WriterOptions{Format: formats[k], Compression: comp, Mem: mem}); err != nil {
				t.Fatal(err)
			}
			got, err := ReadModel(bytes.NewReader(buf.Bytes()), "model.arrow", arrowio.ReaderOptions{Mem: mem})
			if err != nil {
				t.Fatal(err)
			}
			if got.Layout != lay || len(got.Weights) != len(m.Weights) {
				t.Fatalf("layout %+v, %d weights; want %+v, %d", got.Layout, len(got.Weights), lay, len(m.Weights))
			}
			for i, w := range m.Weights {
				if got.Weights[i] != w {
					t.Fatalf("weight %d = %g, want %g", i, got.Weights[i], w)
				}
			}
			for i, n := range m.AttrNames {
				if got.AttrNames[i] != n {
					t.Fatalf("attr %d = %q, want %q", i, got.AttrNames[i], n)
				}
			}
			if got.Meta["dualcrf.lambda"] != "0.01" || strings.Join(got.LabelNames, ",") != "B-NP,I-NP,O" {
				t.Fatalf("metadata %v labels %v", got.Meta, got.LabelNames)
			}
		}
	}
}

func TestReadModelRejects(t *testing.T) {
	if _, err := ReadModel(strings.NewReader("not arrow at all"), "x.bin", arrowio.ReaderOptions{}); err == nil || !strings.Contains(err.Error(), "x.bin") {
		t.Fatalf("garbage: %v", err)
	}
	if _, err := ReadModel(strings.NewReader(""), "empty.bin", arrowio.ReaderOptions{}); err == nil {
		t.Fatal("empty input accepted as a model")
	}
}

// TestReadModelErrorsRelease: a model cut anywhere is refused, and the
// reader releases every buffer it took from the allocator on the way out.
func TestReadModelErrorsRelease(t *testing.T) {
	_, data := markedModel(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	for n := 0; n < len(data); n += 1 + n/64 {
		if _, err := ReadModel(bytes.NewReader(data[:n]), "cut.arrow", arrowio.ReaderOptions{Mem: mem}); err == nil {
			t.Fatalf("a model cut at byte %d of %d was accepted", n, len(data))
		}
	}
	mem.AssertSize(t, 0)
}
