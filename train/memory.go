package train

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/duals"
)

// MemoryOptions describe a run for EstimateMemory.
type MemoryOptions struct {
	// Method is the run's method; nil: a new SDCA. A MemorySizer counts
	// its own parts (its weights' copies, its state of every sentence, its
	// scratch); another method counts none beyond the dataset and a
	// pass's scratch.
	Method        Method
	DualsInMemory bool // the duals in memory (else memory-mapped, paged by the kernel)
	Workers       int  // goroutines of a full pass; 0: GOMAXPROCS
	// StreamBytes is the memory of a streamed store's block buffers
	// (duals.StreamBuffers × its slot size), when the duals are streamed.
	StreamBytes int64
	// L1 is set when the objective has an ℓ1 term (Problem.L1 > 0): SDCA
	// then also makes the primal point soft(ŵ(μ), λ₁/λ) whole.
	L1 bool
	// ExtraHeap is memory the caller holds on the Go heap besides the
	// problem during the run (a held-out table, say), in bytes.
	ExtraHeap int64
}

// MemorySizer is a method that counts its own parts of a run's memory
// (EstimateShape): SDCA, BCFW, L-BFGS, OEG and SAG.
type MemorySizer interface {
	Method
	// AddMemory adds to e the method's parts on a problem of shape s, with
	// a full pass on workers goroutines: the copies of the weights it
	// holds, its indexes and state of every sentence, its scratch beyond
	// a pass's lattices. It returns the part of e.Duals on the Go heap.
	AddMemory(e *MemoryEstimate, s Shape, o MemoryOptions, workers int64) (heapDuals int64)
}

// MemoryEstimate is what a training run needs in memory, in bytes, by part.
type MemoryEstimate struct {
	Dataset int64 // the loaded feature table and the per-sentence indexes of the method
	Weights int64 // w, the last certificate's ŵ(μ), the sparse layout's lists or the mask, parallel SDCA's views
	Duals   int64 // μ, when in memory, or the block buffers, when streamed; OEG's potentials and cached sums; SAG's stored marginal sums
	LBFGS   int64 // L-BFGS's history (2·store vectors) and its other vectors
	Scratch int64 // per-worker scratch of a certificate or gradient pass
	// Model is the model's dense weights when they are not the training
	// weights (a sparse layout): made once the duals are released, so
	// they count against the duals, not on top of them.
	Model int64
	// Extra is what the caller holds besides (MemoryOptions.ExtraHeap).
	Extra int64
	// GC is the garbage collector's headroom: GCPercent of the memory on
	// the Go heap, which grows that far past what is live before a
	// collection. The duals (and a streamed store's buffers) live
	// outside the heap (duals.Memory) where the system allows.
	GC int64
	// Runtime is the program's code and the Go runtime's own memory.
	Runtime int64
	// OffHeap is the part of Duals outside the Go heap: the rest of the
	// estimate less Runtime is the heap's (GoHeap).
	OffHeap int64
}

// GCPercent is the garbage collector's target percentage (GOGC) the train
// stage runs with: the heap grows a quarter past what is live before a
// collection, rather than double. Training allocates little once it has
// started, so the collections this costs are few.
const GCPercent = 25

// runtimeBytes is about what a dualcrf process holds besides its data: its
// code (the pages of the binary it touches) and the Go runtime's own
// memory.
const runtimeBytes = 28 << 20

// gcFloor is the least headroom of the heap counted: the runtime's own
// bookkeeping and the fragmentation of its spans.
const gcFloor = 6 << 20

// Total is what the run needs at its peak: the parts, with the model's
// dense weights in place of the training state they are made after.
func (e MemoryEstimate) Total() int64 {
	return e.Dataset + max(e.Weights+e.Duals+e.LBFGS+e.Scratch, e.Model) + e.Extra + e.GC + e.Runtime
}

// GoHeap is the part of the estimate the Go runtime manages (what a
// memory limit of the runtime applies to): all but the code and the
// memory outside the heap.
func (e MemoryEstimate) GoHeap() int64 { return e.Total() - e.Runtime - e.OffHeap }

// String lists the non-zero parts.
func (e MemoryEstimate) String() string {
	var parts []string
	for _, p := range []struct {
		name string
		b    int64
	}{{"duals", e.Duals}, {"L-BFGS history", e.LBFGS}, {"weights", e.Weights}, {"dataset", e.Dataset},
		{"pass scratch", e.Scratch}, {"then the model", e.Model}, {"held-out table", e.Extra}, {"GC headroom", e.GC}, {"runtime", e.Runtime}} {
		if p.b > 0 {
			parts = append(parts, fmt.Sprintf("%s %.3g GiB", p.name, float64(p.b)/(1<<30)))
		}
	}
	return strings.Join(parts, ", ")
}

// Shape is what a memory estimate knows of a problem: its sizes, not its
// rows. A dry run fills it in from a pass over a feature table that keeps
// no row (Problem.Shape from a loaded problem).
type Shape struct {
	// Data has the sentence boundaries (SentStart) and the numbers of
	// attributes and labels; its rows may be absent. The duals' size and
	// a streamed store's blocks are reckoned from it.
	Data        *crf.Dataset
	Tokens      int64
	Occurrences int64 // attribute occurrences
	Values      bool  // the attribute values are stored (some are not 1)
	NameBytes   int64 // the attribute names' bytes
	// Dim is the length of the weight vector; Free the weights not fixed
	// at zero; Index the bytes of the layout's lists or mask.
	Dim, Free, Index int64
	// DenseDim is the length of the model's dense weight vector (Dim when
	// the layout is dense).
	DenseDim int64
	// ChunkOccurrences is the most attribute occurrences of gradChunk
	// consecutive sentences (L-BFGS's packed rows).
	ChunkOccurrences int64
}

// Shape returns p's sizes.
func (p *Problem) Shape() Shape {
	d := p.Data
	s := Shape{Data: d, Tokens: int64(d.NumTokens()), Occurrences: int64(len(d.Attrs)), Values: d.Values != nil,
		Dim: int64(p.Layout.Dim()), Free: int64(p.FreeWeights()), DenseDim: int64(p.Layout.Dense().Dim()),
		Index: int64(len(p.Mask)) + int64(len(p.TransMask))}
	if f := p.Layout.Free; f != nil {
		s.Index += f.Bytes()
	}
	for _, n := range d.AttrNames {
		s.NameBytes += int64(len(n))
	}
	for lo := 0; lo < d.Len(); lo += gradChunk {
		hi := min(lo+gradChunk, d.Len())
		s.ChunkOccurrences = max(s.ChunkOccurrences, int64(d.AttrStart[d.SentStart[hi]]-d.AttrStart[d.SentStart[lo]]))
	}
	return s
}

// EstimateMemory estimates the memory a run on p needs, before it starts
// (EstimateShape of p.Shape()).
func EstimateMemory(p *Problem, o MemoryOptions) MemoryEstimate { return EstimateShape(p.Shape(), o) }

// EstimateShape estimates the memory a run on a problem of shape s needs,
// from the sizes of its parts: the weights (d of 8 bytes, the length of
// the layout: the free pairs only in a sparse one) in the copies the method
// holds, the duals (duals.Bytes at the run's precision), L-BFGS's 2·store vectors (of the free
// weights with a restricted feature space: freeSpace), a pass's scratch per
// worker, the dataset's arrays, the garbage collector's headroom over what
// is on the Go heap (GCPercent), and the runtime.
func EstimateShape(s Shape, o MemoryOptions) MemoryEstimate {
	d := s.Data
	dim := s.Dim
	K, A := int64(d.NumLabels), int64(d.NumAttrs)
	workers := int64(o.Workers)
	if workers <= 0 {
		workers = int64(runtime.GOMAXPROCS(0))
	}
	tokens, occ, n := s.Tokens, s.Occurrences, int64(d.Len())
	maxT := s.maxLen()
	e := MemoryEstimate{Runtime: runtimeBytes, Extra: o.ExtraHeap}
	// Labels (4), AttrStart (8) per token; Attrs (4) and Values (8) per
	// occurrence; SentStart (8) per sentence; per attribute its name and
	// its string header and map entry of the reader.
	e.Dataset = 12*tokens + 4*occ + 8*n + s.NameBytes + 16*A
	if s.Values {
		e.Dataset += 8 * occ
	}
	// The lattice scratch of a pass: a few T×K² blocks per worker (the
	// block loaded from the duals among them).
	e.Scratch = workers * 4 * maxT * K * K * 8
	e.Weights += s.Index
	if s.DenseDim > dim {
		e.Model = s.DenseDim * 8
	}
	m := o.Method
	if m == nil {
		m = &SDCA{}
	}
	heapDuals := int64(0) // state kept on the Go heap, counted in Duals
	if ms, ok := m.(MemorySizer); ok {
		heapDuals = ms.AddMemory(&e, s, o, workers)
	}
	if duals.OffHeap {
		e.OffHeap = e.Duals - heapDuals
	}
	heap := e.Dataset + max(e.Weights+e.LBFGS+e.Scratch+e.Duals-e.OffHeap, e.Model) + e.Extra
	e.GC = heap*GCPercent/100 + gcFloor
	return e
}

// maxLen returns the length of the longest sentence.
func (s Shape) maxLen() int64 {
	d, maxT := s.Data, int64(0)
	for i := 0; i < d.Len(); i++ {
		maxT = max(maxT, int64(d.SentStart[i+1]-d.SentStart[i]))
	}
	return maxT
}

// AddMemory implements MemorySizer: w and the last certificate's ŵ(μ)
// (SDCA makes each certificate in the buffer of the one before); the
// per-sentence rows and slots, the sampler's trees; the ordered
// scheduler's scratch with several workers (NumWorkers); the duals in
// memory (at its Precision) or a streamed store's block buffers.
func (m *SDCA) AddMemory(e *MemoryEstimate, s Shape, o MemoryOptions, workers int64) int64 {
	d := s.Data
	K, n := int64(d.NumLabels), int64(d.Len())
	e.Weights += 2 * s.Dim * 8
	if o.L1 {
		// The elastic net's whole primal point soft(u, τ) (u = ŵ(μ) is the
		// vector the steps move): the model's weights, and a streamed run's
		// gap refreshes.
		e.Weights += s.Dim * 8
	}
	e.Dataset += 8*s.Occurrences + 48*n
	bins := int64(binCopies * binStride * (binKeys + 1) * 8)
	switch kind, w, r := m.Schedule(d.Len()); kind {
	case ScheduleRounds:
		// The rounds (ordered.go): the second copy of the weights; a
		// step's scratch per slot of the four rounds held (nsets); per
		// worker the bins' table; a mark and a slot per sentence.
		P, R := int64(w), int64(r)
		e.Weights += s.Dim * 8
		e.Scratch += nsets*R*4*s.maxLen()*K*K*8 + P*bins
		e.Dataset += 16 * n
	case ScheduleAsyncAtomic, ScheduleAsyncWild:
		// Asynchronous steps: a step's scratch and bins per worker, a
		// flag per sentence.
		e.Scratch += int64(w) * (4*s.maxLen()*K*K*8 + bins)
		e.Dataset += n
	}
	if o.DualsInMemory {
		pr := m.Precision()
		if o.L1 && m.Duals == nil && m.DualPrecision == 0 {
			pr = duals.Float64 // the elastic net's (precisionOn)
		}
		e.Duals = duals.Bytes(d, pr)
	} else if o.StreamBytes > 0 {
		e.Duals = o.StreamBytes
		e.Dataset += 8 * n // the sampler's gap state handed to the block draws
	}
	return 0
}

// AddMemory implements MemorySizer: BCFW holds what the sequential SDCA
// holds with float64 duals (the same duals, weights and rows).
func (m *BCFW) AddMemory(e *MemoryEstimate, s Shape, o MemoryOptions, workers int64) int64 {
	return (&SDCA{Workers: 1, DualPrecision: duals.Float64}).AddMemory(e, s, o, workers)
}

// AddMemory implements MemorySizer: w, the last certificate's ŵ(μ) (each
// made in the buffer of the one before), the step's direction; the rows
// and slots; the potentials (off the heap, as SDCA's duals) and the
// cached marginal sums and entropies (on it).
func (m *OEG) AddMemory(e *MemoryEstimate, s Shape, o MemoryOptions, workers int64) int64 {
	d := s.Data
	e.Weights += 3 * s.Dim * 8
	e.Dataset += 8*s.Occurrences + 48*int64(d.Len())
	e.Duals = OEGBytes(d)
	return OEGBytes(d) - duals.Bytes(d, duals.Float64)
}

// AddMemory implements MemorySizer: v, d, the step's gradient, the weights
// asked for, the last certificate's copy, the gold features of its pass;
// a gradient pass's total and per-worker sums; the rows and slots; the
// stored marginal sums (on the heap).
func (m *SAG) AddMemory(e *MemoryEstimate, s Shape, o MemoryOptions, workers int64) int64 {
	d := s.Data
	e.Weights += 6 * s.Dim * 8
	e.Scratch += (workers + 1) * s.Dim * 8
	e.Dataset += 8*s.Occurrences + 48*int64(d.Len())
	e.Duals = SAGBytes(d)
	return e.Duals
}

// AddMemory implements MemorySizer: gonum's s and y for each of Store
// pairs and about eight more vectors (x, gradient, direction, the accepted
// point and its gradient, …), over the free weights when fewer than all
// are free (lbfgsFree); the result and the gold features; a gradient
// pass's total and per-worker sums.
func (m *LBFGS) AddMemory(e *MemoryEstimate, s Shape, o MemoryOptions, workers int64) int64 {
	store := int64(m.Store)
	if store <= 0 {
		store = DefaultLBFGSStore
	}
	if s.Free < s.DenseDim {
		e.lbfgsFree(s, store, workers)
		return 0
	}
	e.LBFGS = (2*store + 8) * s.Dim * 8
	e.Weights += 2 * s.Dim * 8
	e.Scratch += (workers + 1) * s.Dim * 8
	return 0
}

var (
	_ MemorySizer = (*SDCA)(nil)
	_ MemorySizer = (*BCFW)(nil)
	_ MemorySizer = (*OEG)(nil)
	_ MemorySizer = (*SAG)(nil)
	_ MemorySizer = (*LBFGS)(nil)
)

// lbfgsFree fills in L-BFGS's parts on the compact vector of the free
// weights (freeSpace).
func (e *MemoryEstimate) lbfgsFree(s Shape, store, workers int64) {
	d := s.Data
	K, A := int64(d.NumLabels), int64(d.NumAttrs)
	// The compact vector: the free weights, in lanes (up to 3 more).
	c, free := s.Free+3, s.Free
	// gonum's s and y per pair; the line search's x and direction, LBFGS's
	// x and gradient, the location's point and gradient; ours: the
	// accepted point and its gradient, the gold features.
	e.LBFGS = (2*store + 9) * c * 8
	// The weights a certificate owns and those Weights fills (the driver
	// holds one certificate while the next is made); the free space's
	// dense and compact indexes.
	e.Weights += 2*s.Dim*8 + 16*free + 8*(A+1)
	// Per worker: the attribute slots and stamps, and the packed rows
	// (weights and gradient) of the largest chunk.
	rows := s.ChunkOccurrences
	e.Scratch += workers * (8*A + 2*8*K*(min(rows, A)+K+3) + 4*rows)
}
