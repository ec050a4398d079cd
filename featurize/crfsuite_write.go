package featurize

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/dualcrf/dualcrf/pipeline"
)

// Markers name the attributes that stand for a model's bias, start and end
// weights in a format that has none (CRFsuite; package crfsuite's
// MarkersOf chooses the names): Bias is added at every token, Start at the
// first token and End at the last, each with value 1, after the template
// attributes. An empty name adds nothing. An input attribute (@input)
// named like a marker is left out: it is not the marker, and the model does
// not know it.
type Markers struct{ Bias, Start, End string }

// names returns the markers' names that are set.
func (m Markers) names() []string {
	var n []string
	for _, s := range []string{m.Bias, m.Start, m.End} {
		if s != "" {
			n = append(n, s)
		}
	}
	return n
}

// isMarker reports whether name is one of m's names.
func (m Markers) isMarker(name string) bool {
	return name != "" && (name == m.Bias || name == m.Start || name == m.End)
}

// CRFsuiteNoLabel is the label field WriteCRFsuite writes for a token
// without a gold label (CRFsuite's lines always begin with one; its tagger
// reads it only to score).
const CRFsuiteNoLabel = "_"

// CRFsuiteSummary counts what WriteCRFsuite wrote.
type CRFsuiteSummary struct {
	Sentences, Tokens int
	Attributes        int // attribute fields written, markers included
	// Docstarts counts the CoNLL "-DOCSTART-" lines left out of the input.
	Docstarts int
}

// WriteCRFsuite featurizes the corpus in with opts' templates (chosen as Run
// chooses them when nil) and writes every token's attributes in CRFsuite's
// attribute format, the input of crfsuite tag and learn: per token a line
// with the gold label (CRFsuiteNoLabel when it has none), then each
// attribute, tab-separated, as NAME or NAME:VALUE when its value is not 1,
// then the markers mk; a blank line after each sentence. Names and labels
// escape '\' as "\\" and ':' as "\:" (CRFsuiteEscape), which CRFsuite reads
// back exactly. Every attribute the templates make is written, known to a
// model or not: CRFsuite's tagger ignores those its model does not know,
// as dualcrf's decode does. A name or label holding a TAB, a line break or
// a NUL byte, which the format cannot carry, is an error naming the
// token's line. The input is read once; opts.Vocab, MinCount and Writer do
// not apply.
func WriteCRFsuite(ctx context.Context, in pipeline.Source, out io.Writer, opts RunOptions, mk Markers) (CRFsuiteSummary, error) {
	opts.Input.Need = opts.Templates.requiredColumns()
	display := in.Name()
	src, err := openSource(ctx, in, display, opts.Input, false)
	if err != nil {
		return CRFsuiteSummary{}, err
	}
	defer src.Close()
	defer src.track(opts.Progress, in, 1).End()
	bw := bufio.NewWriterSize(out, 1<<16)
	var sum CRFsuiteSummary
	var line []byte
	stats, err := scanStats(ctx, src, display, opts, true, opts.Templates, func(_ []string, s *Sentence, feats [][]Feature) error {
		n := len(feats)
		for t, fs := range feats {
			label := CRFsuiteNoLabel
			if t < len(s.Labels) && s.Labels[t] != "" {
				label = s.Labels[t]
			}
			if err := crfsuiteWritable(label, "label"); err != nil {
				return &SyntaxError{File: display, Line: s.TokenLine(t), Msg: err.Error()}
			}
			line = CRFsuiteEscape(line[:0], label)
			for _, f := range fs {
				if mk.isMarker(f.Name) {
					continue
				}
				if err := crfsuiteWritable(f.Name, "attribute"); err != nil {
					return &SyntaxError{File: display, Line: s.TokenLine(t), Msg: err.Error()}
				}
				line = append(line, '\t')
				line = CRFsuiteEscape(line, f.Name)
				if f.Value != 1 {
					line = append(line, ':')
					line = strconv.AppendFloat(line, f.Value, 'g', -1, 64)
				}
				sum.Attributes++
			}
			for _, m := range markersAt(mk, t, n) {
				line = append(line, '\t')
				line = CRFsuiteEscape(line, m)
				sum.Attributes++
			}
			line = append(line, '\n')
			if _, err := bw.Write(line); err != nil {
				return err
			}
		}
		sum.Sentences++
		sum.Tokens += n
		return bw.WriteByte('\n')
	})
	if err != nil {
		if ctx.Err() != nil {
			return CRFsuiteSummary{}, ctx.Err()
		}
		return CRFsuiteSummary{}, err
	}
	sum.Docstarts = stats.docstarts
	if sum.Sentences == 0 {
		return CRFsuiteSummary{}, readerNoSentences(display)
	}
	if err := bw.Flush(); err != nil {
		return CRFsuiteSummary{}, err
	}
	noteStats(stats, display, opts)
	return sum, nil
}

// markersAt returns the markers of token t of a sentence of n tokens, in
// the order WriteCRFsuite and the Python module write them.
func markersAt(mk Markers, t, n int) []string {
	var out []string
	if mk.Bias != "" {
		out = append(out, mk.Bias)
	}
	if t == 0 && mk.Start != "" {
		out = append(out, mk.Start)
	}
	if t == n-1 && mk.End != "" {
		out = append(out, mk.End)
	}
	return out
}

// crfsuiteWritable refuses a name CRFsuite's attribute format cannot carry:
// one with a TAB (its field separator), a line break or a NUL byte (its
// names are C strings).
func crfsuiteWritable(name, what string) error {
	if i := strings.IndexAny(name, "\t\n\r\x00"); i >= 0 {
		return fmt.Errorf("the %s %q holds %q, which CRFsuite's attribute format cannot carry (TAB, line breaks and NUL bytes)", what, name, name[i])
	}
	return nil
}

// CRFsuiteEscape appends s to dst escaped for CRFsuite's attribute format:
// '\' as "\\" and ':' as "\:" (CRFsuiteUnescape undoes it, as CRFsuite's
// reader does).
func CRFsuiteEscape(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '\\' || c == ':' {
			dst = append(dst, '\\')
		}
		dst = append(dst, s[i])
	}
	return dst
}
