package featurize

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/pipeline"
)

// TestVocabMemoryEstimate: what learning a vocabulary allocates (the
// builder and the vocabulary Build makes) is at most what MemoryBytes
// estimates, and not far below it.
func TestVocabMemoryEstimate(t *testing.T) {
	for _, n := range []int{1000, 100_000} {
		names := make([]string, n)
		for i := range names {
			names[i] = fmt.Sprintf("lower(w[0])=w%07d", i)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		b := NewVocabBuilder()
		for _, name := range names {
			b.Add(Feature{Name: name})
		}
		v := b.Build(1)
		runtime.ReadMemStats(&after)
		alloc := int64(after.TotalAlloc - before.TotalAlloc)
		if est := b.MemoryBytes(); alloc > est || 3*alloc < est {
			t.Errorf("%d attributes: %d bytes allocated, %d estimated", n, alloc, est)
		}
		runtime.KeepAlive(v)
	}
}

// TestVocabMemoryBound: a vocabulary that outgrows the memory budget
// stops the first pass at the line it reached, saying how many attributes
// it holds and what to do (it grew until the process died of
// out-of-memory); within the budget, or without one, the corpus is
// featurized.
func TestVocabMemoryBound(t *testing.T) {
	var b strings.Builder
	for i := range 12_000 {
		fmt.Fprintf(&b, "w%d NN B-NP\nx%d VB B-VP\n\n", i, i)
	}
	path := filepath.Join(t.TempDir(), "many.txt")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := Builtin("chunking")
	if err != nil {
		t.Fatal(err)
	}
	opts := RunOptions{Templates: set, MemoryBudget: 40 << 20}
	_, err = Run(context.Background(), pipeline.Source{Path: path}, io.Discard, opts)
	var se *SyntaxError
	if !errors.As(err, &se) || se.Line <= 0 || !strings.Contains(err.Error(), "the attribute vocabulary has grown to ") ||
		!strings.Contains(err.Error(), "more than the RunOptions.MemoryBudget 40.0 MiB allows") {
		t.Fatalf("a vocabulary over 40 MiB: %v", err)
	}
	opts.MachineMemory = true
	if _, err := Run(context.Background(), pipeline.Source{Path: path}, io.Discard, opts); err == nil ||
		!strings.Contains(err.Error(), "of memory this machine has") {
		t.Fatalf("over the machine's memory: %v", err)
	}
	for _, budget := range []int64{1 << 30, 0} {
		opts.MemoryBudget = budget
		if _, err := Run(context.Background(), pipeline.Source{Path: path}, io.Discard, opts); err != nil {
			t.Fatalf("budget %d: %v", budget, err)
		}
	}
}
