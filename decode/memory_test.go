package decode

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/crf/crftest"
	"github.com/dualcrf/dualcrf/tables"
)

// longSentence is a random model of K labels and a table of sentences of
// the given lengths.
func longSentence(seed uint64, K int, lengths ...int) (*crf.Model, *tables.FeatureTable) {
	rng := rand.New(rand.NewPCG(seed, 3))
	const A = 20
	lay := crf.Layout{NumAttrs: A, NumLabels: K}
	names := make([]string, K)
	for y := range names {
		names[y] = fmt.Sprintf("L%d", y)
	}
	attrs := make([]string, A)
	for a := range attrs {
		attrs[a] = fmt.Sprintf("a%d", a)
	}
	m := &crf.Model{Layout: lay, Weights: crftest.RandomWeights(rng, lay, 1), AttrNames: attrs, LabelNames: names}
	d := &crf.Dataset{NumAttrs: A, NumLabels: K, AttrNames: attrs, LabelNames: names, AttrStart: []int{0}}
	for _, T := range lengths {
		d.SentStart = append(d.SentStart, len(d.Labels))
		for range T {
			d.Attrs = append(d.Attrs, int32(rng.IntN(A)), int32(rng.IntN(A)))
			d.AttrStart = append(d.AttrStart, len(d.Attrs))
			d.Labels = append(d.Labels, -1)
		}
	}
	d.SentStart = append(d.SentStart, len(d.Labels))
	return m, &tables.FeatureTable{Data: d}
}

// allocated runs f and returns the bytes it allocated on the heap.
func allocated(f func()) int64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return int64(after.TotalAlloc - before.TotalAlloc)
}

// TestNBestRefusedOverBudget: n-best decoding of a sentence whose lists
// exceed the budget is refused before they are allocated, saying what was
// asked, what it needs, what the budget allows and the largest n that
// fits (formerly 16·T·K·n bytes were allocated at once, whatever their
// size: a fatal out-of-memory). The suggested n fits and one more does
// not.
func TestNBestRefusedOverBudget(t *testing.T) {
	m, tab := longSentence(1, 22, 600)
	tab.FirstSentence, tab.Lines = 4, []int{17}
	opts := Options{NBest: 1000, MemoryBudget: 100 << 20, Workers: 1}
	var p *tables.Predictions
	var err error
	alloc := allocated(func() { p, err = decodeFeatureTable(context.Background(), m, tab, opts) })
	if !errors.Is(err, ErrMemory) {
		t.Fatalf("decoded 600 tokens × 22 labels × 1000 labellings (lists of %d MiB) within 100 MiB: %v, %d labellings", 16*600*22*1000>>20, err, len(p.Alternatives))
	}
	if alloc > 20<<20 {
		t.Errorf("allocated %d MiB before refusing", alloc>>20)
	}
	want := "decode: sentence 5 (line 17, 600 tokens, 22 labels) with DecodeOptions.NBest 1000 needs about "
	pl, c := newPlanner(m, opts, false), sizeOf(tab)
	if msg := err.Error(); !strings.HasPrefix(msg, want) || !strings.Contains(msg, "in memory to decode ("+pl.need(c, 1, 1000).String()+")") ||
		!strings.Contains(msg, "more than the DecodeOptions.MemoryBudget 100.0 MiB allows; try DecodeOptions.NBest ") ||
		!strings.HasSuffix(msg, "(the most that fits), or DecodeOptions.MemoryBudget SIZE if more memory is available") {
		t.Fatalf("message:\n%s\nwant it to start %q", msg, want)
	}
	var k int
	if _, err := fmt.Sscanf(err.Error()[strings.Index(err.Error(), "try DecodeOptions.NBest ")+len("try DecodeOptions.NBest "):], "%d", &k); err != nil {
		t.Fatal(err)
	}
	if k < 1 || k >= 1000 || pl.need(c, 1, k).total() > opts.MemoryBudget || pl.need(c, 1, k+1).total() <= opts.MemoryBudget {
		t.Fatalf("suggested --nbest %d: needs %d, and %d needs %d, budget %d", k, pl.need(c, 1, k).total(), k+1, pl.need(c, 1, k+1).total(), opts.MemoryBudget)
	}
	opts.NBest = k
	if p, err := decodeFeatureTable(context.Background(), m, tab, opts); err != nil || len(p.Alternatives[0]) != k-1 {
		t.Fatalf("the suggested --nbest %d: %v", k, err)
	}
}

// TestEstimateCoversAllocations: what decoding a sentence allocates is at
// most what the estimate says its worker and predictions hold (before the
// garbage collector's headroom), and not far below it: the estimate is an
// upper bound that means something.
func TestEstimateCoversAllocations(t *testing.T) {
	for _, tc := range []struct {
		lengths []int
		opts    Options
	}{
		{[]int{300}, Options{NBest: 200}},
		{[]int{300}, Options{NBest: 50, Marginals: true, ChunkConfidence: true}},
		{[]int{2000}, Options{Marginals: true}},
		{[]int{7}, Options{NBest: 300, Marginals: true}},
		{[]int{1500}, Options{NBest: 20, ChunkConfidence: true}},
	} {
		tc.opts.Workers = 1
		m, tab := longSentence(2, 12, tc.lengths...)
		pl, c := newPlanner(m, tc.opts, false), sizeOf(tab)
		need := pl.need(c, 1, tc.opts.NBest)
		held := need.lattices + need.nbest + need.predictions
		runtime.GC()
		alloc := allocated(func() {
			if _, err := decodeFeatureTable(context.Background(), m, tab, tc.opts); err != nil {
				t.Fatal(err)
			}
		})
		if alloc > held || alloc < held/3 {
			t.Errorf("%v %+v: allocated %d bytes, the estimate of lattices, n-best lists and predictions is %d (%s)", tc.lengths, tc.opts, alloc, held, need)
		}
	}
}

// TestFewerWorkersToFit: a chunk that fits the budget on one worker but
// not on two is decoded on one, with the same output as without a budget.
func TestFewerWorkersToFit(t *testing.T) {
	lengths := make([]int, 200)
	for i := range lengths {
		lengths[i] = 5 + i%7
	}
	lengths[10], lengths[150] = 800, 800
	m, tab := longSentence(3, 10, lengths...)
	opts := Options{NBest: 40, Marginals: true, Workers: 2}
	pl, c := newPlanner(m, opts, false), sizeOf(tab)
	one, two := pl.need(c, 1, 40).total(), pl.need(c, 2, 40).total()
	if one >= two {
		t.Fatalf("one worker needs %d, two %d", one, two)
	}
	opts.MemoryBudget = (one + two) / 2
	pl.opts = opts
	if w, err := pl.plan(tab, 0); w != 1 || err != nil {
		t.Fatalf("plan: %d workers, %v; want 1", w, err)
	}
	got, err := decodeFeatureTable(context.Background(), m, tab, opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.MemoryBudget = 0
	want, err := decodeFeatureTable(context.Background(), m, tab, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Labels, want.Labels) || !slices.Equal(got.Confidence, want.Confidence) || !slices.Equal(got.LogProb, want.LogProb) {
		t.Fatal("the output under the budget differs")
	}
	for i := range got.Alternatives {
		for r := range got.Alternatives[i] {
			if !slices.Equal(got.Alternatives[i][r].Labels, want.Alternatives[i][r].Labels) {
				t.Fatalf("sentence %d rank %d differs", i, r+2)
			}
		}
	}
}

// TestChunkTooLargeSaysChunkTokens: a chunk whose predictions (many
// alternatives of many sentences) exceed the budget, while its longest
// sentence alone fits, is refused suggesting a smaller chunk.
func TestChunkTooLargeSaysChunkTokens(t *testing.T) {
	lengths := make([]int, 3000)
	for i := range lengths {
		lengths[i] = 20
	}
	m, tab := longSentence(4, 6, lengths...)
	opts := Options{NBest: 100, Marginals: true, ChunkConfidence: true, Workers: 1}
	pl := newPlanner(m, opts, true)
	c := sizeOf(tab)
	one := chunkSize{tokens: 20, sentences: 1, lengths: []int{20}}
	opts.MemoryBudget = (pl.need(one, 1, 100).total() + pl.need(c, 1, 100).total()) / 2
	pl.opts = opts
	_, err := pl.plan(tab, 0)
	if !errors.Is(err, ErrMemory) || !strings.HasPrefix(err.Error(), "the chunk of sentences 1–3000 (60000 tokens; the longest, sentence 1: 20 tokens, 6 labels) with DecodeOptions.NBest 100 needs") ||
		!strings.Contains(err.Error(), "a smaller DecodeOptions.ChunkTokens (it reads 60000 tokens at a time)") {
		t.Fatalf("got %v", err)
	}
}

// TestCheckModelRefusesHugeLabelSets: a model whose labels alone need more
// than the budget per worker (a model file may declare 16,384 labels:
// 10 GiB of K×K arrays per worker) is refused before any input is read,
// without allocating them; MachineMemory names the machine's memory.
func TestCheckModelRefusesHugeLabelSets(t *testing.T) {
	K := 4000
	m := &crf.Model{Layout: crf.Layout{NumLabels: K}, LabelNames: make([]string, K)}
	var err error
	alloc := allocated(func() { err = Options{MemoryBudget: 256 << 20, MachineMemory: true}.CheckModel(m) })
	if !errors.Is(err, ErrMemory) || !strings.HasPrefix(err.Error(), "a model of 4000 labels needs about 1.") ||
		!strings.Contains(err.Error(), "more than the 256.0 MiB of memory this machine has (physical memory, or the cgroup's limit) allows") {
		t.Fatalf("got %v", err)
	}
	if alloc > 1<<20 {
		t.Errorf("allocated %d bytes", alloc)
	}
	if err := (Options{MemoryBudget: 8 << 30}).CheckModel(m); err != nil {
		t.Fatalf("within 8 GiB: %v", err)
	}
	if err := (Options{}).CheckModel(m); err != nil {
		t.Fatalf("without a budget: %v", err)
	}
}

// TestCheckModelRefusesHugeChunks: chunks of more tokens than can be in
// flight within the budget are refused before the first is read (a chunk
// is read whole before its needs can be estimated).
func TestCheckModelRefusesHugeChunks(t *testing.T) {
	m, _ := longSentence(5, 10, 1)
	o := Options{MemoryBudget: 1 << 30, ChunkTokens: 1_000_000_000}
	err := o.CheckModel(m)
	if !errors.Is(err, ErrMemory) || !strings.HasPrefix(err.Error(), "DecodeOptions.ChunkTokens 1000000000: chunks of that many tokens need at least ") ||
		!strings.Contains(err.Error(), "try a smaller DecodeOptions.ChunkTokens") {
		t.Fatalf("got %v", err)
	}
	o.ChunkTokens = 65536
	if err := o.CheckModel(m); err != nil {
		t.Fatalf("the default chunk: %v", err)
	}
	o.NBest, o.ChunkTokens = 1000, 4_000_000 // 16 GB of n-best labels in flight
	if err := o.CheckModel(m); !errors.Is(err, ErrMemory) {
		t.Fatalf("n-best chunks of 4 M tokens: %v", err)
	}
	if err := (Options{ChunkTokens: -1}).Check(); err == nil {
		t.Fatal("ChunkTokens -1 accepted")
	}
}
