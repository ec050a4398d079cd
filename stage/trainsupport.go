package stage

// Train's policies around the solver: the memory estimate and the place of
// the duals, the checkpoint directories' locks, the held-out validator.

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"math"
	"os"
	"strings"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/decode"
	"github.com/dualcrf/dualcrf/duals"
	"github.com/dualcrf/dualcrf/featurize"
	"github.com/dualcrf/dualcrf/internal/platform"
	"github.com/dualcrf/dualcrf/train"
)

// checkMemory estimates what the run needs in memory and refuses it, with
// the figure and the options that help, when that exceeds MemoryBudget
// (default: physical memory). It decides where SDCA's duals go (r.place):
// with Duals auto, in memory when the whole estimate fits the budget
// (default: half of physical memory), else streamed in blocks sized from
// the budget (streamLayout). It fills in r.plan from the problem's shape
// (the loaded problem's, or a dry run's pass over the table).
func (r *trainer) checkMemory(shape train.Shape) error {
	o := r.o
	d := shape.Data
	limit, what, autoLimit := o.MemoryBudget, "{MemoryBudget}", o.MemoryBudget
	phys, perr := platform.PhysicalMemory()
	if limit == 0 && perr == nil {
		limit, what, autoLimit = phys, "physical memory", phys/2
	}
	// A streamed store's block layout decides the trajectory (a block's
	// steps are drawn from it): it is planned as for planCores workers on
	// as many cores, so that it follows the budget and the data and not
	// the machine or --workers (up to planCores; a budget too tight for
	// more takes smaller blocks, below). Only the rounds stream.
	planMethod := o.Method
	if sd, ok := o.Method.(*train.SDCA); ok {
		if kind, _, R := sd.Schedule(d.Len()); kind == train.ScheduleRounds {
			planMethod = &train.SDCA{Workers: planCores, RoundSize: R}
		}
	}
	extra := int64(0)
	if o.Valid != nil {
		extra = tableBytes(o.Valid.Data)
	}
	estimate := func(inMemory bool, stream int64) train.MemoryEstimate {
		return train.EstimateShape(shape, train.MemoryOptions{Method: o.Method, DualsInMemory: inMemory, StreamBytes: stream,
			ExtraHeap: extra, L1: r.o.l1(d.Len()) > 0})
	}
	planEstimate := func(stream int64) train.MemoryEstimate {
		return train.EstimateShape(shape, train.MemoryOptions{Method: planMethod, Workers: planCores, StreamBytes: stream,
			ExtraHeap: extra})
	}
	r.place = o.Duals.Place
	if !descriptionOf(o.Method).DualsOnDisk {
		r.place = DualsMemory // BCFW's duals are in memory too
	}
	if r.place == DualsAuto {
		r.place = DualsStream
		if autoLimit == 0 || estimate(true, 0).Total() <= autoLimit {
			r.place = DualsMemory
		}
	}
	var est train.MemoryEstimate
	switch r.place {
	case DualsStream:
		budget := o.MemoryBudget
		if budget == 0 {
			budget = autoLimit
		}
		rest := planEstimate(1).Total() - 1 // all but the block buffers
		// Slots are blocks rounded up to 4096 bytes: round down here. A
		// store of more than one block holds SDCA's working set besides
		// its block buffers.
		// The working set gets fewer slots (or none) where the blocks
		// reach their smallest size before it fits.
		plan := func(held int) (int, int64) {
			// held < 0: no working set, the block buffers alone (they
			// were planned as one slot fewer: a plan of larger blocks
			// than fit, refused where smaller ones would have run).
			slots := int64(duals.StreamBuffers + max(held, 0))
			r.streamOpts = duals.StreamOptions{BlockBytes: max((budget-rest)/slots/4096*4096, minBlockBytes),
				HeldSlots: max(held, -1), Precision: r.precision()}
			if o.Checkpoint != "" {
				r.streamOpts.Spare = duals.DefaultSpare
			}
			blocks, slot, _ := duals.StreamLayout(d, r.streamOpts)
			return blocks, slot
		}
		held := 0
		blocks, slot := plan(-1)
		if blocks > 1 {
			for held = duals.StreamHeldSlots; held > 0; held-- {
				if blocks, slot = plan(held); planEstimate(int64(duals.StreamBuffers+held)*slot).Total() <= budget {
					break
				}
			}
			if held == 0 {
				blocks, slot = plan(-1)
			}
		}
		est = planEstimate(int64(duals.StreamBuffers+max(held, 0)) * slot)
		// A plan of one block holds the duals whole, which can exceed the
		// blocks planned: smaller blocks then, while they are refused.
		for est.Total() > budget && r.streamOpts.BlockBytes > minBlockBytes {
			r.streamOpts.BlockBytes = max(r.streamOpts.BlockBytes*3/4/4096*4096, minBlockBytes)
			blocks, slot, _ = duals.StreamLayout(d, r.streamOpts)
			est = planEstimate(int64(duals.StreamBuffers+max(held, 0)) * slot)
		}
		est = estimate(false, int64(duals.StreamBuffers+max(held, 0))*slot)
		// A budget too tight for the scratch of the workers and of the
		// passes on every core beside the blocks planned takes smaller
		// blocks: another layout (a resume names the block count).
		for est.Total() > budget && r.streamOpts.BlockBytes > minBlockBytes {
			r.streamOpts.BlockBytes = max(r.streamOpts.BlockBytes*15/16/4096*4096, minBlockBytes)
			blocks, slot, _ = duals.StreamLayout(d, r.streamOpts)
			est = estimate(false, int64(duals.StreamBuffers+max(held, 0))*slot)
		}
		r.streamBlocks = blocks
	default:
		est = estimate(r.place == DualsMemory && train.Reads(o.Method, train.RunDuals), 0)
	}
	r.plan = r.newPlan(shape, est, limit, what)
	if limit == 0 || est.Total() <= limit {
		return nil
	}
	var help []string
	switch {
	case est.LBFGS > 0:
		help = append(help, fmt.Sprintf("a smaller {LBFGS.Store} (its history takes %s)", byteSize(est.LBFGS)))
	case r.place == DualsMemory && descriptionOf(o.Method).DualsOnDisk:
		// Only SDCA streams or maps its duals (BCFW keeps them in memory;
		// OEG's and SAG's state is not duals).
		help = append(help, fmt.Sprintf("{Duals} stream or {Duals} auto (streamed from disk in blocks), or {Duals} PATH (the duals take %s)", byteSize(est.Duals)))
	}
	if o.FeatureSpace == AllPairs {
		help = append(help, "{FeatureSpace} observed")
	}
	help = append(help, "{MemoryBudget} SIZE if more memory is available (e.g. swap)")
	return &OptionError{Msg: fmt.Sprintf("train: this run needs about %s in memory (%s), more than the %s %s; try %s",
		byteSize(est.Total()), est, what, byteSize(limit), strings.Join(help, ", or "))}
}

// planCores is the number of cores and of workers a streamed store's
// block layout is planned for (checkMemory): the same budget gives the
// same layout, and so the same model, on up to planCores cores and
// workers.
const planCores = 8

// tableBytes is about the memory a loaded feature table's rows take (as
// train.Shape counts a training table's).
func tableBytes(d *crf.Dataset) int64 {
	b := 12*int64(d.NumTokens()) + 4*int64(len(d.Attrs)) + 8*int64(d.Len()+1)
	if d.Values != nil {
		b += 8 * int64(len(d.Values))
	}
	return b
}

// minBlockBytes is the smallest block a streamed store is given, however
// small the budget: smaller blocks only add I/O requests.
const minBlockBytes = 1 << 20

// precision returns the precision of the run's duals: the method's
// (train.DualsPrecision: SDCA's DualPrecision, default
// duals.DefaultPrecision); float64 for the other methods.
func (r *trainer) precision() duals.Precision {
	if m, ok := r.o.Method.(train.DualsPrecision); ok {
		return m.Precision()
	}
	return duals.Float64
}

// dualStore places SDCA's duals in a memory-mapped file (Duals PATH),
// announcing the choice. An existing file of this dataset is reused when
// it keeps the run's precision.
func (r *trainer) dualStore() (*duals.File, error) {
	d := r.t.Data
	path := r.o.Duals.Path
	prec := r.precision()
	fs, err := duals.CreateFile(path, d, prec)
	if err != nil && errors.Is(err, iofs.ErrExist) {
		fs, err = duals.OpenFile(path, d) // reuse a file of this dataset
		if err == nil && fs.Precision() != prec {
			fs.Close()
			return nil, &OptionError{Field: "Duals", Value: path, Msg: fmt.Sprintf("%s holds %s duals, this run keeps %s ones: remove it, give another file, or {SDCA.DualPrecision} %s",
				path, fs.Precision(), prec, fs.Precision())}
		}
	}
	return fs, err
}

// streamStore places SDCA's duals in a streamed file: PATH of stream:PATH,
// else duals.stream in the checkpoint directory (kept: snapshots refer to
// it), else a temporary file in the system's temporary directory (unlinked
// once open). A resumed run opens the existing file.
func (r *trainer) streamStore() (*duals.Stream, error) {
	d := r.t.Data
	path, temporary := r.o.Duals.File(r.o.Checkpoint), false
	if path == "" {
		tf, err := os.CreateTemp("", ".duals-*.stream")
		if err != nil {
			return nil, err
		}
		path, temporary = tf.Name(), true
		tf.Close()
	}
	var s *duals.Stream
	var err error
	if r.o.Resume != "" {
		s, err = duals.OpenStream(path, d, r.streamOpts)
	} else {
		s, err = duals.CreateStream(path, d, r.streamOpts)
	}
	if temporary {
		os.Remove(path) // the open file keeps its data: nothing is left behind, even after kill -9
	}
	if err != nil {
		return nil, err
	}
	direct := "O_DIRECT"
	if !s.Direct() {
		direct = "buffered, sequential advice"
	}
	_, slot, size := duals.StreamLayout(d, r.streamOpts)
	held := ""
	if room := s.HeldRoom(); room > 0 {
		held = fmt.Sprintf(", %s of working set", byteSize(room))
	}
	r.logf("train: duals %s streamed from %s in %d blocks (slots of %s, %d spare; %s file; %s): %s of block buffers%s",
		byteSize(duals.Bytes(d, s.Precision())), path, s.Blocks(), byteSize(slot), r.streamOpts.Spare, byteSize(size), direct,
		byteSize(duals.StreamBuffers*slot), held)
	return s, nil
}

// lockDirs takes the lock of the checkpoint directory (creating it: an
// unusable path fails here, before any work) and of the resume directory
// when that is another one (it must exist).
func lockDirs(checkpoint, resume string) (func(), error) {
	var locks []*train.DirLock
	unlock := func() {
		for _, l := range locks {
			l.Unlock()
		}
	}
	if resume != "" {
		st, err := os.Stat(resume)
		if err != nil {
			return unlock, &OptionError{Field: "Resume", Msg: err.Error()}
		}
		if !st.IsDir() {
			return unlock, &OptionError{Field: "Resume", Value: resume, Msg: "not a directory"}
		}
	}
	if checkpoint != "" {
		l, err := train.LockDir(checkpoint)
		if err != nil {
			return unlock, err
		}
		locks = append(locks, l)
	}
	if resume != "" && !sameDir(resume, checkpoint) {
		l, err := train.LockDir(resume)
		if err != nil {
			unlock()
			return func() {}, err
		}
		locks = append(locks, l)
	}
	return unlock, nil
}

// sameDir reports whether a and b are the same existing directory.
func sameDir(a, b string) bool {
	if b == "" {
		return false
	}
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// validator reads the held-out table and returns a function scoring
// weights on it (token accuracy, and chunk F1 when its labels look like
// chunks). The table must have been featurized with the training table's
// templates, feat.
func (r *trainer) validator(feat *featurize.TemplateSet) (func([]float64) (map[string]float64, error), error) {
	vt, path := r.o.Valid, r.o.ValidName
	vfeat, err := checkFeaturization(vt.Metadata, path)
	if err != nil {
		return nil, &OptionError{Field: "Valid", Msg: err.Error()}
	}
	if a, b := templateText(vfeat), templateText(feat); a != b {
		return nil, &OptionError{Field: "Valid", Value: path, Msg: fmt.Sprintf("was featurized with templates %.60q, the training table with %.60q: "+
			"featurize it with the training table's templates and input format, or like a model of this data", a, b)}
	}
	trainData := r.t.Data
	lay := crf.Layout{NumAttrs: trainData.NumAttrs, NumLabels: trainData.NumLabels}
	probe := &crf.Model{Layout: lay, AttrNames: trainData.AttrNames, LabelNames: trainData.LabelNames}
	vd := decode.Apply(vt.Data, decode.Remap(probe, vt.Data), lay.NumAttrs, trainData.AttrNames)
	if len(vd.Attrs) == 0 && len(vt.Data.Attrs) > 0 {
		return nil, &OptionError{Field: "Valid", Value: path, Msg: "shares no attribute with the training table"}
	}
	return func(w []float64) (map[string]float64, error) {
		// The weights in the training layout, sparse or not: decoding
		// scores either (the model is never written).
		m := &crf.Model{Layout: r.p.Layout, Weights: w, AttrNames: trainData.AttrNames, LabelNames: trainData.LabelNames}
		p, err := decode.Decode(context.Background(), m, vd, decode.Options{})
		if err != nil {
			return nil, err
		}
		ev := decode.NewEvaluator(decode.EvalOptions{})
		if err := decode.Score(vd, m.LabelNames, p, ev); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		s := ev.Result()
		out := map[string]float64{train.MetricAccuracy: s.Accuracy}
		if s.Chunks != nil && !math.IsNaN(s.Chunks.F1) {
			out[train.MetricF1] = s.Chunks.F1
		}
		return out, nil
	}, nil
}

// templateText is the templates a table records, "" when none.
func templateText(set *featurize.TemplateSet) string {
	if set == nil {
		return ""
	}
	return set.String()
}

// byteSize renders a byte count as the messages show it.
func byteSize(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%d B", b)
}
