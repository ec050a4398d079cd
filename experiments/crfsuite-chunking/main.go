// Command crfsuite-chunking writes the CRFsuite attribute file that
// CRFsuite's example/chunking.py makes from a CoNLL-2000 corpus (word,
// part-of-speech tag and chunk label per line; gzip or zstd is read
// transparently), so that dualcrf and crfsuite can be run on the very same
// attributes (from experiments/):
//
//	go run ./crfsuite-chunking $DUALCRF_DATA/conll2000/train.txt.gz > train.crfsuite.txt
//	dualcrf featurize --input-format crfsuite -o cs.arrow train.crfsuite.txt
//	crfsuite learn -m cs.model train.crfsuite.txt
//
// With no argument or "-" it reads standard input; -o FILE writes FILE
// instead of standard output (nothing is left behind on failure).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/dualcrf/dualcrf/featurize"
	"github.com/dualcrf/dualcrf/pipeline"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "crfsuite-chunking:", err)
		os.Exit(1)
	}
}

// run parses the arguments and writes the attribute file.
func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("crfsuite-chunking", flag.ContinueOnError)
	out := fs.String("o", "-", "output file (- = standard output)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return fmt.Errorf("want one CoNLL-2000 file (or -), got %d", fs.NArg())
	}
	rc, name, err := pipeline.OpenInput(fs.Arg(0))
	if err != nil {
		return err
	}
	defer rc.Close()
	r := featurize.NewConllReader(rc, name, featurize.DefaultConllOptions())
	if *out == "-" {
		return featurize.WriteCRFsuiteChunking(stdout, r, name)
	}
	return writeFile(*out, func(w io.Writer) error { return featurize.WriteCRFsuiteChunking(w, r, name) })
}

// writeFile writes path through a temporary file in its directory, renamed
// into place only when fn succeeds.
func writeFile(path string, fn func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	err = fn(f)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		return errors.Join(err, os.Remove(f.Name()))
	}
	return nil
}
