package featurize

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// crfsuiteChunkingTemplates are the 19 templates of CRFsuite's
// example/chunking.py as (column, offset) lists; column 0 is the word, 1 the
// part-of-speech tag.
var crfsuiteChunkingTemplates = [][]struct{ column, offset int }{
	{{0, -2}}, {{0, -1}}, {{0, 0}}, {{0, 1}}, {{0, 2}},
	{{0, -1}, {0, 0}}, {{0, 0}, {0, 1}},
	{{1, -2}}, {{1, -1}}, {{1, 0}}, {{1, 1}}, {{1, 2}},
	{{1, -2}, {1, -1}}, {{1, -1}, {1, 0}}, {{1, 0}, {1, 1}}, {{1, 1}, {1, 2}},
	{{1, -2}, {1, -1}, {1, 0}}, {{1, -1}, {1, 0}, {1, 1}}, {{1, 0}, {1, 1}, {1, 2}},
}

// WriteCRFsuiteChunking writes, for the sentences of r (CoNLL-2000
// columns: word, part-of-speech tag, label), the CRFsuite attribute file
// that CRFsuite's example/chunking.py (with crfutils.py) makes: per token
// the label, then one attribute per template whose positions all fall
// inside the sentence, named like "w[-1]|w[0]=He|reckons", then "__BOS__"
// on the first token and "__EOS__" on the last; a blank line after each
// sentence; name is r's display name, for errors. As crfutils does, ':' is written "__COLON__"; '\' is escaped as
// "\\" (CRFsuite's own escape: crfutils leaves it, which reads back the
// same on CoNLL-2000, which has no "\\" or "\:").
//
// It is the file crfsuite learn trains on in CRFsuite's chunking example;
// `dualcrf featurize --input-format crfsuite` reads it back.
func WriteCRFsuiteChunking(w io.Writer, r Reader, name string) error {
	columnNames := [2]string{"w", "pos"}
	names := make([]string, len(crfsuiteChunkingTemplates))
	for i, tpl := range crfsuiteChunkingTemplates {
		parts := make([]string, len(tpl))
		for j, item := range tpl {
			parts[j] = fmt.Sprintf("%s[%d]", columnNames[item.column], item.offset)
		}
		names[i] = strings.Join(parts, "|")
	}
	escape := strings.NewReplacer(`\`, `\\`, ":", "__COLON__")
	bw := bufio.NewWriter(w)
	var a strings.Builder
	for r.Scan() {
		s := r.Sentence()
		n := s.Len()
		for t := 0; t < n; t++ {
			if t >= len(s.Tokens) || len(s.Tokens[t]) < 2 || s.Labels == nil {
				return &SyntaxError{File: name, Line: s.TokenLine(t), Msg: "want word, part-of-speech and label columns (CoNLL-2000)"}
			}
		}
		for t := 0; t < n; t++ {
			bw.WriteString(s.Labels[t])
		templates:
			for i, tpl := range crfsuiteChunkingTemplates {
				for _, item := range tpl {
					if p := t + item.offset; p < 0 || p >= n {
						continue templates
					}
				}
				a.Reset()
				a.WriteString(names[i])
				sep := "="
				for _, item := range tpl {
					a.WriteString(sep)
					a.WriteString(s.Tokens[t+item.offset][item.column])
					sep = "|"
				}
				bw.WriteByte('\t')
				escape.WriteString(bw, a.String())
			}
			if t == 0 {
				bw.WriteString("\t__BOS__")
			}
			if t == n-1 {
				bw.WriteString("\t__EOS__")
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
