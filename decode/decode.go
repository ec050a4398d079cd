package decode

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/internal/num"
	"github.com/dualcrf/dualcrf/option"
	"github.com/dualcrf/dualcrf/tables"
)

// Options configure Decode.
type Options struct {
	// Marginals asks for the marginal probability of each predicted label
	// and the log-probability of each predicted sentence (one forward–backward
	// per sentence on top of Viterbi).
	Marginals bool
	// Workers is the number of goroutines; 0 means GOMAXPROCS.
	Workers int
	// Constraints forbid the label sequences that are not well-formed in a
	// chunk tagging scheme, in Viterbi, the n best paths and the marginals
	// alike (see Constraints); the zero value allows every sequence.
	Constraints Constraints
	// ForceColumn names a text column of the input whose non-empty cells
	// fix the label of their token (partial annotation at prediction
	// time): the predictions, n best paths and marginals are those of the
	// labellings that agree with it. A cell "" or "_" leaves its token
	// free; any other cell must be one of the model's labels.
	ForceColumn string
	// NBest, when positive, asks for the NBest highest-scoring labellings
	// of each sentence with their log-probabilities (exact, by list
	// Viterbi): Predictions.Alternatives. 0 decodes the best one only.
	NBest int
	// ChunkConfidence asks for the marginal probability of each predicted
	// chunk (its span and type, the chunks read by Scheme's rules):
	// Predictions.ChunkConfidence.
	ChunkConfidence bool
	// Scheme is the chunk rules of ChunkConfidence (as eval's --scheme).
	Scheme Scheme
	// MemoryBudget, when positive, bounds the memory of the process while
	// it decodes, in bytes: what a chunk needs (the workers' lattices, n
	// best lists and marginals for its longest sentences, its predictions,
	// the model, the chunks in flight and the garbage collector's
	// headroom) is estimated before it is decoded; a chunk over the budget
	// is decoded on fewer workers, and one that one worker cannot decode
	// within it is refused with an *option.Error (ErrMemory) saying what it
	// needs and what would fit. 0: no bound.
	MemoryBudget int64
	// ChunkTokens is the number of tokens the Source hands Stream at a
	// time (0: not known), for CheckModel's bound on the chunks in flight.
	ChunkTokens int
	// MachineMemory says that MemoryBudget is the machine's memory
	// (physical memory, or the cgroup's limit), not a budget given: the
	// messages say so.
	MachineMemory bool
}

// Check reports an invalid option as an *option.Error naming its field.
func (o Options) Check() error {
	switch {
	case o.NBest < 0:
		return &option.Error{Field: "DecodeOptions.NBest", Value: fmt.Sprint(o.NBest), Msg: "want 0 (the best labelling only) or a number of labellings ≥ 1"}
	case o.NBest > MaxNBest:
		return &option.Error{Field: "DecodeOptions.NBest", Value: fmt.Sprint(o.NBest), Msg: fmt.Sprintf("want at most %d labellings per sentence", MaxNBest)}
	case int(o.Constraints) >= len(constraintNames):
		return &option.Error{Field: "DecodeOptions.Constraints", Value: o.Constraints.String(), Msg: "want none, bio, iob1 or iobes"}
	case int(o.Scheme) >= len(schemeNames):
		return &option.Error{Field: "DecodeOptions.Scheme", Value: o.Scheme.String(), Msg: "want one of eval's schemes"}
	case o.ChunkTokens < 0:
		return &option.Error{Field: "DecodeOptions.ChunkTokens", Value: fmt.Sprint(o.ChunkTokens), Msg: "want a number of tokens ≥ 1 (0: unknown)"}
	case o.MemoryBudget < 0:
		return &option.Error{Field: "DecodeOptions.MemoryBudget", Value: fmt.Sprint(o.MemoryBudget), Msg: "want a positive size (0: no bound)"}
	}
	return nil
}

// CheckModel reports what keeps the options from decoding with model m,
// before any input is read: constraints of a scheme its labels are not of
// (ErrConstraintLabel), or labels so many that a worker's lattice alone
// exceeds MemoryBudget, or chunks of ChunkTokens tokens that cannot be in
// flight within it (ErrMemory). All are *option.Error values.
func (o Options) CheckModel(m *crf.Model) error {
	if err := o.Check(); err != nil {
		return err
	}
	if _, err := o.Constraints.masks(m.LabelNames); err != nil {
		return err
	}
	return newPlanner(m, o, false).checkModel()
}

// MaxNBest is the largest Options.NBest: the list Viterbi keeps NBest
// partial paths per label and token.
const MaxNBest = 1000

// forwardBackward reports whether the options need a forward–backward per
// sentence.
func (o Options) forwardBackward() bool {
	return o.Marginals || o.NBest > 0 || o.ChunkConfidence
}

// Remap returns, for each attribute id of d, the model's id for the same
// attribute name, or -1 when the model does not know it. When d uses the
// model's own vocabulary the map is the identity and Remap returns nil.
func Remap(m *crf.Model, d *crf.Dataset) []int32 {
	same := len(d.AttrNames) <= len(m.AttrNames)
	for a, n := range d.AttrNames {
		if !same || m.AttrNames[a] != n {
			same = false
			break
		}
	}
	if same {
		return nil
	}
	index := make(map[string]int32, len(m.AttrNames))
	for a, n := range m.AttrNames {
		index[n] = int32(a)
	}
	out := make([]int32, len(d.AttrNames))
	for a, n := range d.AttrNames {
		if id, ok := index[n]; ok {
			out[a] = id
		} else {
			out[a] = -1
		}
	}
	return out
}

// Apply returns a copy of d's sentences whose attribute ids are the model's
// (unknown attributes dropped), sharing labels; with a nil map it returns d.
func Apply(d *crf.Dataset, remap []int32, numAttrs int, names []string) *crf.Dataset {
	if remap == nil {
		return d
	}
	out := &crf.Dataset{NumAttrs: numAttrs, NumLabels: d.NumLabels, AttrNames: names, LabelNames: d.LabelNames,
		SentStart: d.SentStart, Labels: d.Labels, AttrStart: make([]int, 1, len(d.AttrStart))}
	out.Attrs = make([]int32, 0, len(d.Attrs))
	if d.Values != nil {
		out.Values = make([]float64, 0, len(d.Values))
	}
	for tok := 0; tok+1 < len(d.AttrStart); tok++ {
		for j := d.AttrStart[tok]; j < d.AttrStart[tok+1]; j++ {
			if id := remap[d.Attrs[j]]; id >= 0 {
				out.Attrs = append(out.Attrs, id)
				if d.Values != nil {
					out.Values = append(out.Values, d.Values[j])
				}
			}
		}
		out.AttrStart = append(out.AttrStart, len(out.Attrs))
	}
	return out
}

// Decode runs Viterbi on every sentence of d (whose attribute ids must be the
// model's: see Remap and Apply), in parallel, keeping d's order. It takes
// no ForceColumn: d has no text (Stream decodes feature tables).
func Decode(ctx context.Context, m *crf.Model, d *crf.Dataset, opts Options) (*tables.Predictions, error) {
	if opts.ForceColumn != "" {
		return nil, errors.New("decode: forced labels come from a text column: decode a feature table (Stream)")
	}
	return decode(ctx, m, &tables.FeatureTable{Data: d}, nil, newPlanner(m, opts, false), opts)
}

// decodeFeatureTable is Decode on a feature table (or a chunk of one), taking
// the forced labels of opts.ForceColumn from its text. A forced label
// that is not one of the model's is a *ForcedLabelError; forced labels no
// labelling allowed by opts.Constraints can agree with are an
// *InfeasibleError.
func decodeFeatureTable(ctx context.Context, m *crf.Model, t *tables.FeatureTable, opts Options) (*tables.Predictions, error) {
	return decodeTable(ctx, m, t, newPlanner(m, opts, false), opts)
}

// decodeTable is decodeFeatureTable with the memory planner pl.
func decodeTable(ctx context.Context, m *crf.Model, t *tables.FeatureTable, pl *planner, opts Options) (*tables.Predictions, error) {
	var forced []int32
	if opts.ForceColumn != "" {
		var err error
		if forced, err = forcedLabels(m, t, opts.ForceColumn); err != nil {
			return nil, err
		}
	}
	return decode(ctx, m, t, forced, pl, opts)
}

// decode is decodeFeatureTable with forced labels (per token, −1 for free; nil
// for none) and the memory planner pl.
func decode(ctx context.Context, m *crf.Model, t *tables.FeatureTable, forced []int32, pl *planner, opts Options) (*tables.Predictions, error) {
	if err := opts.Check(); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	d, first, lines := t.Data, t.FirstSentence, t.Lines
	if d.NumAttrs > m.Layout.NumAttrs {
		return nil, fmt.Errorf("decode: dataset has %d attributes, model %d: remap it first", d.NumAttrs, m.Layout.NumAttrs)
	}
	masks, err := opts.Constraints.masks(m.LabelNames)
	if err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	workers, err := pl.plan(t, first)
	if err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	masked := opts.Constraints != NoConstraints || forced != nil
	n := d.Len()
	p := &tables.Predictions{Labels: make([]int32, d.NumTokens())}
	if opts.Marginals {
		p.Confidence = make([]float64, d.NumTokens())
	}
	if opts.Marginals || opts.NBest > 0 {
		p.LogProb = make([]float64, n)
	}
	if opts.ChunkConfidence {
		p.ChunkConfidence = make([]float64, d.NumTokens())
	}
	if opts.NBest > 0 {
		p.Alternatives = make([][]tables.Alternative, n)
	}
	K := m.Layout.NumLabels
	var mu sync.Mutex
	firstBad := -1 // the first sentence without an allowed labelling
	err = num.Parallel(ctx, n, workers, func() func(int) {
		lat := crf.NewLattice(K)
		var cp *chunkProber
		if opts.ChunkConfidence {
			cp = newChunkProber(m.LabelNames, opts.Scheme)
		}
		var node []float64
		var paths []int32
		var scores []float64
		return func(i int) {
			s := d.Sentence(i)
			off := d.SentStart[i]
			T := s.Len()
			if T == 0 {
				return
			}
			path := p.Labels[off : off+T]
			lat.SetScores(m.Layout, m.Weights, s)
			if masked {
				var f []int32
				if forced != nil {
					f = forced[off : off+T]
				}
				lat.Mask(masks.trans, masks.start, masks.end, f)
			}
			score := lat.Viterbi(path)
			if math.IsInf(score, -1) {
				mu.Lock()
				if firstBad < 0 || i < firstBad {
					firstBad = i
				}
				mu.Unlock()
				return
			}
			if !opts.forwardBackward() {
				return
			}
			var logZ float64
			if masked {
				logZ = lat.ForwardBackwardLog()
			} else {
				logZ = lat.ForwardBackward()
			}
			if p.LogProb != nil {
				p.LogProb[i] = logProb(score - logZ)
			}
			if opts.Marginals {
				node = grow(node, T*K)
				lat.NodeMarginals(node)
				for t, y := range path {
					p.Confidence[off+t] = prob(node[t*K+int(y)])
				}
			}
			if cp != nil {
				cp.fill(lat, path, logZ, p.ChunkConfidence[off:off+T])
			}
			if opts.NBest == 0 {
				return
			}
			paths = growInt32(paths, opts.NBest*T)
			scores = grow(scores, opts.NBest)
			got := lat.NBest(opts.NBest, paths, scores)
			alts := make([]tables.Alternative, 0, got-1)
			for r := 1; r < got; r++ {
				a := tables.Alternative{Labels: slices.Clone(paths[r*T : (r+1)*T]), LogProb: logProb(scores[r] - logZ)}
				if opts.Marginals {
					a.Confidence = make([]float64, T)
					for t, y := range a.Labels {
						a.Confidence[t] = prob(node[t*K+int(y)])
					}
				}
				if cp != nil {
					a.ChunkConfidence = make([]float64, T)
					cp.fill(lat, a.Labels, logZ, a.ChunkConfidence)
				}
				alts = append(alts, a)
			}
			p.Alternatives[i] = alts
		}
	})
	if err != nil {
		return nil, err
	}
	if firstBad >= 0 {
		e := &InfeasibleError{Sentence: first + firstBad + 1, Tokens: d.Sentence(firstBad).Len(), Constraints: opts.Constraints,
			Column: opts.ForceColumn, Labels: m.LabelNames}
		if firstBad < len(lines) {
			e.Line = lines[firstBad]
		}
		return nil, e
	}
	return p, nil
}

// fill sets conf[t] to the probability of the chunk of path that token t
// is in, NaN for a token outside every chunk.
func (c *chunkProber) fill(lat *crf.Lattice, path []int32, logZ float64, conf []float64) {
	for t := range conf {
		conf[t] = math.NaN()
	}
	c.chunks(path, func(s, e int) {
		p := prob(math.Exp(c.logProb(lat, s, e, path[s], logZ)))
		for t := s; t <= e; t++ {
			conf[t] = p
		}
	})
}

// prob returns a probability computed with rounding (a marginal,
// exp(log α + log β − log Z)) clamped to [0, 1]: a token forced to its
// label has a marginal of exactly 1, which rounds above 1 about half the
// time.
func prob(p float64) float64 { return max(0, min(p, 1)) }

// logProb returns a log-probability computed with rounding (score − log
// Z) clamped to at most 0.
func logProb(lp float64) float64 { return min(lp, 0) }

// InfeasibleError says that the constraints allow no labelling of a
// sentence that agrees with its forced labels, or, with no forced labels,
// no labelling of it at all (iobes with labels B-X and E-X only cannot tag
// a sentence of one token).
type InfeasibleError struct {
	Sentence    int         // 1-based, in the input
	Line        int         // 1-based line of its first token in the corpus; 0 when not known
	Tokens      int         // its length
	Constraints Constraints // the constraints applied
	Column      string      // the forced labels' column; "" when none
	Labels      []string    // the model's labels
}

func (e *InfeasibleError) Error() string {
	where := fmt.Sprintf("sentence %d", e.Sentence)
	if e.Line > 0 {
		where += fmt.Sprintf(" (line %d)", e.Line)
	}
	if e.Column != "" {
		return fmt.Sprintf("%s: no labelling allowed by the %s constraints agrees with the labels forced by column %s",
			where, e.Constraints, e.Column)
	}
	return fmt.Sprintf("%s: the %s constraints leave no valid labelling of its %d %s with the model's labels (%s)",
		where, e.Constraints, e.Tokens, map[bool]string{true: "token", false: "tokens"}[e.Tokens == 1], labelList(e.Labels))
}

// ForcedLabelError is a cell of the forced labels' column that is not one
// of the model's labels, or a column the input lacks.
type ForcedLabelError struct {
	Column          string
	Sentence, Token int    // 1-based, in the input; 0 when the column is missing
	Label           string // the cell
	Msg             string
}

func (e *ForcedLabelError) Error() string {
	if e.Sentence == 0 {
		return fmt.Sprintf("column %s (forced labels): %s", e.Column, e.Msg)
	}
	return fmt.Sprintf("sentence %d, token %d: column %s forces label %q: %s", e.Sentence, e.Token, e.Column, e.Label, e.Msg)
}

// forcedLabels reads the forced labels of column col of t: per token the
// model's label id of its cell, −1 for "" or "_".
func forcedLabels(m *crf.Model, t *tables.FeatureTable, col string) ([]int32, error) {
	c := slices.Index(t.Columns, col)
	if c < 0 || t.Text == nil {
		return nil, &ForcedLabelError{Column: col, Msg: fmt.Sprintf("the input has no such text column (its columns: %s)", strings.Join(t.Columns, ", "))}
	}
	ids := make(map[string]int32, len(m.LabelNames))
	for y, l := range m.LabelNames {
		ids[l] = int32(y)
	}
	d := t.Data
	out := make([]int32, d.NumTokens())
	for i := 0; i < d.Len(); i++ {
		for tok := d.SentStart[i]; tok < d.SentStart[i+1]; tok++ {
			v := t.Text[c][tok]
			if v == "" || v == "_" {
				out[tok] = -1
				continue
			}
			y, ok := ids[v]
			if !ok {
				return nil, &ForcedLabelError{Column: col, Sentence: t.FirstSentence + i + 1, Token: tok - d.SentStart[i] + 1, Label: v,
					Msg: fmt.Sprintf("not one of the model's %d labels (%s)", len(m.LabelNames), labelList(m.LabelNames))}
			}
			out[tok] = y
		}
	}
	return out, nil
}

// labelList lists labels, the first 12 and a count of the rest.
func labelList(labels []string) string {
	if len(labels) <= 12 {
		return strings.Join(labels, " ")
	}
	return fmt.Sprintf("%s … and %d more", strings.Join(labels[:12], " "), len(labels)-12)
}

func growInt32(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}

func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

// Source yields a feature table in chunks of whole sentences, in input
// order; *tables.FeatureReader and *featurize.TextReader are Sources.
type Source interface {
	Next() bool
	Chunk() *tables.FeatureTable
	Err() error
}

// Stream decodes every chunk of src with m and calls write, on the
// caller's goroutine, with each chunk and its predictions in input order.
// Reading, decoding (on opts.Workers goroutines) and writing overlap, one
// chunk each, so at most three chunks are in memory at a time: the one
// being read, the one being decoded and the one being written. write may
// keep nothing of a chunk after it returns.
//
// The chunks given to write have the model's attribute ids (matched by
// name, unknown attributes dropped) and keep their own gold labels and
// label names. Stream returns what the model covered of the input (see
// tables.Coverage); deciding what a mismatch means is the caller's.
func Stream(ctx context.Context, m *crf.Model, src Source, opts Options, write func(*tables.FeatureTable, *tables.Predictions) error) (tables.Coverage, error) {
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type decoded struct {
		t *tables.FeatureTable
		p *tables.Predictions
	}
	read := make(chan *tables.FeatureTable)
	out := make(chan decoded)
	rm := newRemapper(m)
	pl := newPlanner(m, opts, true)
	var readErr, decodeErr error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		defer close(read)
		for src.Next() {
			t := src.Chunk()
			rm.apply(t)
			select {
			case read <- t:
			case <-ctx.Done():
				return
			}
		}
		readErr = src.Err()
	}()
	go func() {
		defer wg.Done()
		defer close(out)
		for t := range read {
			p, err := decodeTable(ctx, m, t, pl, opts)
			if err != nil {
				decodeErr = err
				cancel()
				return
			}
			select {
			case out <- decoded{t, p}:
			case <-ctx.Done():
				return
			}
		}
	}()
	var writeErr error
	for c := range out {
		if writeErr = write(c.t, c.p); writeErr != nil {
			cancel()
			break
		}
	}
	wg.Wait()
	for _, err := range []error{writeErr, readErr, parent.Err(), decodeErr} {
		if err != nil {
			return rm.cov, err
		}
	}
	return rm.cov, nil
}

// remapper turns the attribute ids of a Source's chunks into the model's,
// and counts what the model covers. A Source's ids are stable across
// chunks and its name lists only grow, so the map is extended, never
// rebuilt.
type remapper struct {
	m          *crf.Model
	index      map[string]int32 // model attribute name → id, built when first needed
	ids        []int32          // table attribute id → model id, -1 when unknown
	identity   bool             // so far every table attribute id is the model's own
	labelKnown []bool           // table label id → whether the model has it
	modelLabel map[string]bool
	cov        tables.Coverage
}

func newRemapper(m *crf.Model) *remapper {
	r := &remapper{m: m, identity: true, modelLabel: make(map[string]bool, len(m.LabelNames))}
	for _, l := range m.LabelNames {
		r.modelLabel[l] = true
	}
	return r
}

// apply rewrites chunk t in the model's attribute ids, dropping those the
// model does not know, and counts attributes and gold labels.
func (r *remapper) apply(t *tables.FeatureTable) {
	d := t.Data
	r.extend(d.AttrNames, d.LabelNames)
	r.cov.Tokens += d.NumTokens()
	r.cov.Attrs += len(d.Attrs) + t.Dropped
	r.cov.UnknownAttrs += t.Dropped
	if !r.identity {
		r.cov.UnknownAttrs += r.compact(d)
	}
	d.NumAttrs, d.AttrNames = r.m.Layout.NumAttrs, r.m.AttrNames
	for _, y := range d.Labels {
		if y >= 0 {
			r.cov.AddLabel(d.LabelNames[y], r.labelKnown[y])
		}
	}
}

// extend maps the attribute and label names not seen in earlier chunks.
func (r *remapper) extend(attrs, labels []string) {
	for a := len(r.ids); a < len(attrs); a++ {
		if r.identity && a < len(r.m.AttrNames) && attrs[a] == r.m.AttrNames[a] {
			r.ids = append(r.ids, int32(a))
			continue
		}
		r.identity = false
		if r.index == nil {
			r.index = make(map[string]int32, len(r.m.AttrNames))
			for id, n := range r.m.AttrNames {
				r.index[n] = int32(id)
			}
		}
		id, ok := r.index[attrs[a]]
		if !ok {
			id = -1
		}
		r.ids = append(r.ids, id)
	}
	for y := len(r.labelKnown); y < len(labels); y++ {
		r.labelKnown = append(r.labelKnown, r.modelLabel[labels[y]])
	}
}

// compact rewrites d's attributes in place in the model's ids, leaving out
// unknown ones, and returns how many it left out.
func (r *remapper) compact(d *crf.Dataset) int {
	n := 0
	lo := d.AttrStart[0]
	for tok := 0; tok+1 < len(d.AttrStart); tok++ {
		hi := d.AttrStart[tok+1]
		for j := lo; j < hi; j++ {
			if id := r.ids[d.Attrs[j]]; id >= 0 {
				d.Attrs[n] = id
				if d.Values != nil {
					d.Values[n] = d.Values[j]
				}
				n++
			}
		}
		lo = hi
		d.AttrStart[tok+1] = n
	}
	dropped := len(d.Attrs) - n
	d.Attrs = d.Attrs[:n]
	if d.Values != nil {
		d.Values = d.Values[:n]
	}
	return dropped
}
