package stage

// What a training run costs, said before it starts: the plan Train makes
// (memory by part, where the duals go, the disk it writes, a rough time
// per epoch), the memory policy it runs with, and PlanTrain, the dry run
// that makes the plan from a pass over the table that keeps no row.

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/bits"
	"runtime/debug"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/duals"
	"github.com/dualcrf/dualcrf/tables"
	"github.com/dualcrf/dualcrf/train"
)

// TrainPlan is what a training run costs, decided before it starts.
type TrainPlan struct {
	Table       string // the feature table's name
	Solver      string // as a model records it (Solver)
	State       string // what the method keeps of every sentence (train.StateSizer): "duals"
	Sentences   int
	Tokens      int64
	Attributes  int
	Occurrences int64 // attribute occurrences
	Labels      int
	// Dim is the length of the weight vector the run holds: DenseDim, the
	// model's, or the free weights' count (and the transitions, bias,
	// start and end) where the layout is sparse (Sparse).
	Dim, DenseDim, FreeWeights int64
	Sparse                     bool
	// DualBytes is the size of the duals (SDCA, BCFW) or of OEG's or
	// SAG's per-sentence state, in memory or on disk (0 for L-BFGS, which
	// keeps none); DualEntries the numbers it holds, each of Precision's
	// bytes (SDCA's precision; float64 for the other methods), or for
	// L-BFGS the marginals a pass forms.
	DualBytes   int64
	DualEntries int64
	Precision   duals.Precision
	// Place is where SDCA's duals go; with DualsStream, StreamBlocks
	// blocks in slots of SlotBytes, StreamBuffers + HeldSlots of them in
	// memory.
	Place        Placement
	StreamBlocks int
	SlotBytes    int64
	HeldSlots    int
	// Memory is the estimate by part; Budget what it is checked against,
	// which BudgetFrom names ("{MemoryBudget}" or "physical memory"; 0:
	// unknown, nothing is checked).
	Memory     train.MemoryEstimate
	Budget     int64
	BudgetFrom string
	// GoLimit is the memory limit the run sets on the Go runtime (the
	// budget less the memory outside its heap), and GCPercent its
	// collector's target; 0: left as they are.
	GoLimit   int64
	GCPercent int
	// Disk lists what the run writes besides its model and log.
	Disk []PlanFile
	// ModelBytes is about the size of the model file.
	ModelBytes int64
	// EpochSeconds and CertSeconds are a rough time per epoch and per
	// certificate on one core of a current machine.
	EpochSeconds, CertSeconds float64
}

// PlanFile is a file a run writes besides its outputs.
type PlanFile struct {
	What  string // "streamed duals", "snapshots", …
	Path  string // where ("" when the run picks a temporary file)
	Bytes int64  // at most, at once
}

// The rough costs of a plan (TrainPlan.cost), measured on a 2-core
// x86-64 (AVX2) machine with SDCA on CoNLL-2000 (22 labels) and UD English
// EWT's XPOS (49): a step costs about costEntry per dual entry of its
// sentence (forward–backward, marginals, the line search over the block)
// and costOccurrence per attribute occurrence and label (scores,
// direction, update); a streamed store reads and writes every block once
// an epoch at about diskBandwidth, alongside the steps.
const (
	costEntry      = 3e-9
	costOccurrence = 8e-9
	diskBandwidth  = 1 << 30
)

// cost sets a rough time per epoch and per certificate of a run of the
// plan's sizes: costEntry per dual entry and costOccurrence per attribute
// occurrence and label, each epoch one such pass and a certificate about
// 0.7 of one; a streamed epoch is at least its I/O. A sparse layout does
// about the same work per occurrence (its rows are shorter, but each is a
// gather and a scatter: measured on CoNLL-2000's CRFsuite attributes, its
// epochs take about 1.1× the dense layout's CPU time), so it is costed as
// the dense one.
func (p *TrainPlan) cost() {
	entries := float64(p.DualEntries)
	pass := costEntry*entries + costOccurrence*float64(p.Occurrences)*float64(p.Labels)
	p.EpochSeconds, p.CertSeconds = pass, 0.7*pass
	if p.Place == DualsStream {
		io := 2 * float64(p.DualBytes) / diskBandwidth
		p.EpochSeconds = max(p.EpochSeconds, io)
		p.CertSeconds = max(p.CertSeconds, io/2)
	}
}

// newPlan makes the plan of the run r is about to make, on a problem of
// the given shape, with the estimate est checked against budget (which
// from names).
func (r *trainer) newPlan(shape train.Shape, est train.MemoryEstimate, budget int64, from string) *TrainPlan {
	d := shape.Data
	p := &TrainPlan{Table: r.name, Solver: r.solver, Sentences: d.Len(), Tokens: shape.Tokens, Attributes: d.NumAttrs,
		Occurrences: shape.Occurrences, Labels: d.NumLabels, Dim: shape.Dim, DenseDim: shape.DenseDim, FreeWeights: shape.Free,
		Sparse: shape.Dim < shape.DenseDim && r.o.FeatureSpace == ObservedPairs, Place: r.place, Memory: est,
		Budget: budget, BudgetFrom: from, GCPercent: train.GCPercent}
	if from == "{MemoryBudget}" {
		p.BudgetFrom = r.o.OptionName("MemoryBudget")
	}
	// The method's state of every sentence (train.StateSizer), at the
	// precision it keeps it in; for a method that keeps none, the number
	// of the lattices' entries a pass visits.
	p.Precision = r.precision()
	p.DualEntries = duals.Bytes(d, duals.Float64) / 8
	if ss, ok := r.o.Method.(train.StateSizer); ok {
		var what, form string
		p.DualBytes, what, form = ss.StateBytes(d)
		p.State = what + " (" + form + ")"
		p.DualEntries = p.DualBytes / p.Precision.EntryBytes()
	}
	if budget > 0 {
		p.GoLimit = max(budget-est.OffHeap-est.Runtime, est.GoHeap())
	}
	o := r.o
	switch r.place {
	case DualsStream:
		var size int64
		p.StreamBlocks, p.SlotBytes, size = duals.StreamLayout(d, r.streamOpts)
		p.HeldSlots = max(r.streamOpts.HeldSlots, 0)
		p.Disk = append(p.Disk, PlanFile{"streamed duals", o.Duals.File(o.Checkpoint), size})
	case DualsFile:
		p.Disk = append(p.Disk, PlanFile{"memory-mapped duals", o.Duals.Path, p.DualBytes})
	}
	if o.Checkpoint != "" && train.Reads(o.Method, train.RunCheckpoint) {
		// Each snapshot holds the weights and, unless the duals are
		// streamed (their file is the snapshot's), a copy of the duals;
		// keepSnapshots are kept and one more is written before the
		// oldest goes.
		one := 8 * shape.Dim
		if r.place != DualsStream {
			one += p.DualBytes
		}
		p.Disk = append(p.Disk, PlanFile{"snapshots", o.Checkpoint, 3 * one})
	}
	if o.KeepDuals != "" {
		p.Disk = append(p.Disk, PlanFile{"kept duals", o.KeepDuals, p.DualBytes + 40*int64(d.Len())})
	}
	p.ModelBytes = 8*shape.DenseDim + shape.NameBytes + 16*int64(d.NumAttrs)
	p.cost()
	return p
}

// Write prints the plan, a few lines of text.
func (p *TrainPlan) Write(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "plan: %s: %d sentences, %d tokens, %d attributes (%d occurrences), %d labels; solver %s\n",
		p.Table, p.Sentences, p.Tokens, p.Attributes, p.Occurrences, p.Labels, p.Solver)
	held := "dense"
	if p.Sparse {
		held = fmt.Sprintf("held sparse: %d of the model's %d", p.Dim, p.DenseDim)
	}
	fmt.Fprintf(&b, "plan: weights: %d free (%s)\n", p.FreeWeights, held)
	what := p.State
	switch {
	case what == "":
		b.WriteString("plan: duals: none (the method keeps no state per sentence)\n")
	case p.Place == DualsStream:
		fmt.Fprintf(&b, "plan: %s: %s, streamed from disk in %d blocks (slots of %s; %d block buffers and %d slots of working set in memory)\n",
			what, byteSize(p.DualBytes), p.StreamBlocks, byteSize(p.SlotBytes), duals.StreamBuffers, p.HeldSlots)
	case p.Place == DualsFile:
		fmt.Fprintf(&b, "plan: %s: %s, memory-mapped from a file (paged by the kernel)\n", what, byteSize(p.DualBytes))
	default:
		fmt.Fprintf(&b, "plan: %s: %s, in memory\n", what, byteSize(p.DualBytes))
	}
	fmt.Fprintf(&b, "plan: memory: about %s (%s)", byteSize(p.Memory.Total()), p.Memory)
	switch {
	case p.Budget == 0:
	case p.Memory.Total() <= p.Budget:
		fmt.Fprintf(&b, "; within the %s %s", p.BudgetFrom, byteSize(p.Budget))
	default:
		fmt.Fprintf(&b, "; MORE than the %s %s: the run is refused", p.BudgetFrom, byteSize(p.Budget))
	}
	b.WriteString("\n")
	if p.GoLimit > 0 {
		fmt.Fprintf(&b, "plan: Go heap: collected at %d%% growth, limited to %s\n", p.GCPercent, byteSize(p.GoLimit))
	}
	if len(p.Disk) == 0 {
		fmt.Fprintf(&b, "plan: disk: the model (about %s) and the log only\n", byteSize(p.ModelBytes))
	} else {
		var files []string
		for _, f := range p.Disk {
			where := f.Path
			if where == "" {
				where = "a temporary file"
			}
			files = append(files, fmt.Sprintf("%s %s (%s)", f.What, byteSize(f.Bytes), where))
		}
		fmt.Fprintf(&b, "plan: disk: %s; the model about %s\n", strings.Join(files, ", "), byteSize(p.ModelBytes))
	}
	fmt.Fprintf(&b, "plan: time: roughly %s per epoch and %s per certificate (one core; the load and the machine change it)\n",
		seconds(p.EpochSeconds), seconds(p.CertSeconds))
	_, err := io.WriteString(w, b.String())
	return err
}

// seconds renders a rough duration.
func seconds(s float64) string {
	switch {
	case s < 1:
		return fmt.Sprintf("%.2g s", s)
	case s < 120:
		return fmt.Sprintf("%.0f s", math.Ceil(s))
	}
	return fmt.Sprintf("%.0f min", math.Ceil(s/60))
}

// memoryPolicy sets the Go runtime's collector target and memory limit for
// the run (the plan's GCPercent and GoLimit), unless the program (or the
// GOGC and GOMEMLIMIT variables) set them otherwise, and returns the
// function that puts them back. The heap then grows a quarter, not
// double, past what is live, and never past the budget.
func memoryPolicy(p *TrainPlan) (restore func()) {
	prevGC := debug.SetGCPercent(p.GCPercent)
	if prevGC != 100 {
		debug.SetGCPercent(prevGC) // set by the program: kept
	}
	prevLimit := debug.SetMemoryLimit(-1)
	if p.GoLimit > 0 && prevLimit == math.MaxInt64 {
		debug.SetMemoryLimit(p.GoLimit)
	}
	// The table's reading left freed memory behind: it goes back to the
	// system before the duals take theirs.
	debug.FreeOSMemory()
	return func() {
		debug.SetGCPercent(prevGC)
		debug.SetMemoryLimit(prevLimit)
	}
}

// PlanTrain is Train's dry run: it reads the table in, keeping no row (the
// sentences' lengths, the counts and, for the observed feature space, the
// pairs seen), checks the options, and returns the plan Train would make —
// the memory by part, where the duals go, the disk it writes and a rough
// time per epoch — with the error Train would refuse the run with, if any
// (an *OptionError for memory). It writes nothing.
func PlanTrain(ctx context.Context, in Input, o TrainOptions) (*TrainPlan, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	rr, name, done, err := in.records(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	r := &trainer{o: o.withDefaults(), name: name}
	r.solver = Solver(r.o.Method)
	sc, err := scanShape(ctx, rr, name, r.o)
	if err != nil {
		return nil, err
	}
	switch {
	case sc.labelled == 0:
		return nil, fmt.Errorf("%s: %w", name, ErrUnlabelled)
	case sc.labelled < sc.shape.Tokens:
		return nil, fmt.Errorf("%s: %w: %d of its %d tokens have no gold label", name, train.ErrBadProblem, sc.shape.Tokens-sc.labelled, sc.shape.Tokens)
	}
	if _, err := checkFeaturization(sc.meta, name); err != nil {
		return nil, err
	}
	err = r.checkMemory(sc.shape)
	return r.plan, err
}

// scanned is what scanShape found.
type scanned struct {
	shape    train.Shape
	meta     map[string]string
	labelled int64 // tokens with a gold label
}

// scanShape reads the table of rr chunk by chunk and returns its shape as
// the run of o would hold it: the sentence boundaries, the counts, and
// the weights' layout (the free pairs of the observed feature space
// counted from bit sets of the labels seen with each attribute).
func scanShape(ctx context.Context, rr array.RecordReader, name string, o TrainOptions) (scanned, error) {
	fr, err := tables.NewFeatureReader(rr, name, tables.FeatureReadOptions{SkipText: true})
	if err != nil {
		return scanned{}, err
	}
	d := &crf.Dataset{SentStart: []int{0}}
	var sc scanned
	var seen []uint64 // observed pairs: words bits per attribute
	words := 1
	trans := map[[2]int32]bool{}
	chunkOcc := int64(0) // occurrences of the gradChunk-sentence chunk in progress
	const gradChunk = 64 // train's chunk of a gradient pass
	var names []string   // the attribute names met so far (the chunks share them)
	for fr.Next() {
		if err := ctx.Err(); err != nil {
			return scanned{}, err
		}
		c := fr.Chunk().Data
		names = c.AttrNames
		if c.Values != nil {
			sc.shape.Values = true
		}
		sc.shape.Occurrences += int64(len(c.Attrs))
		for i := 0; i < c.Len(); i++ {
			lo, hi := c.SentStart[i], c.SentStart[i+1]
			if n := d.Len(); n%gradChunk == 0 {
				chunkOcc = 0
			}
			chunkOcc += int64(c.AttrStart[hi] - c.AttrStart[lo])
			sc.shape.ChunkOccurrences = max(sc.shape.ChunkOccurrences, chunkOcc)
			d.SentStart = append(d.SentStart, d.SentStart[len(d.SentStart)-1]+hi-lo)
			for tok := lo; tok < hi; tok++ {
				y := c.Labels[tok]
				if y < 0 {
					continue
				}
				sc.labelled++
				if tok > lo && c.Labels[tok-1] >= 0 {
					trans[[2]int32{c.Labels[tok-1], y}] = true
				}
				if o.FeatureSpace != ObservedPairs {
					continue
				}
				if int(y) >= 64*words { // more labels than the bit sets hold: widen them
					wider := (int(y) + 64) / 64
					grown := make([]uint64, len(seen)/words*wider)
					for a := 0; a < len(seen)/words; a++ {
						copy(grown[a*wider:], seen[a*words:(a+1)*words])
					}
					seen, words = grown, wider
				}
				for _, a := range c.Attrs[c.AttrStart[tok]:c.AttrStart[tok+1]] {
					if need := (int(a) + 1) * words; need > len(seen) {
						seen = append(seen, make([]uint64, need-len(seen))...)
					}
					seen[int(a)*words+int(y)/64] |= 1 << (uint(y) % 64)
				}
			}
		}
	}
	if err := fr.Err(); err != nil {
		return scanned{}, err
	}
	sum := fr.Summary()
	sc.meta = fr.Metadata()
	d.NumAttrs, d.NumLabels = sum.Attributes, len(sum.Labels)
	sc.shape.Data, sc.shape.Tokens = d, int64(sum.Tokens)
	for _, n := range names {
		sc.shape.NameBytes += int64(len(n))
	}
	A, K := int64(d.NumAttrs), int64(d.NumLabels)
	lay := crf.Layout{NumAttrs: d.NumAttrs, NumLabels: d.NumLabels, NoBias: o.NoBias}
	sc.shape.DenseDim = int64(lay.Dim())
	sc.shape.Dim, sc.shape.Free = sc.shape.DenseDim, sc.shape.DenseDim
	if o.FeatureSpace == ObservedPairs {
		pairs := int64(0)
		for _, w := range seen {
			pairs += int64(bits.OnesCount64(w))
		}
		sc.shape.Free -= A*K - pairs
		if train.SparseCheaper(pairs, A, K) {
			sc.shape.Dim -= A*K - pairs
			sc.shape.Index = 8*(A+1) + 4*pairs
		} else {
			sc.shape.Index = A * K
		}
	}
	if o.Transitions == ObservedPairs {
		sc.shape.Free -= K*K - int64(len(trans))
		sc.shape.Index += K * K
	}
	return sc, nil
}
