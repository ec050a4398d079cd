package duals

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/crf/crftest"
	"github.com/dualcrf/dualcrf/internal/platform"
)

func testDataset(seed uint64, K int) *crf.Dataset {
	return crftest.RandomDataset(rand.New(rand.NewPCG(seed, 1)), 30, 6, 10, K, true)
}

// createFilled creates a duals file for d and fills it with values that
// exercise every bit: signed zeros, infinities, a NaN payload, subnormals.
func createFilled(t *testing.T, path string, d *crf.Dataset) {
	t.Helper()
	s, err := CreateFile(path, d, Float64)
	if err != nil {
		t.Fatal(err)
	}
	fillSpecial(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func specialValue(arr, i, j int) float64 {
	switch (i + j + arr) % 7 {
	case 0:
		return math.Copysign(0, -1)
	case 1:
		return math.Inf(-1)
	case 2:
		return math.Float64frombits(0x7ff8_0000_dead_beef)
	case 3:
		return 4.9e-324 * float64(1+j)
	default:
		return pattern(i, j) * math.Pi
	}
}

func fillSpecial(s Store) {
	for i := 0; i < s.Len(); i++ {
		for j := range f64(s, i) {
			f64(s, i)[j] = specialValue(0, i, j)
		}
	}
}

// TestFilePersists: what is written before Close is read back bit for
// bit by OpenFile, the file has the size the layout implies, and later
// writes persist too.
func TestFilePersists(t *testing.T) {
	d := testDataset(1, 4)
	path := filepath.Join(t.TempDir(), "duals.bin")
	createFilled(t, path, d)
	for round := 0; round < 2; round++ {
		s, err := OpenFile(path, d)
		if err != nil {
			t.Fatal(err)
		}
		entries := BlockOffsets(d)[d.Len()]
		arr := (8*entries + 4095) / 4096 * 4096
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if want := 4096 + arr; s.Bytes() != want || st.Size() != want {
			t.Fatalf("Bytes() = %d, file is %d bytes; header page + an aligned array of %d entries = %d", s.Bytes(), st.Size(), entries, want)
		}
		for i := 0; i < d.Len(); i++ {
			for j := range f64(s, i) {
				for arr, b := range [][]float64{f64(s, i)} {
					want := specialValue(arr, i, j)
					if round == 1 && arr == 0 && j == 0 {
						want = float64(i) + 0.125
					}
					if math.Float64bits(b[j]) != math.Float64bits(want) {
						t.Fatalf("round %d: array %d block %d entry %d = %x, wrote %x", round, arr, i, j, math.Float64bits(b[j]), math.Float64bits(want))
					}
				}
			}
			f64(s, i)[0] = float64(i) + 0.125
		}
		if err := s.Sync(); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFileOnDisk reads the file with plain I/O: the header fields are
// where the format says, and the arrays hold native little-endian float64
// at the offsets of BlockOffsets.
func TestFileOnDisk(t *testing.T) {
	d := testDataset(2, 3)
	path := filepath.Join(t.TempDir(), "duals.bin")
	createFilled(t, path, d)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	off := BlockOffsets(d)
	entries := uint64(off[d.Len()])
	if string(b[:8]) != "DUALCRF\x00" || le.Uint32(b[8:]) != 2 || le.Uint32(b[12:]) != 1 ||
		le.Uint64(b[16:]) != 3 || le.Uint64(b[24:]) != uint64(d.Len()) || le.Uint64(b[32:]) != entries {
		t.Fatalf("header: % x", b[:40])
	}
	fp := Fingerprint(d)
	if string(b[64:96]) != string(fp[:]) {
		t.Fatalf("header fingerprint % x, Fingerprint(d) % x", b[64:96], fp)
	}
	muAt, reserved, size := le.Uint64(b[40:]), le.Uint64(b[48:]), le.Uint64(b[56:])
	if muAt != 4096 || reserved != 0 || size != uint64(len(b)) || size < muAt+8*entries {
		t.Fatalf("array at %d (field 48 = %d) for %d entries, size %d of %d", muAt, reserved, entries, size, len(b))
	}
	for i := 0; i < d.Len(); i++ {
		for j := off[i]; j < off[i+1]; j++ {
			mu := le.Uint64(b[muAt+8*uint64(j):])
			if mu != math.Float64bits(specialValue(0, i, int(j-off[i]))) {
				t.Fatalf("block %d entry %d on disk: %x", i, j-off[i], mu)
			}
		}
	}
}

// TestFileRefusesOtherDataset: every way a dataset can differ is
// refused with a message naming the file and both values.
func TestFileRefusesOtherDataset(t *testing.T) {
	d := testDataset(3, 4)
	path := filepath.Join(t.TempDir(), "duals.bin")
	createFilled(t, path, d)

	otherLabel := cloneDataset(d)
	otherLabel.Labels[5] = (otherLabel.Labels[5] + 1) % 4
	otherAttr := cloneDataset(d)
	otherAttr.Attrs[0] = (otherAttr.Attrs[0] + 1) % int32(d.NumAttrs)
	fewer := cloneDataset(d)
	fewer.SentStart = fewer.SentStart[:d.Len()]
	fewer.Labels = fewer.Labels[:fewer.SentStart[len(fewer.SentStart)-1]]
	for _, tc := range []struct {
		name string
		d    *crf.Dataset
		want []string
	}{
		{"K", testDataset(3, 5), []string{path + ": ", "K = 4", "K = 5"}},
		{"n", fewer, []string{path + ": ", fmt.Sprint(d.Len(), " sentences"), fmt.Sprint(d.Len() - 1)}},
		{"label", otherLabel, []string{path + ": ", "fingerprint differs"}},
		{"attribute", otherAttr, []string{path + ": ", "fingerprint differs"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := OpenFile(path, tc.d)
			if err == nil {
				s.Close()
			}
			t.Log(err)
			if !errors.Is(err, ErrMismatch) {
				t.Fatalf("OpenFile: %v, want ErrMismatch", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	s, err := OpenFile(path, d) // the refusals left the file usable
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}

func cloneDataset(d *crf.Dataset) *crf.Dataset {
	c := *d
	c.SentStart = append([]int(nil), d.SentStart...)
	c.Labels = append([]int32(nil), d.Labels...)
	c.Attrs = append([]int32(nil), d.Attrs...)
	return &c
}

// TestFileRefusesDamagedFile: truncated files, corrupted headers, other
// versions, and the file a crash during creation leaves are refused.
func TestFileRefusesDamagedFile(t *testing.T) {
	d := testDataset(4, 4)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.bin")
	createFilled(t, good, d)
	orig, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	for _, tc := range []struct {
		name  string
		edit  func(b []byte) []byte
		want  string
		isErr error
	}{
		{"truncated-page", func(b []byte) []byte { return b[:len(b)-4096] }, "truncated", ErrFormat},
		{"truncated-byte", func(b []byte) []byte { return b[:len(b)-1] }, "truncated", ErrFormat},
		{"header-only", func(b []byte) []byte { return b[:100] }, "too short", ErrFormat},
		{"empty", func(b []byte) []byte { return nil }, "too short", ErrFormat},
		{"trailing", func(b []byte) []byte { return append(b, 0) }, "trailing", ErrFormat},
		{"magic", func(b []byte) []byte { b[0] = 'X'; return b }, "not a duals file", ErrFormat},
		{"version", func(b []byte) []byte { le.PutUint32(b[8:], 3); return b }, "version 3", ErrFormat},
		{"version-1", func(b []byte) []byte { return rechecksum(b, func(b []byte) { le.PutUint32(b[8:], 1) }) }, "format version 1, this program reads version 2", ErrFormat},
		{"K-bit", func(b []byte) []byte { b[16] ^= 1; return b }, "header is corrupted", ErrFormat},
		{"fingerprint-bit", func(b []byte) []byte { b[70] ^= 0x80; return b }, "header is corrupted", ErrFormat},
		{"checksum", func(b []byte) []byte { b[128] ^= 4; return b }, "header is corrupted", ErrFormat},
		{"crashed-creation", func(b []byte) []byte { clear(b[:4096]); return b }, "unfinished duals file", ErrFormat},
		{"dtype", func(b []byte) []byte { return rechecksum(b, func(b []byte) { le.PutUint32(b[12:], 4) }) }, "dtype code 4", ErrFormat},
		{"dtype-float32", func(b []byte) []byte { return rechecksum(b, func(b []byte) { le.PutUint32(b[12:], 2) }) }, "inconsistent header", ErrFormat},
		{"sizes", func(b []byte) []byte { return rechecksum(b, func(b []byte) { le.PutUint64(b[56:], 4096) }) }, "inconsistent header", ErrFormat},
		{"K-consistent", func(b []byte) []byte { return rechecksum(b, func(b []byte) { le.PutUint64(b[16:], 9) }) }, "K = 9, this one has K = 4", ErrMismatch},
		{"offsets", func(b []byte) []byte { return rechecksum(b, func(b []byte) { b[100] ^= 1 }) }, "block offset table", ErrMismatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".bin")
			if err := os.WriteFile(path, tc.edit(append([]byte(nil), orig...)), 0o666); err != nil {
				t.Fatal(err)
			}
			s, err := OpenFile(path, d)
			if err == nil {
				s.Close()
				t.Fatal("damaged file accepted")
			}
			t.Log(err)
			if !errors.Is(err, tc.isErr) || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), path+": ") {
				t.Fatalf("error %q: want %v naming %s and mentioning %q", err, tc.isErr, path, tc.want)
			}
		})
	}
}

// rechecksum applies edit to the header and fixes its CRC-32C.
func rechecksum(b []byte, edit func([]byte)) []byte {
	edit(b)
	binary.LittleEndian.PutUint32(b[128:], crc32.Checksum(b[:128], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// TestFileCreateRefusesExisting: an existing file is neither
// overwritten nor removed.
func TestFileCreateRefusesExisting(t *testing.T) {
	d := testDataset(5, 3)
	path := filepath.Join(t.TempDir(), "duals.bin")
	if err := os.WriteFile(path, []byte("precious"), 0o666); err != nil {
		t.Fatal(err)
	}
	s, err := CreateFile(path, d, Float64)
	if err == nil {
		s.Close()
		t.Fatal("created over an existing file")
	}
	if !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), "OpenFile") {
		t.Fatalf("error %q, want fs.ErrExist and a hint at OpenFile", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "precious" {
		t.Fatalf("existing file now holds %q", b)
	}
	if _, err := CreateFile(filepath.Join(t.TempDir(), "no", "such", "dir.bin"), d, Float64); err == nil {
		t.Fatal("created in a missing directory")
	}
}

// TestFileLocked: a file open in one store cannot be opened in another
// until the first is closed.
func TestFileLocked(t *testing.T) {
	d := testDataset(6, 3)
	path := filepath.Join(t.TempDir(), "duals.bin")
	s, err := CreateFile(path, d, Float64)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenFile(path, d); !platform.IsLocked(err) || !strings.Contains(err.Error(), path) {
		t.Fatalf("second open of a store in use: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err == nil {
		t.Fatal("Sync after Close succeeded")
	}
	s2, err := OpenFile(path, d)
	if err != nil {
		t.Fatalf("open after Close: %v", err)
	}
	s2.Close()
}

// TestFingerprint: equal datasets agree; any change to what a duals file or
// checkpoint depends on changes the fingerprint.
func TestFingerprint(t *testing.T) {
	d := testDataset(7, 4)
	base := Fingerprint(d)
	if Fingerprint(cloneDataset(d)) != base {
		t.Fatal("a copy of the dataset has another fingerprint")
	}
	edits := map[string]func(c *crf.Dataset){
		"K":        func(c *crf.Dataset) { c.NumLabels++ },
		"A":        func(c *crf.Dataset) { c.NumAttrs++ },
		"boundary": func(c *crf.Dataset) { c.SentStart[1]++ }, // same tokens, other sentences
		"label":    func(c *crf.Dataset) { c.Labels[len(c.Labels)-1] ^= 1 },
		"attr":     func(c *crf.Dataset) { c.Attrs[3] ^= 1 },
		"value": func(c *crf.Dataset) {
			c.Values = append([]float64(nil), c.Values...)
			c.Values[0] = math.Nextafter(c.Values[0], 9)
		},
		"binary": func(c *crf.Dataset) { c.Values = nil },
		"empty":  func(c *crf.Dataset) { c.Values = []float64{} },
	}
	seen := map[[32]byte]string{base: "base"}
	for name, edit := range edits {
		c := cloneDataset(d)
		edit(c)
		fp := Fingerprint(c)
		if prev, ok := seen[fp]; ok {
			t.Errorf("%s: same fingerprint as %s", name, prev)
		}
		seen[fp] = name
	}
}

// TestDualBytes: 8 bytes (float64) or 4 (float32) per entry of
// Σ_i (T_i−1)K² (K for one-token sentences), counted here from the
// sentence lengths.
func TestDualBytes(t *testing.T) {
	d := lengthsDataset([]int{1, 5, 2, 30}, 7)
	entries := int64(7 + 4*49 + 1*49 + 29*49)
	for p, b := range map[Precision]int64{Float64: 8, Float32: 4} {
		if got := Bytes(d, p); got != b*entries {
			t.Fatalf("Bytes(%v) = %d, want %d", p, got, b*entries)
		}
		off := p.Offsets(d)
		if off[len(off)-1] != b*entries || off[2]-off[1] != b*4*49 {
			t.Fatalf("%v offsets %v", p, off)
		}
	}
}

// TestFileFloat32: a float32 file records its precision (dtype 2), holds
// 4 bytes an entry, and gives back what was put, bit for bit, after it is
// closed and opened again.
func TestFileFloat32(t *testing.T) {
	d := testDataset(11, 4)
	path := filepath.Join(t.TempDir(), "duals.bin")
	s, err := CreateFile(path, d, Float32)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 5))
	want := make([][]float64, d.Len())
	for i := range want {
		want[i] = randomChain(rng, d.SentStart[i+1]-d.SentStart[i], d.NumLabels)
		s.Put(i, want[i])
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	entries := BlockOffsets(d)[d.Len()]
	if le := binary.LittleEndian; le.Uint32(b[12:]) != 2 || int64(len(b)) != 4096+(4*entries+4095)/4096*4096 {
		t.Fatalf("dtype %d, %d bytes for %d entries", le.Uint32(b[12:]), len(b), entries)
	}
	s, err = OpenFile(path, d)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Precision() != Float32 {
		t.Fatalf("opened as %v", s.Precision())
	}
	for i := range want {
		got := make([]float64, len(want[i]))
		s.Load(i, got)
		for j := range got {
			if math.Float64bits(got[j]) != math.Float64bits(want[i][j]) {
				t.Fatalf("block %d entry %d: %v, put %v", i, j, got[j], want[i][j])
			}
		}
	}
}
