package featurize

import (
	"strings"
	"testing"
)

// TestReaderMessages pins the errors of the text readers that issue 10
// found wrong or missing: each names the file, the line and the problem.
func TestReaderMessages(t *testing.T) {
	for _, tc := range []struct {
		kind  readersKind
		input string
		want  string // the whole error text
	}{
		// A value beyond float64's range was taken as part of the name.
		{"crfsuite", "B-NP\tw=a:1e309\n", `bad.txt:1: attribute value is beyond the range of float64 (±1.8e308): "w=a:1e309"`},
		{"crfsuite", "B-NP\tx:1\n\nO\tw=a:-1e400\n", `bad.txt:3: attribute value is beyond the range of float64 (±1.8e308): "w=a:-1e400"`},
	} {
		_, err := readersReadAll(tc.kind.reader(strings.NewReader(tc.input), "bad.txt"))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s %q: error %v, want %s", tc.kind, tc.input, err, tc.want)
		}
	}
}

// TestCRFsuiteTinyValues checks that a value that underflows to zero or a
// subnormal is a value, not an error.
func TestCRFsuiteTinyValues(t *testing.T) {
	r := NewCRFsuiteReader(strings.NewReader("B\ta:1e-400\tb:4e-320\n"), "tiny.txt")
	if !r.Scan() {
		t.Fatal(r.Err())
	}
	row := r.Sentence().Attrs[0]
	if len(row) != 2 || row[0].Name != "a" || row[0].Value != 0 || row[1].Name != "b" || !(row[1].Value > 0) {
		t.Errorf("attributes %+v, want a=0 and b subnormal", row)
	}
}
