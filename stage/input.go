package stage

import (
	"context"
	"errors"
	"io"

	"github.com/dualcrf/dualcrf/pipeline"
)

// Input is a stage's input: the file (or, for Featurize, directory) at
// Path, or the reader R, which messages call Name ("": "<stdin>"). Gzip
// and zstd are decompressed. Set one of Path and R: the zero Input is
// refused, and a stage reads the process's standard input only when
// handed os.Stdin as R.
type Input struct {
	Path string
	R    io.Reader
	Name string
}

// File is the input at path.
func File(path string) Input { return Input{Path: path} }

// Reader is the input r, which messages call name.
func Reader(r io.Reader, name string) Input { return Input{R: r, Name: name} }

// errNoInput refuses the zero Input.
var errNoInput = errors.New("stage: no input: set Input.Path or Input.R")

// source is in as the pipeline reads it, its reads ending with ctx.
func (in Input) source(ctx context.Context) (pipeline.Source, error) {
	switch {
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
