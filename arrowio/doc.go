// Package arrowio reads and writes tables as Arrow IPC, in the stream and
// the file format with optional zstd or lz4 body compression, and as
// Parquet. NewRecordWriter writes record batches of one schema, and never
// makes a failed output look complete; OpenRecordReader reads any of these
// from an io.Reader, concatenations of IPC streams and files included
// (`cat a.arrow b.arrow`), and checks the flatbuffer and Thrift metadata
// before arrow-go acts on it, so that corrupt input is an error, never a
// panic or a huge allocation; ValidateBatch checks a batch's buffers before
// its values are read.
//
// The codec knows nothing of the tables it carries (package tables holds
// dualcrf's, and tells the reader which schema metadata may differ between
// concatenated parts) nor of paths, standard streams and atomic outputs
// (package pipeline).
package arrowio

import (
	"io"
	"io/fs"
)

// regularFile is an input that can be read in place: what pipeline's
// OpenInput returns for an uncompressed regular file, or an *os.File.
type regularFile interface {
	io.ReaderAt
	io.Seeker
	Stat() (fs.FileInfo, error)
}
