package decode

// The memory bound of decoding. What a chunk needs is estimated from its
// sentences' lengths, the model's labels and the options before anything
// of its size is allocated: the lattices of the workers (T·K per token,
// K² per worker), the n best partial labellings of list Viterbi (16·T·K·n
// bytes for a sentence of T tokens: 2 GiB for 6,000 tokens of 22 labels
// with 1,000 labellings), the marginals, the chunk's predictions with their
// alternatives, the input chunks in flight and the output batch being
// built, and the garbage collector's headroom over all of it. A chunk over
// the budget is decoded on fewer workers when that is enough (the output
// does not depend on them); otherwise decoding stops before the chunk with
// an *option.Error that says what was asked, what it needs, what the budget
// allows and what would fit.

import (
	"errors"
	"fmt"
	"math/bits"
	"runtime"
	"slices"
	"strings"
	"unsafe"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/option"
	"github.com/dualcrf/dualcrf/tables"
)

// ErrMemory marks a refusal of decoding that would need more memory than
// Options.MemoryBudget allows.
var ErrMemory = errors.New("decode: more memory than the budget allows")

// runtimeBytes is about what a dualcrf process holds before its data: its
// code and the Go runtime.
const runtimeBytes = 24 << 20

// batchRows bounds the rows of the output batch a prediction writer
// builds (tables.PredictionWriter cuts its batches at about 64 Ki rows,
// and a sentence's labellings apart at twice that).
const batchRows = 2 << 16

// memoryParts is what decoding holds at once, in bytes, by part.
type memoryParts struct {
	model       int64 // the model's weights and names
	input       int64 // the input chunks in flight
	predictions int64 // the predictions in flight (labels, confidences, alternatives)
	batch       int64 // the output batch being built
	lattices    int64 // the workers' lattices (and chunk-probability and marginal scratch)
	nbest       int64 // the workers' n-best lists
	gc          int64 // the garbage collector's headroom
	runtime     int64
}

// total is the sum of the parts.
func (p memoryParts) total() int64 {
	return p.model + p.input + p.predictions + p.batch + p.lattices + p.nbest + p.gc + p.runtime
}

// String lists the non-zero parts.
func (p memoryParts) String() string {
	var out []string
	for _, q := range []struct {
		name string
		b    int64
	}{{"n-best lists", p.nbest}, {"lattices", p.lattices}, {"predictions", p.predictions}, {"output batch", p.batch},
		{"input", p.input}, {"model", p.model}, {"GC headroom", p.gc}, {"runtime", p.runtime}} {
		if q.b > 0 {
			out = append(out, q.name+" "+byteSize(q.b))
		}
	}
	return strings.Join(out, ", ")
}

// byteSize formats a number of bytes for people.
func byteSize(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}

// planner estimates what decoding with model m and opts needs, and holds
// it to opts.MemoryBudget. streamed says the chunks go through Stream,
// which holds three input chunks and two chunks' predictions at a time
// (one read, one decoded, one written) and an output batch.
type planner struct {
	m        *crf.Model
	opts     Options
	streamed bool
	model    int64
}

func newPlanner(m *crf.Model, opts Options, streamed bool) *planner {
	p := &planner{m: m, opts: opts, streamed: streamed, model: 8 * int64(len(m.Weights))}
	for _, names := range [][]string{m.AttrNames, m.LabelNames} {
		for _, n := range names {
			p.model += int64(len(n)) + int64(unsafe.Sizeof(n))
		}
	}
	return p
}

// workers is the number of goroutines decoding a chunk of n sentences with
// w asked for (0: GOMAXPROCS), as num.Parallel starts them.
func workers(w, n int) int {
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	return max(1, min(w, (n+63)/64))
}

// perWorker is what one worker holds whatever the sentence: its lattice's
// K×K arrays, with chunk confidence the chunk prober's, and small buffers.
func (p *planner) perWorker() int64 {
	K := int64(p.m.Layout.NumLabels)
	kp := (K + 3) &^ 3
	b := int64(64 << 10)               // small buffers and bookkeeping
	b += 8 * (K*K + 4 + 4*K*kp + 2*kp) // crf.NewLattice
	if p.opts.ChunkConfidence {
		b += 8*K*K + 2*K*K + 5*8*K // newChunkProber
	}
	if p.opts.Constraints != NoConstraints {
		b += K*K + 2*K // the masks (shared, counted per worker for simplicity)
	}
	return b
}

// sentence is what a worker holds for a sentence of T tokens with n best
// labellings: its lattice's rows (crf.Lattice grows them to 1.5 T), the
// marginals and the n best lists and paths.
func (p *planner) sentence(T, n int) (lattice, nbest int64) {
	K, t := int64(p.m.Layout.NumLabels), int64(T)
	kp := (K + 3) &^ 3
	c, cp := t*K+t*K/2, t*kp+t*kp/2
	// theta (8 bytes), vit (8) and back (4) per label; psi, alpha, beta,
	// fa and fc (8) per padded label; rmax and scale per token.
	lattice = allocSize(8*(c+4)) + allocSize(8*c) + allocSize(4*c) + 5*allocSize(8*cp) + 2*allocSize(8*(t+t/2))
	if p.opts.Marginals {
		lattice += allocSize(8 * t * K)
	}
	if n > 0 {
		N := int64(n)
		// crf.Lattice.NBest's lists, counts and heads; the paths and scores
		nbest = allocSize(16*t*K*N) + allocSize(8*t*K) + allocSize(8*K) + allocSize(4*N*t) + allocSize(8*N)
	}
	return lattice, nbest
}

// predictions is what the predictions of a chunk of tokens tokens in
// sentences hold (each with n−1 alternatives at most).
func (p *planner) predictions(tokens, sentences int, n int) int64 {
	o := p.opts
	perToken := int64(4)
	if o.Marginals {
		perToken += 8
	}
	if o.ChunkConfidence {
		perToken += 8
	}
	b := perToken * int64(tokens)
	if o.Marginals || n > 0 {
		b += 8 * int64(sentences)
	}
	if n > 1 && sentences > 0 {
		// Each alternative's slices are allocated apart: sizes round up to
		// the allocator's classes.
		T := int64(tokens) / int64(sentences)
		perAlt := allocSize(4 * T)
		if o.Marginals {
			perAlt += allocSize(8 * T)
		}
		if o.ChunkConfidence {
			perAlt += allocSize(8 * T)
		}
		alts := allocSize(int64(n-1) * int64(unsafe.Sizeof(tables.Alternative{})))
		b += int64(sentences) * (int64(n-1)*perAlt + alts + 24)
	}
	return b
}

// allocSize is about what the Go allocator takes for an object of b
// bytes: b rounded up to its size class, which are an eighth of a power of
// two apart (pages of 8 KiB above 32 KiB).
func allocSize(b int64) int64 {
	switch {
	case b <= 16:
		return 16
	case b > 32<<10:
		return (b + 8<<10 - 1) &^ (8<<10 - 1)
	}
	step := int64(1) << max(bits.Len64(uint64(b))-4, 4)
	return (b + step - 1) &^ (step - 1)
}

// tableBytes is what chunk t holds in memory.
func tableBytes(t *tables.FeatureTable) int64 {
	d := t.Data
	b := 4*int64(len(d.Attrs)) + 8*int64(len(d.Values)) + 8*int64(len(d.AttrStart)) + 4*int64(len(d.Labels)) +
		8*int64(len(d.SentStart)) + 8*int64(len(t.Lines))
	for _, col := range t.Text {
		for _, v := range col {
			b += int64(len(v)) + int64(unsafe.Sizeof(v))
		}
	}
	return b
}

// chunkSize describes a chunk for the estimate.
type chunkSize struct {
	tokens, sentences int
	lengths           []int // the sentences' lengths, longest first
	longest           int   // the index of a longest sentence
	table             int64 // tableBytes
	text              int64 // the bytes of its text cells, each with a 4-byte offset
}

func sizeOf(t *tables.FeatureTable) chunkSize {
	d := t.Data
	c := chunkSize{tokens: d.NumTokens(), sentences: d.Len(), lengths: make([]int, d.Len()), table: tableBytes(t)}
	for _, col := range t.Text {
		for _, v := range col {
			c.text += int64(len(v)) + 4
		}
	}
	for i := range c.lengths {
		c.lengths[i] = d.SentStart[i+1] - d.SentStart[i]
		if c.lengths[i] > c.lengths[c.longest] {
			c.longest = i
		}
	}
	slices.SortFunc(c.lengths, func(a, b int) int { return b - a })
	return c
}

// need estimates what decoding chunk c on w workers with n best
// labellings holds at once.
func (p *planner) need(c chunkSize, w, n int) memoryParts {
	parts := memoryParts{model: p.model, runtime: runtimeBytes}
	inFlight, predsInFlight := int64(1), int64(1)
	if p.streamed {
		inFlight, predsInFlight = 3, 2
	}
	parts.input = inFlight * c.table
	parts.predictions = predsInFlight * p.predictions(c.tokens, c.sentences, n)
	if p.streamed && c.tokens > 0 {
		longest := 0
		if len(c.lengths) > 0 {
			longest = c.lengths[0]
		}
		rows := int64(min(c.tokens*max(n, 1), batchRows+longest))
		// sentence, position, the text cells, gold and pred (about 8
		// bytes each), confidence, log-probability, chunk confidence, rank
		perRow := 12 + c.text/int64(c.tokens) + 2*(4+8) + 3*8 + 4
		parts.batch = 2 * rows * perRow // builders grow by doubling
	}
	parts.lattices = int64(w) * p.perWorker()
	for _, T := range c.lengths[:min(w, len(c.lengths))] {
		lat, nb := p.sentence(T, n)
		parts.lattices += lat
		parts.nbest += nb
	}
	parts.gc = parts.input + parts.predictions + parts.batch + parts.lattices + parts.nbest
	return parts
}

// plan returns the number of workers to decode chunk t on (at most the
// number opts asks for) within opts.MemoryBudget, or the *option.Error
// refusing the chunk when one worker needs more. first is the number of
// the input's sentences before t's, for the message.
func (p *planner) plan(t *tables.FeatureTable, first int) (int, error) {
	budget := p.opts.MemoryBudget
	w := workers(p.opts.Workers, t.Data.Len())
	if budget <= 0 {
		return w, nil
	}
	c := sizeOf(t)
	n := p.opts.NBest
	for ; w >= 1; w-- {
		if p.need(c, w, n).total() <= budget {
			return w, nil
		}
	}
	return 0, p.refuse(t, c, first)
}

// refuse says why chunk t (of size c) does not fit the budget on one
// worker, and what would.
func (p *planner) refuse(t *tables.FeatureTable, c chunkSize, first int) error {
	o := p.opts
	n := o.NBest
	need := p.need(c, 1, n)
	i := c.longest
	T := t.Data.SentStart[i+1] - t.Data.SentStart[i]
	detail := fmt.Sprintf("%d tokens, %d labels", T, p.m.Layout.NumLabels)
	if i < len(t.Lines) && t.Lines[i] > 0 {
		detail = fmt.Sprintf("line %d, %s", t.Lines[i], detail)
	}
	asked := fmt.Sprintf("sentence %d (%s)", first+i+1, detail)
	if c.sentences > 1 {
		asked = fmt.Sprintf("the chunk of sentences %d–%d (%d tokens; the longest, sentence %d: %s)", first+1, first+c.sentences, c.tokens, first+i+1, detail)
	}
	if n > 0 {
		asked += fmt.Sprintf(" with {DecodeOptions.NBest} %d", n)
	}
	var help []string
	if n > 1 {
		if k := p.fittingNBest(c); k > 0 {
			help = append(help, fmt.Sprintf("{DecodeOptions.NBest} %d (the most that fits)", k))
		}
	}
	if c.sentences > 1 {
		share := func(b int64) int64 { return b * int64(T) / int64(max(c.tokens, 1)) }
		one := chunkSize{tokens: T, sentences: 1, lengths: []int{T}, table: share(c.table), text: share(c.text)}
		if p.need(one, 1, n).total() <= o.MemoryBudget {
			help = append(help, fmt.Sprintf("a smaller {DecodeOptions.ChunkTokens} (it reads %d tokens at a time)", c.tokens))
		}
	}
	more := "{DecodeOptions.MemoryBudget} SIZE if more memory is available"
	allowed := "the {DecodeOptions.MemoryBudget} " + byteSize(o.MemoryBudget)
	if o.MachineMemory {
		allowed = "the " + byteSize(o.MemoryBudget) + " of memory this machine has (physical memory, or the cgroup's limit)"
		more = "{DecodeOptions.MemoryBudget} SIZE if more memory is available (swap)"
	}
	help = append(help, more)
	return &option.Error{Msg: fmt.Sprintf("%s needs about %s in memory to decode (%s), more than %s allows; try %s",
		asked, byteSize(need.total()), need, allowed, strings.Join(help, ", or ")), Err: ErrMemory}
}

// fittingNBest returns the largest number of labellings below
// opts.NBest with which chunk c fits the budget on one worker; 0 when none
// does.
func (p *planner) fittingNBest(c chunkSize) int {
	lo, hi := 0, p.opts.NBest // fits(lo) or lo = 0; !fits(hi)
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if p.need(c, 1, mid).total() <= p.opts.MemoryBudget {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// checkModel refuses model m when its labels alone need more memory per
// worker than the budget allows, before any input is read: a model file
// may declare up to 16,384 labels, whose K×K arrays take 10 GiB per
// worker.
func (p *planner) checkModel() error {
	o := p.opts
	if o.MemoryBudget <= 0 {
		return nil
	}
	allowed := "the {DecodeOptions.MemoryBudget} " + byteSize(o.MemoryBudget)
	if o.MachineMemory {
		allowed = "the " + byteSize(o.MemoryBudget) + " of memory this machine has (physical memory, or the cgroup's limit)"
	}
	need := memoryParts{model: p.model, runtime: runtimeBytes, lattices: p.perWorker()}
	need.gc = need.lattices
	if need.total() > o.MemoryBudget {
		return &option.Error{Msg: fmt.Sprintf("a model of %d labels needs about %s in memory to decode anything (%s: the lattice's arrays of %d×%d weights), more than %s allows; try {DecodeOptions.MemoryBudget} SIZE if more memory is available",
			p.m.Layout.NumLabels, byteSize(need.total()), need, p.m.Layout.NumLabels, p.m.Layout.NumLabels, allowed), Err: ErrMemory}
	}
	if o.ChunkTokens > 0 {
		// The least a token in flight holds: its label and row start in
		// each input chunk, its predicted labels (and confidences) in each
		// chunk's predictions, and as much again of headroom.
		n := int64(max(o.NBest, 1))
		perToken := int64(4)
		if o.Marginals {
			perToken += 8
		}
		if o.ChunkConfidence {
			perToken += 8
		}
		chunk := memoryParts{model: p.model, runtime: runtimeBytes, lattices: p.perWorker(),
			input: 3 * 12 * int64(o.ChunkTokens), predictions: 2 * perToken * n * int64(o.ChunkTokens)}
		chunk.gc = chunk.lattices + chunk.input + chunk.predictions
		if chunk.total() > o.MemoryBudget {
			return &option.Error{Field: "DecodeOptions.ChunkTokens", Value: fmt.Sprint(o.ChunkTokens),
				Msg: fmt.Sprintf("chunks of that many tokens need at least %s in memory in flight (%s), more than %s allows; try a smaller {DecodeOptions.ChunkTokens}, or {DecodeOptions.MemoryBudget} SIZE if more memory is available",
					byteSize(chunk.total()), chunk, allowed), Err: ErrMemory}
		}
	}
	return nil
}
