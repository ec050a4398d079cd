package stage

import (
	"cmp"
	"context"
	"errors"
	"io"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/tables"

	"github.com/dualcrf/dualcrf/pipeline"
)

// Input is a stage's input: the file (or, for Featurize, directory) at
// Path, the reader R, or the Arrow records Records (for the stages that
// read a table: Decode without Text, Eval, ReadFeatureTable), which
// messages call Name ("": "<stdin>", "<records>"). Gzip and zstd are
// decompressed. Set one of Path, R and Records: the zero Input is refused,
// and a stage reads the process's standard input only when handed os.Stdin
// as R.
type Input struct {
	Path    string
	R       io.Reader
	Records array.RecordReader
	Name    string
}

// File is the input at path.
func File(path string) Input { return Input{Path: path} }

// Reader is the input r, which messages call name.
func Reader(r io.Reader, name string) Input { return Input{R: r, Name: name} }

// Records is the table of the record reader rr (made by other Arrow code,
// or held in memory), which messages call name. The stage reads rr to its
// end and does not release it: the caller does.
func Records(rr array.RecordReader, name string) Input { return Input{Records: rr, Name: name} }

// errNoInput refuses the zero Input.
var errNoInput = errors.New("stage: no input: set Input.Path or Input.R")

// source is in as the pipeline reads it, its reads ending with ctx.
func (in Input) source(ctx context.Context) (pipeline.Source, error) {
	switch {
	case in.Records != nil:
		return pipeline.Source{}, errors.New("stage: Input.Records: this stage reads text or bytes, not Arrow records")
	case in.R != nil && in.Path == "":
		return pipeline.Source{Path: "-", Stdin: in.R, StdinLabel: in.Name, Ctx: ctx}, nil
	case in.R == nil && in.Path != "" && !pipeline.IsStdin(in.Path):
		return pipeline.Source{Path: in.Path, Ctx: ctx}, nil
	case in.R == nil && in.Path != "":
		return pipeline.Source{}, errors.New(`stage: Input.Path "-" is not a file: give standard input as Input.R`)
	case in.R != nil:
		return pipeline.Source{}, errors.New("stage: Input has both Path and R: set one")
	}
	return pipeline.Source{}, errNoInput
}

// open opens in for reading once.
func (in Input) open(ctx context.Context) (io.ReadCloser, string, error) {
	src, err := in.source(ctx)
	if err != nil {
		return nil, "", err
	}
	return src.Open()
}

// records opens in as a table's record reader: Records itself, or the
// bytes of Path or R read as Arrow IPC or Parquet. Call done after the last
// read.
func (in Input) records(ctx context.Context) (rr array.RecordReader, name string, done func(), err error) {
	if in.Records != nil {
		if in.Path != "" || in.R != nil {
			return nil, "", nil, errors.New("stage: Input has Records and Path or R: set one")
		}
		return in.Records, cmp.Or(in.Name, "<records>"), func() {}, nil
	}
	r, name, err := in.open(ctx)
	if err != nil {
		return nil, "", nil, err
	}
	rr, err = tables.OpenRecordReader(r, name, arrowio.ReaderOptions{})
	if err != nil {
		r.Close()
		return nil, "", nil, err
	}
	return rr, name, func() {
		rr.Release()
		r.Close()
	}, nil
}
