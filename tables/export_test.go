package tables

import (
	"bufio"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/dualcrf/dualcrf/crf"
)

// The whole-table prediction writers, which PredictionWriter's chunked
// output is checked against (here and in package tables_test).

// PredictionFormats lists the output formats of a prediction table.
func PredictionFormats() []string {
	return []string{PredictionArrow, PredictionCoNLL, PredictionParquet}
}

// PredictionBatches calls emit with the prediction table of a whole table t
// and its predictions p in record batches cut on sentence boundaries (the
// record is released after emit returns), md in the schema metadata and
// buffers from mem (memory.DefaultAllocator when nil). Gold labels are
// written when t has any. PredictionWriter does the same chunk by chunk.
func PredictionBatches(t *FeatureTable, m *crf.Model, p *Predictions, md map[string]string, mem memory.Allocator,
	emit func(arrow.RecordBatch) error) (*arrow.Schema, error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	b, err := newBatcher(t, p, m, md, mem)
	if err != nil {
		return nil, err
	}
	defer b.release()
	if err := b.add(t, p, emit); err != nil {
		return b.schema, err
	}
	return b.schema, b.flush(emit)
}

// WriteCoNLL writes the predictions as CoNLL text: per token the
// pass-through columns, the gold label when present, and the predicted
// label, separated by spaces; a blank line after each sentence.
func WriteCoNLL(w io.Writer, t *FeatureTable, m *crf.Model, p *Predictions) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	if err := writeCoNLL(bw, t, m, p); err != nil {
		return err
	}
	return bw.Flush()
}
