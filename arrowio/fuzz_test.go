package arrowio

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// ipcFuzzSeeds returns the files of testdata/ipc (every kind of file the
// tool writes, see make.sh) and concatenations of them.
func ipcFuzzSeeds(f *testing.F) [][]byte {
	paths, err := filepath.Glob(filepath.Join("testdata", "ipc", "*.arrow*"))
	if err != nil {
		f.Fatal(err)
	}
	more, _ := filepath.Glob(filepath.Join("testdata", "ipc", "*.feather"))
	paths = append(paths, more...)
	if len(paths) < 7 {
		f.Fatalf("fuzz seeds missing: %v (run testdata/ipc/make.sh)", paths)
	}
	byName := map[string][]byte{}
	var seeds [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		byName[filepath.Base(p)] = b
		seeds = append(seeds, b)
	}
	feature, lz4, zstdFile := byName["feature.arrow"], byName["feature.lz4.arrows"], byName["feature.zstd.feather"]
	seeds = append(seeds,
		cat(feature, feature),              // stream + stream
		cat(zstdFile, zstdFile),            // file + file
		cat(zstdFile, lz4, feature),        // file + streams
		cat(feature, zstdFile),             // stream + file
		cat(feature, byName["pred.arrow"]), // different schemas
		cat(feature, []byte("trailing")),   // garbage after a stream
		cat(byName["model.arrow"], []byte{0}),
	)
	return seeds
}

// FuzzOpenRecordReader: OpenRecordReader over any bytes (streams, files,
// concatenations, corruptions of them) never panics nor allocates beyond
// its caps, names the input in its errors, numbers streams in order and,
// when it reads the input without error, releases all it allocated.
// (After an error it may not: arrow-go recovers its own panics on corrupt
// batches without releasing the buffers it had allocated, which only a
// checked allocator notices; the Go allocator's garbage collector frees
// them.)
func FuzzOpenRecordReader(f *testing.F) {
	for _, s := range ipcFuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		rr, err := OpenRecordReader(bytes.NewReader(data), "fuzz", ReaderOptions{Mem: mem})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz: ") {
				t.Fatalf("error %q does not name the input", err)
			}
			return
		}
		if rr.Schema() == nil {
			t.Fatal("no schema")
		}
		stream := 0
		for rr.Next() {
			rec := rr.RecordBatch()
			if rec == nil {
				t.Fatal("Next without a batch")
			}
			_ = rec.NumRows()
			s := StreamOf(rr)
			if s < stream {
				t.Fatalf("stream %d after %d", s, stream)
			}
			stream = s
		}
		err = rr.Err()
		rr.Release()
		switch {
		case err == nil:
			mem.AssertSize(t, 0)
		case !strings.HasPrefix(err.Error(), "fuzz: "):
			t.Fatalf("error %q does not name the input", err)
		}
	})
}
