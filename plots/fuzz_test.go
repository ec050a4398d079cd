package plots

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/tables"
)

// FuzzReadRun: any bytes as a training log give a run that can be drawn,
// or an error naming the file; never a panic.
func FuzzReadRun(f *testing.F) {
	var buf bytes.Buffer
	if err := tables.WriteLog(&buf, testRuns()[0].Rows, nil, arrowio.WriterOptions{}); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add(buf.Bytes()[:buf.Len()/2])
	f.Add([]byte("ARROW1"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "fuzz.log.arrow")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		run, err := ReadRun(p, "fuzz")
		if err != nil {
			if !strings.Contains(err.Error(), p) {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		var out bytes.Buffer
		if err := LogFigure([]Run{run}, LogOptions{Ref: math.NaN()}).Write(&out, SVG); err != nil {
			t.Fatalf("a log that reads does not draw: %v", err)
		}
	})
}
