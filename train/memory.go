package train

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/dualcrf/dualcrf/duals"
)

// MemoryOptions describe a run for EstimateMemory.
type MemoryOptions struct {
	Solver        string // "sdca", "lbfgs", "oeg", "sag" or "bcfw" (counted as SDCA: the same duals, weights and rows)
	DualsInMemory bool   // SDCA: μ in memory (else memory-mapped, paged by the kernel)
	LBFGSStore    int    // L-BFGS correction pairs; 0: DefaultLBFGSStore
	Workers       int    // goroutines of a full pass; 0: GOMAXPROCS
	// SDCAWorkers is the number of workers of a parallel SDCA
	// ((*SDCA).NumWorkers); each has its own view of the weights and
	// scratch. 0 or 1: the sequential SDCA.
	SDCAWorkers int
	// StreamBytes is the memory of a streamed store's block buffers
	// (duals.StreamBuffers × its slot size), when the duals are streamed.
	StreamBytes int64
}

// MemoryEstimate is what a training run needs in memory, in bytes, by part.
type MemoryEstimate struct {
	Dataset int64 // the loaded feature table and SDCA's per-sentence indexes
	Weights int64 // w, ŵ(μ), the gold features, masks, the result, parallel SDCA's views
	Duals   int64 // μ, when in memory, or the block buffers, when streamed; OEG's potentials and cached sums; SAG's stored marginal sums
	LBFGS   int64 // L-BFGS's history (2·store vectors) and its other vectors
	Scratch int64 // per-worker scratch of a certificate or gradient pass
	// GC is the garbage collector's headroom: with GOGC=100 the Go heap
	// grows to about twice what is live before a collection, and the
	// memory it frees stays resident. The duals in memory live outside
	// the heap (duals.Memory) where the system allows.
	GC int64
	// Runtime is the program's code and the Go runtime's own memory.
	Runtime int64
}

// runtimeBytes is about what a dualcrf process holds before its data: its
// code and the Go runtime.
const runtimeBytes = 24 << 20

// Total is the sum of the parts.
func (e MemoryEstimate) Total() int64 {
	return e.Dataset + e.Weights + e.Duals + e.LBFGS + e.Scratch + e.GC + e.Runtime
}

// String lists the non-zero parts.
func (e MemoryEstimate) String() string {
	var parts []string
	for _, p := range []struct {
		name string
		b    int64
	}{{"duals", e.Duals}, {"L-BFGS history", e.LBFGS}, {"weights", e.Weights}, {"dataset", e.Dataset},
		{"pass scratch", e.Scratch}, {"GC headroom", e.GC}, {"runtime", e.Runtime}} {
		if p.b > 0 {
			parts = append(parts, fmt.Sprintf("%s %.3g GiB", p.name, float64(p.b)/(1<<30)))
		}
	}
	return strings.Join(parts, ", ")
}

// EstimateMemory estimates the memory a run on p needs, before it starts,
// from the sizes of its parts: d = p.Layout.Dim() weights of 8 bytes, the
// duals Σ_i (T_i−1)·K² of 8 bytes, L-BFGS's 2·store vectors (of the free
// weights with a Mask: freeSpace), a pass's scratch per worker, the
// dataset's arrays, the garbage collector's headroom over all of it but the
// duals, and the runtime.
func EstimateMemory(p *Problem, o MemoryOptions) MemoryEstimate {
	d := p.Data
	dim := int64(p.Layout.Dim())
	K := int64(p.Layout.NumLabels)
	workers := int64(o.Workers)
	if workers <= 0 {
		workers = int64(runtime.GOMAXPROCS(0))
	}
	tokens, occ, n := int64(d.NumTokens()), int64(len(d.Attrs)), int64(d.Len())
	maxT := int64(0)
	for i := 0; i < d.Len(); i++ {
		maxT = max(maxT, int64(d.SentStart[i+1]-d.SentStart[i]))
	}
	e := MemoryEstimate{Runtime: runtimeBytes}
	// Labels (4), AttrStart (8) per token; Attrs (4) and Values (8) per
	// occurrence; SentStart (8) per sentence; about 48 bytes per attribute name.
	e.Dataset = 12*tokens + 12*occ + 8*n + 48*int64(d.NumAttrs)
	if d.Values == nil {
		e.Dataset -= 8 * occ
	}
	// The lattice scratch of a pass: a few T×K² blocks per worker.
	e.Scratch = workers * 4 * maxT * K * K * 8
	if int64(len(p.Mask)) > 0 {
		e.Weights += int64(len(p.Mask))
	}
	heapDuals := int64(0) // state kept on the Go heap, counted in Duals
	switch o.Solver {
	case "oeg":
		// w, the gold features it starts from, ŵ(μ) of a certificate, the
		// result, the step's direction; the rows and slots; the potentials
		// (off the heap, as SDCA's duals) and the cached marginal sums and
		// entropies (on it).
		e.Weights += 5 * dim * 8
		e.Dataset += 8*occ + 48*n
		heapDuals = OEGBytes(d) - duals.Bytes(d)
		e.Duals = OEGBytes(d)
	case "sag":
		// v, d, the step's gradient, the weights asked for, a certificate's
		// copy, the gold features; a gradient pass's total and per-worker
		// sums; the rows and slots; the stored marginal sums (on the heap).
		e.Weights += 6 * dim * 8
		e.Scratch += (workers + 1) * dim * 8
		e.Dataset += 8*occ + 48*n
		heapDuals = SAGBytes(d)
		e.Duals = heapDuals
	case "lbfgs":
		store := int64(o.LBFGSStore)
		if store <= 0 {
			store = DefaultLBFGSStore
		}
		if p.Mask != nil {
			e.lbfgsFree(p, store, workers)
			break
		}
		// gonum keeps s and y for every pair, and about eight more vectors
		// (x, gradient, direction, the accepted point and its gradient, …).
		e.LBFGS = (2*store + 8) * dim * 8
		e.Weights += 2 * dim * 8 // the result and the gold features
		e.Scratch += (workers + 1) * dim * 8
	default:
		// w, ŵ(μ) (with the gold features it starts from), the result.
		e.Weights += 4 * dim * 8
		if p.L1 > 0 && o.StreamBytes > 0 {
			e.Weights += dim * 8 // the elastic net's whole primal point for a streamed run's gap refreshes
		}
		// SDCA's per-sentence rows and slots, the sampler's trees.
		e.Dataset += 8*occ + 48*n
		if P := int64(o.SDCAWorkers); P > 1 {
			// The ordered scheduler: per slot of a round (of the default
			// length) a step's scratch, per worker the bins' table, and a
			// mark per sentence.
			R := P * max(1, DefaultRoundSize/P)
			e.Scratch += R*4*maxT*K*K*8 + P*binCopies*binStride*(binKeys+1)*8
			e.Dataset += 8 * n
		}
		if o.DualsInMemory {
			e.Duals = duals.Bytes(d)
		} else if o.StreamBytes > 0 {
			e.Duals = o.StreamBytes
			e.Dataset += 8 * n // the sampler's gap state handed to the block draws
		}
	}
	e.GC = e.Dataset + e.Weights + e.LBFGS + e.Scratch + heapDuals
	if !duals.OffHeap {
		e.GC += e.Duals - heapDuals
	}
	return e
}

// lbfgsFree fills in L-BFGS's parts on the compact vector of the free
// weights (freeSpace).
func (e *MemoryEstimate) lbfgsFree(p *Problem, store, workers int64) {
	d := p.Data
	K, A := int64(p.Layout.NumLabels), int64(p.Layout.NumAttrs)
	c, free := int64(freeDim(p, dotLanes())), int64(p.FreeWeights())
	// gonum's s and y per pair; the line search's x and direction, LBFGS's
	// x and gradient, the location's point and gradient; ours: the
	// accepted point and its gradient, the gold features.
	e.LBFGS = (2*store + 9) * c * 8
	// The dense weights a certificate owns and those Weights fills (the
	// driver holds one certificate while the next is made); the layout.
	e.Weights += 2*int64(p.Layout.Dim())*8 + 16*free + 8*(A+1)
	// Per worker: the attribute slots and stamps, and the packed rows
	// (weights and gradient) of the largest chunk.
	rows := int64(0)
	for lo := 0; lo < d.Len(); lo += gradChunk {
		hi := min(lo+gradChunk, d.Len())
		rows = max(rows, int64(d.AttrStart[d.SentStart[hi]]-d.AttrStart[d.SentStart[lo]]))
	}
	e.Scratch += workers * (8*A + 2*8*K*(min(rows, A)+K+3) + 4*rows)
}
