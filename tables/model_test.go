package tables

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/crf/crftest"
	"github.com/dualcrf/dualcrf/pipeline"
)

func TestModelRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, noBias := range []bool{false, true} {
		for _, comp := range []pipeline.Compression{pipeline.CompressNone, pipeline.CompressZstd} {
			lay := crf.Layout{NumAttrs: 40000, NumLabels: 3, NoBias: noBias}
			m := &crf.Model{Layout: lay, Weights: crftest.RandomWeights(rng, lay, 1),
				LabelNames: []string{"B-NP", "I-NP", "O"}, Meta: map[string]string{"dualcrf.lambda": "0.01"}}
			for a := 0; a < lay.NumAttrs; a++ {
				m.AttrNames = append(m.AttrNames, "w[0]="+string(rune('a'+a%26))+strings.Repeat("x", a%7)+strconv.Itoa(a))
			}
			var buf bytes.Buffer
			if err := WriteModel(&buf, m, pipeline.WriterOptions{Compression: comp}); err != nil {
				t.Fatal(err)
			}
			got, err := ReadModel(bytes.NewReader(buf.Bytes()), "model.arrow", pipeline.ReaderOptions{})
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
	if _, err := ReadModel(strings.NewReader("not arrow at all"), "x.bin", pipeline.ReaderOptions{}); err == nil || !strings.Contains(err.Error(), "x.bin") {
		t.Fatalf("garbage: %v", err)
	}
	if _, err := ReadModel(strings.NewReader(""), "empty.bin", pipeline.ReaderOptions{}); err == nil {
		t.Fatal("empty input accepted as a model")
	}
}
