package featurize

import (
	"errors"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/option"
)

// TestOptionWords: an error that names an option names it by its Go
// field, in an *option.Error in the chain that a command renders in its
// own words (its flags); a warning names it by OptionName.
func TestOptionWords(t *testing.T) {
	flag := map[string]string{"InputOptions.MaxLineBytes": "--max-line-bytes", "InputOptions.Format": "--input-format",
		"RunOptions.Templates": "--template"}
	name := func(field string) string { return flag[field] }

	r, _ := newFormatReader(strings.NewReader("a B\nabcdefghij B\n"), "in.txt", InputOptions{Format: "conll", MaxLineBytes: 5})
	_, err := readAllSentences(r)
	var se *SyntaxError
	var oe *option.Error
	if !errors.As(err, &se) || !errors.As(err, &oe) || !strings.Contains(err.Error(), "(the limit, InputOptions.MaxLineBytes;") {
		t.Fatalf("line limit: %v", err)
	}
	if got := oe.Format(name); !strings.HasPrefix(got, "line longer than 5 bytes (the limit, --max-line-bytes;") {
		t.Errorf("line limit rendered: %s", got)
	}

	_, _, err = DefaultTemplates([]string{"a", "b"})
	if !errors.As(err, &oe) || !strings.Contains(err.Error(), "choose one with RunOptions.Templates (") ||
		!strings.Contains(oe.Format(name), "choose one with --template (") {
		t.Errorf("DefaultTemplates: %v", err)
	}

	var warned []string
	opts := RunOptions{Input: InputOptions{Format: "conll"}, TrainedColumns: []string{"word", "pos"},
		Warn: func(msg string) { warned = append(warned, msg) }}
	r, _ = newFormatReader(strings.NewReader("a b c d e\n"), "in.txt", opts.Input)
	if _, err := readAllSentences(r); err != nil {
		t.Fatal(err)
	}
	checkColumns(r, "in.txt", opts)
	opts.OptionName = name
	checkColumns(r, "in.txt", opts)
	if len(warned) != 2 || !strings.HasSuffix(warned[0], "read it with InputOptions.Format plain (or one token a line: InputOptions.Format tokens)") ||
		!strings.HasSuffix(warned[1], "read it with --input-format plain (or one token a line: --input-format tokens)") {
		t.Errorf("warnings %q", warned)
	}
}
