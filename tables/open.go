package tables

import (
	"io"
	"slices"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/schemas"
)

// OpenRecordReader opens the dualcrf table in r: arrowio.OpenRecordReader,
// with the parts of a concatenated input (`cat a.arrow b.arrow`) allowed to
// differ in schemas.KeySource and schemas.KeyCreatedBy, which name where a
// part came from and what wrote it, and in nothing else.
func OpenRecordReader(r io.Reader, name string, opts arrowio.ReaderOptions) (array.RecordReader, error) {
	opts.PerPartMetadata = append(slices.Clone(opts.PerPartMetadata), schemas.KeySource, schemas.KeyCreatedBy)
	return arrowio.OpenRecordReader(r, name, opts)
}
