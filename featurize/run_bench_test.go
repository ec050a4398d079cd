package featurize

import (
	"context"
	"testing"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/internal/datatest"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/tables"
)

// countingWriter counts the bytes written through it.
type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// BenchmarkFeaturizeConll2000 runs the whole featurize stage on CoNLL-2000
// train — both passes, chunking templates, cut-off 3, the Arrow stream
// written — and reports tokens/s and the table's size, uncompressed and
// with zstd.
func BenchmarkFeaturizeConll2000(b *testing.B) {
	path := datatest.Path(b, "conll2000", "train.txt.gz")
	set, err := Builtin("chunking")
	if err != nil {
		b.Fatal(err)
	}
	for _, comp := range []arrowio.Compression{arrowio.CompressNone, arrowio.CompressZstd} {
		b.Run(string(comp), func(b *testing.B) {
			var w countingWriter
			var sum tables.FeatureSummary
			for b.Loop() {
				w.n = 0
				var err error
				sum, err = Run(context.Background(), pipeline.Source{Path: path}, &w, RunOptions{Templates: set, MinCount: 3,
					Writer: arrowio.WriterOptions{Compression: comp}})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(sum.Tokens)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
			b.ReportMetric(float64(w.n)/(1<<20), "MiB")
		})
	}
}
