package interop

import (
	"fmt"
	"io"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/featurize"
	"github.com/dualcrf/dualcrf/pipeline"
)

// TokenSchema is the token table WriteTokens writes: a plain lake layout,
// one row per token.
var TokenSchema = arrow.NewSchema([]arrow.Field{
	{Name: "sentence", Type: arrow.PrimitiveTypes.Int64},
	{Name: "position", Type: arrow.PrimitiveTypes.Int32},
	{Name: "word", Type: arrow.BinaryTypes.String},
	{Name: "pos", Type: arrow.BinaryTypes.String},
	{Name: "chunk", Type: arrow.BinaryTypes.String},
}, nil)

// WriteTokens reads the CoNLL-2000 file conll (word, POS, chunk; gzip is
// undone) repeat times over and writes it to w as a token table in format
// (arrowio.FormatParquet, FormatFile, FormatStream), 64 Ki rows a batch
// (a Parquet row group). Sentence ids number on across repetitions. It
// returns the number of tokens written.
func WriteTokens(conll string, w io.Writer, format arrowio.Format, repeat int) (int, error) {
	out, err := arrowio.NewRecordWriter(w, TokenSchema, arrowio.WriterOptions{Format: format})
	if err != nil {
		return 0, err
	}
	defer out.Abort()
	b := array.NewRecordBuilder(memory.DefaultAllocator, TokenSchema)
	defer b.Release()
	sid, rows, tokens := int64(0), 0, 0
	flush := func() error {
		if rows == 0 {
			return nil
		}
		rec := b.NewRecordBatch()
		defer rec.Release()
		rows = 0
		return out.Write(rec)
	}
	for range repeat {
		f, err := os.Open(conll)
		if err != nil {
			return tokens, err
		}
		in, err := pipeline.Decompress(f, conll)
		if err != nil {
			f.Close()
			return tokens, err
		}
		r := featurize.NewConllReader(in, conll, featurize.ConllOptions{Columns: []string{"word", "pos"}, LabelColumn: featurize.LabelLast})
		for r.Scan() {
			s := r.Sentence()
			if len(s.Tokens) == 0 || len(s.Tokens[0]) < 2 {
				f.Close()
				return tokens, fmt.Errorf("%s:%d: want word, POS and chunk columns", conll, s.Line)
			}
			for t, cells := range s.Tokens {
				b.Field(0).(*array.Int64Builder).Append(sid)
				b.Field(1).(*array.Int32Builder).Append(int32(t))
				b.Field(2).(*array.StringBuilder).Append(cells[0])
				b.Field(3).(*array.StringBuilder).Append(cells[1])
				b.Field(4).(*array.StringBuilder).Append(s.Labels[t])
				rows++
				tokens++
			}
			sid++
			if rows >= 1<<16 {
				if err := flush(); err != nil {
					f.Close()
					return tokens, err
				}
			}
		}
		in.Close()
		f.Close()
		if err := r.Err(); err != nil {
			return tokens, err
		}
	}
	if err := flush(); err != nil {
		return tokens, err
	}
	return tokens, out.Close()
}
