package featurize

import (
	"bufio"
	"bytes"
	"strings"
	"testing"
)

// TestWholeTable: an input that starts like a table is taken for one when
// its magic is followed by binary or it also ends with its magic, or it is
// an IPC stream; text that starts with the magic is not — on a seekable
// input and on one read once.
func TestWholeTable(t *testing.T) {
	for _, tc := range []struct {
		name string
		data string
		want bool
	}{
		{"conll starting PAR1", "PAR1 NN B-NP\nsaw VBD B-VP\n\n", false},
		{"conll starting ARROW1", "ARROW1\tNN\tB-NP\n\n", false},
		{"word PAR1x", "PAR1x NN O\n\n", false},
		{"parquet head", "PAR1\x15\x04\x15\x10rest", true},
		{"ipc file head", "ARROW1\x00\x00rest", true},
		{"ipc stream", "\xff\xff\xff\xff\x10\x00\x00\x00", true},
		{"text ending PAR1", "PAR1 NN O\nPAR1", true},
	} {
		seek := wholeTable(bytes.NewReader([]byte(tc.data)))
		once := wholeTable(bufio.NewReader(strings.NewReader(tc.data)))
		wantOnce := tc.want && tc.name != "text ending PAR1"
		if seek != tc.want || once != wantOnce {
			t.Errorf("%s: seekable %v, read once %v; want %v, %v", tc.name, seek, once, tc.want, wantOnce)
		}
	}
}
