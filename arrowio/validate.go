package arrowio

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// ValidateBatch checks every column of rec in full before its values are
// read: buffer sizes, offsets within their value buffers, list and
// fixed-size-list lengths, dictionary indices within the dictionary, null
// counts against the null bitmaps, and UTF-8. Arrow arrays trust their
// buffers, so a damaged batch that is not validated makes accessors panic
// or read garbage. The error names the column; callers add the file and
// batch.
func ValidateBatch(rec arrow.RecordBatch) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("corrupt record batch: %v", p)
		}
	}()
	for i, col := range rec.Columns() {
		if col.Len() != int(rec.NumRows()) {
			return fmt.Errorf("column %q has %d rows, the batch %d", rec.ColumnName(i), col.Len(), rec.NumRows())
		}
		if err := array.ValidateFull(col); err != nil {
			return fmt.Errorf("column %q: %w", rec.ColumnName(i), err)
		}
	}
	return nil
}
