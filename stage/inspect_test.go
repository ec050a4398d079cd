package stage

import (
	"bytes"
	"crypto/rand"
	"io"
	"runtime"
	"testing"

	"github.com/dualcrf/dualcrf/pipeline"
)

// TestInspectSpoolsStdin: inspect reads standard input twice from a
// temporary file, not from memory (it held the whole input in memory: a
// table of any size read from a pipe was a table of that size on the
// heap); both reads see the input's bytes.
func TestInspectSpoolsStdin(t *testing.T) {
	data := make([]byte, 16<<20)
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	open, done, err := reopenable(pipeline.Source{Path: "-", Stdin: bytes.NewReader(data)})
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	runtime.GC()
	runtime.ReadMemStats(&after)
	if held := int64(after.HeapAlloc) - int64(before.HeapAlloc); held > 4<<20 {
		t.Errorf("%d MiB of the 16 MiB input held in memory", held>>20)
	}
	for range 2 {
		err := open(func(r io.Reader, name string) error {
			got, err := io.ReadAll(r)
			if err == nil && !bytes.Equal(got, data) {
				t.Errorf("%s: read back %d bytes, not the input's", name, len(got))
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	runtime.KeepAlive(data)
}
