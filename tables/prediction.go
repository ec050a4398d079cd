package tables

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/option"
	"github.com/dualcrf/dualcrf/schemas"
)

// Predictions holds a decoder's output for a dataset, in its order: the
// prediction columns of a prediction table.
type Predictions struct {
	Labels     []int32   // per token: predicted label id (into the model's labels)
	Confidence []float64 // per token: p(y_t = pred | x), with marginals (nil without)
	LogProb    []float64 // per sentence: log p(pred | x), with marginals or n-best (nil without)
	// ChunkConfidence is, per token, the marginal probability of the
	// predicted chunk the token is in (its span and type), NaN for a token
	// outside every chunk; nil without chunk confidence.
	ChunkConfidence []float64
	// Alternatives holds, per sentence, its labellings after the best
	// one, best first (ranks 2, 3, …), with n-best decoding; nil without.
	Alternatives [][]Alternative
}

// Alternative is a labelling of a sentence other than the best one, from
// n-best decoding: the columns of its rows in a prediction table.
type Alternative struct {
	Labels          []int32   // per token: label id
	LogProb         float64   // log p(labels | x)
	Confidence      []float64 // per token: p(y_t = label | x), with marginals (nil without)
	ChunkConfidence []float64 // per token: as Predictions.ChunkConfidence (nil without)
}

// batchTokens is the target number of rows per prediction record batch
// (and Parquet row group); batches are cut on sentence boundaries, and
// between two labellings of an n-best sentence once a batch holds twice
// as many rows.
const batchTokens = 1 << 16

// The output formats of a prediction table.
const (
	PredictionArrow   = "arrow"   // Arrow IPC, stream or file (PredictionOptions.IPC)
	PredictionCoNLL   = "conll"   // CoNLL text: the token's columns, gold, pred
	PredictionParquet = "parquet" // Parquet, zstd-compressed, a row group per batch
)

// PredictionOptions configure a PredictionWriter.
type PredictionOptions struct {
	Format   string                // PredictionArrow when empty
	IPC      arrowio.WriterOptions // with PredictionArrow: IPC format and compression
	Metadata map[string]string     // schema metadata (Arrow, Parquet)
	Mem      memory.Allocator      // memory.DefaultAllocator when nil
}

// PredictionWriter writes decoded chunks, in order, as one prediction
// table: Arrow or Parquet record batches of about 64 Ki rows cut on
// sentence boundaries (an n-best sentence's labellings are cut apart past
// 128 Ki rows), or CoNLL text flushed after every chunk. It keeps at
// most one batch being built. The table's columns are fixed by the first
// chunk: gold labels when it has any, confidence and log-probability when
// its predictions carry marginals.
type PredictionWriter struct {
	w      io.Writer
	m      *crf.Model
	opts   PredictionOptions
	closed bool
	err    error

	bw *bufio.Writer // CoNLL

	b      *batcher             // Arrow and Parquet
	rw     arrowio.RecordWriter // Arrow IPC or Parquet
	emitFn func(arrow.RecordBatch) error
}

// NewPredictionWriter starts a prediction table on w for the predictions of
// model m. Nothing is written before the first chunk.
func NewPredictionWriter(w io.Writer, m *crf.Model, opts PredictionOptions) (*PredictionWriter, error) {
	if opts.Format == "" {
		opts.Format = PredictionArrow
	}
	if opts.Mem == nil {
		opts.Mem = memory.DefaultAllocator
	}
	pw := &PredictionWriter{w: w, m: m, opts: opts}
	switch opts.Format {
	case PredictionCoNLL:
		pw.bw = bufio.NewWriterSize(w, 1<<16)
	case PredictionArrow:
		pw.emitFn = pw.emitArrow
	case PredictionParquet:
		pw.emitFn = pw.emitParquet
	default:
		return nil, fmt.Errorf("decode: output format %q: want arrow, conll or parquet", opts.Format)
	}
	return pw, nil
}

// Write writes the predictions p of chunk t (whose sentences number on from
// the last chunk's).
func (pw *PredictionWriter) Write(t *FeatureTable, p *Predictions) error {
	switch {
	case pw.err != nil:
		return pw.err
	case pw.closed:
		return errors.New("decode: write after close")
	}
	if pw.bw != nil {
		pw.err = writeCoNLL(pw.bw, t, pw.m, p)
		if pw.err == nil {
			pw.err = pw.bw.Flush()
		}
		return pw.err
	}
	if pw.b == nil {
		pw.b, pw.err = newBatcher(t, p, pw.m, pw.opts.Metadata, pw.opts.Mem)
		if pw.err != nil {
			return pw.err
		}
	}
	pw.err = pw.b.add(t, p, pw.emitFn)
	return pw.err
}

// Close writes what is left and the end of the table; it does not close
// the underlying writer. An Arrow or Parquet table with no row is an error.
// After a failed Write, Close writes nothing more and returns that error.
func (pw *PredictionWriter) Close() error {
	if pw.closed {
		return pw.err
	}
	if pw.err != nil {
		pw.Abort()
		return pw.err
	}
	if pw.bw != nil {
		pw.closed = true
		pw.err = pw.bw.Flush()
		return pw.err
	}
	if pw.b != nil {
		pw.err = pw.b.flush(pw.emitFn)
	}
	if pw.err == nil && pw.rw == nil {
		pw.err = errors.New("decode: no sentences to write")
	}
	if pw.err != nil {
		pw.Abort()
		return pw.err
	}
	pw.closed = true
	pw.b.release()
	pw.err = pw.rw.Close()
	return pw.err
}

// Abort gives the table up without its end (so an Arrow reader downstream
// sees a truncated stream) and releases the writer's memory. Abort after
// Close does nothing.
func (pw *PredictionWriter) Abort() {
	if pw.closed {
		return
	}
	pw.closed = true
	if pw.b != nil {
		pw.b.release()
	}
	if pw.rw != nil {
		pw.rw.Abort() // no end marker or footer: the output must not look complete
	}
}

func (pw *PredictionWriter) emitArrow(rec arrow.RecordBatch) error {
	if pw.rw == nil {
		ipcOpts := pw.opts.IPC
		if ipcOpts.Mem == nil {
			ipcOpts.Mem = pw.opts.Mem
		}
		rw, err := arrowio.NewRecordWriter(pw.w, rec.Schema(), ipcOpts)
		if err != nil {
			return err
		}
		pw.rw = rw
	}
	return pw.rw.Write(rec)
}

func (pw *PredictionWriter) emitParquet(rec arrow.RecordBatch) error {
	if pw.rw == nil {
		rw, err := arrowio.NewRecordWriter(pw.w, rec.Schema(), arrowio.WriterOptions{Format: arrowio.FormatParquet, Mem: pw.opts.Mem})
		if err != nil {
			return err
		}
		pw.rw = rw
	}
	return pw.rw.Write(rec) // one row group per batch
}

// batcher builds prediction record batches across chunks.
type batcher struct {
	schema   *arrow.Schema
	b        *array.RecordBuilder
	m        *crf.Model
	cols     schemas.PredictionColumns
	ncols    int
	rows     int
	sentence *array.Int64Builder
	position *array.Int32Builder
	text     []*array.StringBuilder
	goldB    *array.StringBuilder
	predB    *array.StringBuilder
	confB    *array.Float64Builder
	logpB    *array.Float64Builder
	chunkB   *array.Float64Builder
	rankB    *array.Int32Builder
}

// predictionColumns are the optional columns of the table of chunk t and
// its predictions p.
func predictionColumns(t *FeatureTable, p *Predictions) schemas.PredictionColumns {
	return schemas.PredictionColumns{
		Gold:            slices.ContainsFunc(t.Data.Labels, func(y int32) bool { return y >= 0 }),
		Confidence:      p.Confidence != nil,
		LogProb:         p.LogProb != nil,
		ChunkConfidence: p.ChunkConfidence != nil,
		Rank:            p.Alternatives != nil,
	}
}

// newBatcher fixes the prediction schema from the first chunk t and its
// predictions p.
func newBatcher(t *FeatureTable, p *Predictions, m *crf.Model, md map[string]string, mem memory.Allocator) (*batcher, error) {
	cols := predictionColumns(t, p)
	schema, err := schemas.PredictionSchemaFor(t.Columns, cols, md)
	if err != nil {
		return nil, err
	}
	b := &batcher{schema: schema, b: array.NewRecordBuilder(mem, schema), m: m, cols: cols, ncols: len(t.Columns)}
	field := func(name string) array.Builder { return b.b.Field(schema.FieldIndices(name)[0]) }
	b.sentence = field(schemas.ColSentence).(*array.Int64Builder)
	b.position = field(schemas.ColPosition).(*array.Int32Builder)
	for c := range t.Columns {
		b.text = append(b.text, b.b.Field(2+c).(*array.StringBuilder))
	}
	if cols.Gold {
		b.goldB = field(schemas.ColGold).(*array.StringBuilder)
	}
	b.predB = field(schemas.ColPred).(*array.StringBuilder)
	if cols.Confidence {
		b.confB = field(schemas.ColConfidence).(*array.Float64Builder)
	}
	if cols.LogProb {
		b.logpB = field(schemas.ColLogProb).(*array.Float64Builder)
	}
	if cols.ChunkConfidence {
		b.chunkB = field(schemas.ColChunkConf).(*array.Float64Builder)
	}
	if cols.Rank {
		b.rankB = field(schemas.ColRank).(*array.Int32Builder)
	}
	return b, nil
}

func (b *batcher) release() { b.b.Release() }

// add appends the rows of chunk t, calling emit with each batch that
// reaches batchTokens rows (released after emit returns). With n-best, a
// sentence's rows are those of its best labelling, then those of each
// alternative in rank order.
func (b *batcher) add(t *FeatureTable, p *Predictions, emit func(arrow.RecordBatch) error) error {
	d := t.Data
	got := predictionColumns(t, p)
	got.Gold = b.cols.Gold
	if len(t.Columns) != b.ncols || got != b.cols {
		return fmt.Errorf("decode: sentence %d: the chunk's columns differ from the first chunk's", t.FirstSentence)
	}
	for i := 0; i < d.Len(); i++ {
		lo, hi := d.SentStart[i], d.SentStart[i+1]
		if !b.cols.Gold && slices.ContainsFunc(d.Labels[lo:hi], func(y int32) bool { return y >= 0 }) {
			return fmt.Errorf("decode: sentence %d has gold labels, but the sentences before it in the first chunk had none, "+
				"so the prediction table has no gold column", t.FirstSentence+i)
		}
		best := Alternative{Labels: p.Labels[lo:hi]}
		if p.LogProb != nil {
			best.LogProb = p.LogProb[i]
		}
		if p.Confidence != nil {
			best.Confidence = p.Confidence[lo:hi]
		}
		if p.ChunkConfidence != nil {
			best.ChunkConfidence = p.ChunkConfidence[lo:hi]
		}
		b.addRows(t, i, 1, best)
		if p.Alternatives != nil {
			for r, a := range p.Alternatives[i] {
				// A long sentence's many labellings would make one batch
				// of them all: cut between two labellings.
				if b.rows >= 2*batchTokens {
					if err := b.flush(emit); err != nil {
						return err
					}
				}
				b.addRows(t, i, r+2, a)
			}
		}
		if b.rows >= batchTokens {
			if err := b.flush(emit); err != nil {
				return err
			}
		}
	}
	return nil
}

// addRows appends the rows of sentence i of chunk t labelled as a, of the
// given rank.
func (b *batcher) addRows(t *FeatureTable, i, rank int, a Alternative) {
	d := t.Data
	lo, hi := d.SentStart[i], d.SentStart[i+1]
	for tok := lo; tok < hi; tok++ {
		j := tok - lo
		b.sentence.Append(int64(t.FirstSentence + i))
		b.position.Append(int32(j))
		for c, sb := range b.text {
			if t.Text != nil {
				sb.Append(t.Text[c][tok])
			} else {
				sb.AppendNull()
			}
		}
		if b.cols.Gold {
			if y := d.Labels[tok]; y >= 0 {
				b.goldB.Append(d.LabelNames[y])
			} else {
				b.goldB.AppendNull()
			}
		}
		b.predB.Append(b.m.LabelNames[a.Labels[j]])
		if b.confB != nil {
			b.confB.Append(a.Confidence[j])
		}
		if b.logpB != nil {
			b.logpB.Append(a.LogProb)
		}
		if b.chunkB != nil {
			if c := a.ChunkConfidence[j]; math.IsNaN(c) {
				b.chunkB.AppendNull()
			} else {
				b.chunkB.Append(c)
			}
		}
		if b.rankB != nil {
			b.rankB.Append(int32(rank))
		}
	}
	b.rows += hi - lo
}

// flush emits the rows built so far as a record batch, if any.
func (b *batcher) flush(emit func(arrow.RecordBatch) error) error {
	if b.rows == 0 {
		return nil
	}
	rec := b.b.NewRecordBatch()
	defer rec.Release()
	b.rows = 0
	return emit(rec)
}

// writeCoNLL writes the sentences of chunk t as CoNLL text: a line per
// token (its columns, the gold label, the predicted one) and a blank line
// after each sentence. With n-best each labelling is such a block, headed
// by CRF++'s n-best line "# RANK PROBABILITY" (ranks from 0, the best).
func writeCoNLL(bw *bufio.Writer, t *FeatureTable, m *crf.Model, p *Predictions) error {
	d := t.Data
	for i := 0; i < d.Len(); i++ {
		if err := checkCoNLLSentence(t, m, p, i); err != nil {
			return err
		}
		lo, hi := d.SentStart[i], d.SentStart[i+1]
		if p.Alternatives == nil {
			if err := writeCoNLLBlock(bw, t, m, lo, hi, p.Labels[lo:hi]); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(bw, "# 0 %.6f\n", math.Exp(p.LogProb[i]))
		if err := writeCoNLLBlock(bw, t, m, lo, hi, p.Labels[lo:hi]); err != nil {
			return err
		}
		for r, a := range p.Alternatives[i] {
			fmt.Fprintf(bw, "# %d %.6f\n", r+1, math.Exp(a.LogProb))
			if err := writeCoNLLBlock(bw, t, m, lo, hi, a.Labels); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeCoNLLBlock writes tokens lo..hi-1 of t labelled pred, and a blank
// line.
func writeCoNLLBlock(bw *bufio.Writer, t *FeatureTable, m *crf.Model, lo, hi int, pred []int32) error {
	d := t.Data
	for tok := lo; tok < hi; tok++ {
		if t.Text != nil {
			for c := range t.Columns {
				bw.WriteString(t.Text[c][tok])
				bw.WriteByte(' ')
			}
		}
		if y := d.Labels[tok]; y >= 0 {
			bw.WriteString(d.LabelNames[y])
			bw.WriteByte(' ')
		}
		bw.WriteString(m.LabelNames[pred[tok-lo]])
		if err := bw.WriteByte('\n'); err != nil {
			return err
		}
	}
	return bw.WriteByte('\n')
}

// checkCoNLLSentence refuses sentence i of t when one of the cells CoNLL
// would write holds whitespace or is empty: CoNLL separates columns by
// whitespace and sentences by blank lines, so such a cell (a token table's
// "New York") would write a file that reads back with other columns. There
// is no standard escape for it in CoNLL; Arrow and Parquet keep any text.
func checkCoNLLSentence(t *FeatureTable, m *crf.Model, p *Predictions, i int) error {
	d := t.Data
	bad := func(tok int, what, v string) error {
		problem := "holds whitespace"
		if v == "" {
			problem = "is empty"
		}
		return fmt.Errorf("decode %w", &option.Error{Field: "PredictionOptions.Format", Value: PredictionCoNLL,
			Msg: fmt.Sprintf("sentence %d, token %d: %s %q %s, which CoNLL cannot hold (it separates columns by whitespace and sentences by blank lines, so the file would not read back); write {PredictionOptions.Format} parquet or arrow, which keep any text",
				t.FirstSentence+i+1, tok-d.SentStart[i]+1, what, v, problem)})
	}
	for tok := d.SentStart[i]; tok < d.SentStart[i+1]; tok++ {
		if t.Text != nil {
			for c, col := range t.Columns {
				if v := t.Text[c][tok]; !conllCell(v) {
					return bad(tok, "column "+col, v)
				}
			}
		}
		if y := d.Labels[tok]; y >= 0 && !conllCell(d.LabelNames[y]) {
			return bad(tok, "the gold label", d.LabelNames[y])
		}
		if v := m.LabelNames[p.Labels[tok]]; !conllCell(v) {
			return bad(tok, "the predicted label", v)
		}
		if p.Alternatives != nil {
			for _, a := range p.Alternatives[i] {
				if v := m.LabelNames[a.Labels[tok-d.SentStart[i]]]; !conllCell(v) {
					return bad(tok, "a predicted label", v)
				}
			}
		}
	}
	return nil
}

// conllCell reports whether v can be a column of a CoNLL line: not empty,
// and without the spaces and tabs that separate columns (what dualcrf's
// CoNLL reader splits on; a no-break space belongs to its word) or the
// line ends that separate tokens.
func conllCell(v string) bool {
	return v != "" && !strings.ContainsAny(v, " \t\n\r")
}
