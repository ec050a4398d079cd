package main

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/internal/ptytest"
)

// TestBinaryToTerminal: a stage whose standard output is a terminal refuses
// to write Arrow there unless told -o - (formerly it wrote the bytes).
func TestBinaryToTerminal(t *testing.T) {
	f := fixtures(t)
	for _, c := range []struct {
		args []string
		ok   bool
	}{
		{[]string{"decode", "-m", f.model, f.test}, false},
		{[]string{"featurize", "--model", f.model, f.testText}, false},
		{[]string{"synth", "-n", "2"}, false},
		{[]string{"decode", "-m", f.model, "-o", "-", f.test}, true},
		{[]string{"decode", "-m", f.model, "--format", "conll", f.test}, true},
		{[]string{"train", "-q", "--max-epochs", "1", f.train}, false},
		{[]string{"train", "-q", "--max-epochs", "1", "-o", "-", f.train}, true},
	} {
		ptmx, tty := ptytest.Open(t)
		go io.Copy(io.Discard, ptmx) // what reaches the terminal
		cmd := command(t.TempDir(), c.args...)
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = tty, &stderr
		err := cmd.Run()
		refused := strings.Contains(stderr.String(), "refusing to write binary Arrow IPC to a terminal")
		if c.ok != (err == nil) || refused == c.ok {
			t.Errorf("dualcrf %s: %v\n%s", strings.Join(c.args, " "), err, stderr.String())
		}
	}
}
