// Command crfsuite-ner writes a CRFsuite attribute file of the features of
// sklearn-crfsuite's tutorial (word2features: the CoNLL-2002 NER example)
// from a CoNLL-2002 corpus (word, part-of-speech tag and entity label per
// line; gzip or zstd is read transparently; -DOCSTART- lines dropped), so
// that CRFsuite and dualcrf train on the very same attributes (from
// experiments/):
//
//	go run ./crfsuite-ner $DUALCRF_DATA/conll2002/ned.train.gz > train.txt
//	crfsuite learn -a lbfgs -p c1=0.1 -p c2=0.1 -p feature.possible_transitions=1 -m cs.model train.txt
//	dualcrf featurize --input-format crfsuite -o train.arrow train.txt
//	dualcrf train --l1 0.1/n --lambda 0.2/n --feature-space observed --no-bias -o model.arrow train.arrow
//
// Per token: bias; word.lower(); word[-3:] and word[-2:]; word.isupper(),
// word.istitle() and word.isdigit() when true; postag and postag[:2]; the
// previous and next words' lower(), istitle(), isupper(), postag and
// postag[:2] under the prefixes -1: and +1:; BOS at the first token and
// EOS at the last. A string feature is the attribute key=value, a true
// boolean the attribute key (the tutorial's False values weigh zero: the
// attribute is left out), every value 1. Names escape ':' and '\' as
// CRFsuite reads them (\: and \\). Slices and the case tests follow
// Python's str on code points.
//
// With no argument or "-" it reads standard input; -o FILE writes FILE
// instead of standard output (nothing is left behind on failure).
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/dualcrf/dualcrf/featurize"
	"github.com/dualcrf/dualcrf/pipeline"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "crfsuite-ner:", err)
		os.Exit(1)
	}
}

// run parses the arguments and writes the attribute file.
func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("crfsuite-ner", flag.ContinueOnError)
	out := fs.String("o", "-", "output file (- = standard output)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return fmt.Errorf("want one CoNLL-2002 file (or -), got %d", fs.NArg())
	}
	rc, name, err := pipeline.OpenInput(fs.Arg(0))
	if err != nil {
		return err
	}
	defer rc.Close()
	r := featurize.NewConllReader(rc, name, featurize.DefaultConllOptions())
	if *out == "-" {
		return write(stdout, r, name)
	}
	return writeFile(*out, func(w io.Writer) error { return write(w, r, name) })
}

// write writes the attribute lines of every sentence r reads.
func write(w io.Writer, r featurize.Reader, name string) error {
	bw := bufio.NewWriter(w)
	escape := strings.NewReplacer(`\`, `\\`, ":", `\:`)
	for r.Scan() {
		s := r.Sentence()
		n := s.Len()
		for t := 0; t < n; t++ {
			if t >= len(s.Tokens) || len(s.Tokens[t]) < 2 || s.Labels == nil {
				return &featurize.SyntaxError{File: name, Line: s.TokenLine(t), Msg: "want word, part-of-speech and label columns (CoNLL-2002)"}
			}
		}
		for t := 0; t < n; t++ {
			bw.WriteString(s.Labels[t])
			for _, a := range tokenFeatures(s.Tokens, t) {
				bw.WriteByte('\t')
				escape.WriteString(bw, a)
			}
			bw.WriteByte('\n')
		}
		bw.WriteByte('\n')
	}
	if err := r.Err(); err != nil {
		return err
	}
	return bw.Flush()
}

// tokenFeatures returns the attributes of token t of a sentence whose
// tokens are (word, postag) columns: the tutorial's word2features.
func tokenFeatures(tokens [][]string, t int) []string {
	word, pos := tokens[t][0], tokens[t][1]
	f := []string{"bias", "word.lower()=" + strings.ToLower(word), "word[-3:]=" + suffix(word, 3), "word[-2:]=" + suffix(word, 2)}
	f = flag3(f, "", word)
	if isDigit(word) {
		f = append(f, "word.isdigit()")
	}
	f = append(f, "postag="+pos, "postag[:2]="+prefix(pos, 2))
	neighbour := func(k int, p string) {
		w, q := tokens[k][0], tokens[k][1]
		f = append(f, p+"word.lower()="+strings.ToLower(w))
		f = flag3(f, p, w)
		f = append(f, p+"postag="+q, p+"postag[:2]="+prefix(q, 2))
	}
	if t > 0 {
		neighbour(t-1, "-1:")
	} else {
		f = append(f, "BOS")
	}
	if t < len(tokens)-1 {
		neighbour(t+1, "+1:")
	} else {
		f = append(f, "EOS")
	}
	return f
}

// flag3 appends the tutorial's word.istitle() and word.isupper() (the
// token's own first isupper, as word2features lists them) when true.
func flag3(f []string, p, w string) []string {
	if p == "" {
		if isUpper(w) {
			f = append(f, "word.isupper()")
		}
		if isTitle(w) {
			f = append(f, "word.istitle()")
		}
		return f
	}
	if isTitle(w) {
		f = append(f, p+"word.istitle()")
	}
	if isUpper(w) {
		f = append(f, p+"word.isupper()")
	}
	return f
}

// suffix is Python's s[-k:] on code points.
func suffix(s string, k int) string {
	r := []rune(s)
	return string(r[max(0, len(r)-k):])
}

// prefix is Python's s[:k] on code points.
func prefix(s string, k int) string {
	r := []rune(s)
	return string(r[:min(k, len(r))])
}

// isUpper is Python's str.isupper: at least one cased character, and every
// cased one upper case.
func isUpper(s string) bool {
	cased := false
	for _, c := range s {
		if unicode.IsLower(c) || unicode.IsTitle(c) {
			return false
		}
		if unicode.IsUpper(c) {
			cased = true
		}
	}
	return cased
}

// isTitle is Python's str.istitle: at least one cased character; upper-
// and title-case characters only after uncased ones, lower-case ones only
// after cased ones.
func isTitle(s string) bool {
	cased, prevCased := false, false
	for _, c := range s {
		switch {
		case unicode.IsUpper(c) || unicode.IsTitle(c):
			if prevCased {
				return false
			}
			prevCased, cased = true, true
		case unicode.IsLower(c):
			if !prevCased {
				return false
			}
			prevCased, cased = true, true
		default:
			prevCased = false
		}
	}
	return cased
}

// isDigit is Python's str.isdigit, for decimal digits: not empty, every
// character a digit.
func isDigit(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !unicode.IsDigit(c) {
			return false
		}
	}
	return true
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
