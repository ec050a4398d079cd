package stage

// Train's policies around the solver: the memory estimate and the place of
// the duals, the checkpoint directories' locks, the held-out validator.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/decode"
	"github.com/dualcrf/dualcrf/duals"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/train"
)

// checkMemory estimates what the run needs in memory and refuses it, with
// the figure and the options that help, when that exceeds MemoryBudget
// (default: physical memory). It decides where SDCA's duals go (r.place):
// with Duals auto, in memory when the whole estimate fits the budget
// (default: half of physical memory), else streamed in blocks sized from
// the budget (streamLayout).
func (r *trainer) checkMemory(dualBytes int64) error {
	o := r.o
	limit, what, autoLimit := o.MemoryBudget, "--memory-budget", o.MemoryBudget
	phys, perr := train.PhysicalMemory()
	if limit == 0 && perr == nil {
		limit, what, autoLimit = phys, "physical memory", phys/2
	}
	workers := (&train.SDCA{Workers: o.Workers}).NumWorkers(r.p.N())
	estimate := func(inMemory bool, stream int64) train.MemoryEstimate {
		return train.EstimateMemory(r.p, train.MemoryOptions{Solver: o.Solver, DualsInMemory: inMemory, LBFGSStore: o.LBFGSStore,
			SDCAWorkers: workers, StreamBytes: stream})
	}
	r.place = placeOf(o.Duals)
	if o.Solver != "sdca" {
		r.place = dualsMemory
	}
	if r.place == dualsAuto {
		r.place = dualsStream
		if autoLimit == 0 || estimate(true, 0).Total() <= autoLimit {
			r.place = dualsMemory
		}
	}
	var est train.MemoryEstimate
	switch r.place {
	case dualsStream:
		if workers > 1 {
			return fmt.Errorf("--workers %d with streamed duals (--duals %s%s): the streamed store runs the sequential SDCA; use --workers 1, or --duals memory",
				workers, o.Duals, map[bool]string{true: ", chosen as the run does not fit the memory budget", false: ""}[o.Duals == "auto"])
		}
		budget := o.MemoryBudget
		if budget == 0 {
			budget = autoLimit
		}
		rest := estimate(false, 1).Total() - 1 // all but the block buffers
		// Slots are blocks rounded up to 4096 bytes: round down here.
		r.streamOpts = duals.StreamOptions{BlockBytes: max((budget-rest)/duals.StreamBuffers/4096*4096, minBlockBytes)}
		if o.Checkpoint != "" {
			r.streamOpts.Spare = duals.DefaultSpare
		}
		blocks, slot, _ := duals.StreamLayout(r.t.Data, r.streamOpts)
		r.streamBlocks = blocks
		est = estimate(false, duals.StreamBuffers*slot)
	default:
		est = estimate(r.place == dualsMemory && o.Solver == "sdca", 0)
	}
	if limit == 0 || est.Total() <= limit {
		return nil
	}
	var help []string
	switch {
	case o.Solver == "lbfgs":
		help = append(help, fmt.Sprintf("a smaller --lbfgs-store (its history takes %s)", ByteSize(est.LBFGS)))
	case r.place == dualsMemory:
		help = append(help, fmt.Sprintf("--duals stream or --duals auto (streamed from disk in blocks), or --duals PATH (the duals take %s)", ByteSize(est.Duals)))
	}
	if o.FeatureSpace == "full" {
		help = append(help, "--feature-space observed")
	}
	help = append(help, "--memory-budget SIZE if more memory is available (e.g. swap)")
	return fmt.Errorf("train: this run needs about %s in memory (%s), more than the %s %s; try %s",
		ByteSize(est.Total()), est, what, ByteSize(limit), strings.Join(help, ", or "))
}

// minBlockBytes is the smallest block a streamed store is given, however
// small the budget: smaller blocks only add I/O requests.
const minBlockBytes = 1 << 20

// Where SDCA's duals go (TrainOptions.Duals).
const (
	dualsAuto   = iota // memory or streamed, by the budget
	dualsMemory        // in memory
	dualsFile          // a memory-mapped file (duals.File)
	dualsStream        // streamed in blocks (duals.Stream)
)

// placeOf reads TrainOptions.Duals (defaults applied).
func placeOf(duals string) int {
	switch {
	case duals == "auto":
		return dualsAuto
	case duals == "memory":
		return dualsMemory
	case duals == "stream" || strings.HasPrefix(duals, "stream:"):
		return dualsStream
	}
	return dualsFile
}

// DualsFile is the file SDCA's duals are written to, given
// TrainOptions.Duals ("": auto) and the checkpoint directory (TrainOptions'
// Checkpoint, else its Resume): PATH of a file path or stream:PATH, and
// for stream or auto with a checkpoint directory its duals.stream; "" when
// the duals stay in memory or in an unlinked temporary file. The command
// compares it with its inputs and other outputs before anything is
// written.
func DualsFile(duals, checkpoint string) string {
	switch placeOf(cmp.Or(duals, DefaultDuals)) {
	case dualsMemory:
		return ""
	case dualsFile:
		return duals
	}
	if path, ok := strings.CutPrefix(duals, "stream:"); ok {
		return path
	}
	if checkpoint != "" {
		return filepath.Join(checkpoint, "duals.stream")
	}
	return ""
}

// dualStore places SDCA's duals in a memory-mapped file (Duals PATH),
// announcing the choice.
func (r *trainer) dualStore() (*duals.File, error) {
	d := r.t.Data
	path := r.o.Duals
	fs, err := duals.CreateFile(path, d)
	if err != nil && errors.Is(err, iofs.ErrExist) {
		fs, err = duals.OpenFile(path, d) // reuse a file of this dataset
	}
	return fs, err
}

// streamStore places SDCA's duals in a streamed file: PATH of stream:PATH,
// else duals.stream in the checkpoint directory (kept: snapshots refer to
// it), else a temporary file in the system's temporary directory (unlinked
// once open). A resumed run opens the existing file.
func (r *trainer) streamStore() (*duals.Stream, error) {
	d := r.t.Data
	path, temporary := DualsFile(r.o.Duals, r.o.Checkpoint), false
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
	r.logf("train: duals %s streamed from %s in %d blocks (slots of %s, %d spare; %s file; %s): %s of block buffers",
		ByteSize(duals.Bytes(d)), path, s.Blocks(), ByteSize(slot), r.streamOpts.Spare, ByteSize(size), direct,
		ByteSize(duals.StreamBuffers*slot))
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
			return unlock, fmt.Errorf("--resume: %w", err)
		}
		if !st.IsDir() {
			return unlock, fmt.Errorf("--resume %s: not a directory", resume)
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
func (r *trainer) validator(feat featureSettings) (func([]float64) (map[string]float64, error), error) {
	vt, path := r.o.Valid, r.o.ValidName
	if vt == nil {
		var err error
		path = r.o.ValidPath
		if vt, err = ReadFeatureTable(pipeline.Source{Path: path, Stdin: r.o.Stdin}, true); err != nil {
			return nil, err
		}
	}
	vfeat, err := checkFeaturization(vt.Metadata, path)
	if err != nil {
		return nil, fmt.Errorf("--valid %w", err)
	}
	if a, b := templateText(vfeat), templateText(feat); a != b {
		return nil, fmt.Errorf("--valid %s was featurized with templates %.60q, the training table with %.60q: "+
			"featurize it with the training table's --template (and --input-format), or with --model from a model of this data", path, a, b)
	}
	trainData := r.t.Data
	lay := crf.Layout{NumAttrs: trainData.NumAttrs, NumLabels: trainData.NumLabels}
	probe := &crf.Model{Layout: lay, AttrNames: trainData.AttrNames, LabelNames: trainData.LabelNames}
	vd := decode.Apply(vt.Data, decode.Remap(probe, vt.Data), lay.NumAttrs, trainData.AttrNames)
	if len(vd.Attrs) == 0 && len(vt.Data.Attrs) > 0 {
		return nil, fmt.Errorf("--valid %s shares no attribute with the training table", path)
	}
	return func(w []float64) (map[string]float64, error) {
		m := &crf.Model{Layout: crf.Layout{NumAttrs: lay.NumAttrs, NumLabels: lay.NumLabels, NoBias: len(w) != lay.Dim()},
			Weights: w, AttrNames: trainData.AttrNames, LabelNames: trainData.LabelNames}
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
func templateText(fs featureSettings) string {
	if fs.templates == nil {
		return ""
	}
	return fs.templates.String()
}

// ByteSize renders a byte count as the messages show it.
func ByteSize(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%d B", b)
}

// ParseBytes reads sizes such as 512MiB, 8GiB, 2G or 1000000.
func ParseBytes(s string) (int64, error) {
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"G", 1e9}, {"M", 1e6}, {"K", 1e3}} {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = v, u.m
			break
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q is not a size (e.g. 8GiB)", s)
	}
	return int64(v * float64(mult)), nil
}
