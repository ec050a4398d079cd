package tables

import (
	"bufio"
	"errors"
	"fmt"
	"io"
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
	LogProb    []float64 // per sentence: log p(pred | x), with marginals (nil without)
}

// batchTokens is the target number of rows per prediction record batch
// (and Parquet row group); batches are cut on sentence boundaries.
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
// sentence boundaries, or CoNLL text flushed after every chunk. It keeps at
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
	schema     *arrow.Schema
	b          *array.RecordBuilder
	m          *crf.Model
	gold, marg bool
	ncols      int
	rows       int
	sentence   *array.Int64Builder
	position   *array.Int32Builder
	text       []*array.StringBuilder
	goldB      *array.StringBuilder
	predB      *array.StringBuilder
	confB      *array.Float64Builder
	logpB      *array.Float64Builder
}

// newBatcher fixes the prediction schema from the first chunk t and its
// predictions p.
func newBatcher(t *FeatureTable, p *Predictions, m *crf.Model, md map[string]string, mem memory.Allocator) (*batcher, error) {
	gold := slices.ContainsFunc(t.Data.Labels, func(y int32) bool { return y >= 0 })
	marg := p.Confidence != nil
	schema, err := schemas.PredictionSchema(t.Columns, gold, marg, md)
	if err != nil {
		return nil, err
	}
	b := &batcher{schema: schema, b: array.NewRecordBuilder(mem, schema), m: m, gold: gold, marg: marg, ncols: len(t.Columns)}
	b.sentence = b.b.Field(0).(*array.Int64Builder)
	b.position = b.b.Field(1).(*array.Int32Builder)
	for c := range t.Columns {
		b.text = append(b.text, b.b.Field(2+c).(*array.StringBuilder))
	}
	col := 2 + b.ncols
	if gold {
		b.goldB = b.b.Field(col).(*array.StringBuilder)
		col++
	}
	b.predB = b.b.Field(col).(*array.StringBuilder)
	if marg {
		b.confB = b.b.Field(col + 1).(*array.Float64Builder)
		b.logpB = b.b.Field(col + 2).(*array.Float64Builder)
	}
	return b, nil
}

func (b *batcher) release() { b.b.Release() }

// add appends the rows of chunk t, calling emit with each batch that
// reaches batchTokens rows (released after emit returns).
func (b *batcher) add(t *FeatureTable, p *Predictions, emit func(arrow.RecordBatch) error) error {
	d := t.Data
	if len(t.Columns) != b.ncols || (p.Confidence != nil) != b.marg {
		return fmt.Errorf("decode: sentence %d: the chunk's columns differ from the first chunk's", t.FirstSentence)
	}
	for i := 0; i < d.Len(); i++ {
		lo, hi := d.SentStart[i], d.SentStart[i+1]
		if !b.gold && slices.ContainsFunc(d.Labels[lo:hi], func(y int32) bool { return y >= 0 }) {
			return fmt.Errorf("decode: sentence %d has gold labels, but the sentences before it in the first chunk had none, "+
				"so the prediction table has no gold column", t.FirstSentence+i)
		}
		for tok := lo; tok < hi; tok++ {
			b.sentence.Append(int64(t.FirstSentence + i))
			b.position.Append(int32(tok - lo))
			for c, sb := range b.text {
				if t.Text != nil {
					sb.Append(t.Text[c][tok])
				} else {
					sb.AppendNull()
				}
			}
			if b.gold {
				if y := d.Labels[tok]; y >= 0 {
					b.goldB.Append(d.LabelNames[y])
				} else {
					b.goldB.AppendNull()
				}
			}
			b.predB.Append(b.m.LabelNames[p.Labels[tok]])
			if b.marg {
				b.confB.Append(p.Confidence[tok])
				b.logpB.Append(p.LogProb[i])
			}
		}
		b.rows += hi - lo
		if b.rows >= batchTokens {
			if err := b.flush(emit); err != nil {
				return err
			}
		}
	}
	return nil
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

func writeCoNLL(bw *bufio.Writer, t *FeatureTable, m *crf.Model, p *Predictions) error {
	d := t.Data
	for i := 0; i < d.Len(); i++ {
		if err := checkCoNLLSentence(t, m, p, i); err != nil {
			return err
		}
		for tok := d.SentStart[i]; tok < d.SentStart[i+1]; tok++ {
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
			bw.WriteString(m.LabelNames[p.Labels[tok]])
			if err := bw.WriteByte('\n'); err != nil {
				return err
			}
		}
		if err := bw.WriteByte('\n'); err != nil {
			return err
		}
	}
	return nil
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
