package platform

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"unsafe"
)

// TestAllocFloats: the floats are zero and writable, and off the heap
// memory is page-aligned and can be freed.
func TestAllocFloats(t *testing.T) {
	if v, free := AllocFloats(0); len(v) != 0 || free != nil {
		t.Fatalf("AllocFloats(0) = %d floats, free %v", len(v), free != nil)
	}
	const n = 3 << 10
	v, free := AllocFloats(n)
	if len(v) != n {
		t.Fatalf("%d floats, want %d", len(v), n)
	}
	if AllocOffHeap != (free != nil) {
		t.Logf("AllocOffHeap %v, free %v: the system refused the mapping", AllocOffHeap, free != nil)
	}
	for i := range v {
		if v[i] != 0 {
			t.Fatalf("float %d is %g", i, v[i])
		}
		v[i] = float64(i)
	}
	if free != nil {
		if at := uintptr(unsafe.Pointer(&v[0])); at%uintptr(os.Getpagesize()) != 0 {
			t.Fatalf("anonymous memory at %#x is not page-aligned", at)
		}
		free()
	}
}

// TestMapShared: writes through a shared mapping reach the file; dropping
// the mapping's pages loses nothing; the advice is taken.
func TestMapShared(t *testing.T) {
	const size = 64 << 10
	path := filepath.Join(t.TempDir(), "mapped")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := Allocate(f, size); err != nil {
		t.Fatal(err)
	}
	if st, err := f.Stat(); err != nil || st.Size() != size {
		t.Fatalf("after Allocate(%d): %v, %v", size, st, err)
	}
	m, err := MapShared(f, size)
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	mem := m.Bytes()
	if len(mem) != size {
		t.Fatalf("mapped %d bytes, want %d", len(mem), size)
	}
	for _, a := range []Advice{AccessRandom, AccessNormal} {
		if err := m.Advise(a); err != nil {
			t.Fatalf("Advise(%d): %v", a, err)
		}
	}
	want := make([]byte, size)
	for i := range want {
		want[i] = byte(i*7 + i>>12)
	}
	copy(mem, want)
	if err := m.Flush(); err != nil {
		t.Fatal(err)
	}
	m.DropPages(0, size) // shared: the data stays in the file
	if !bytes.Equal(mem, want) {
		t.Fatal("the mapping changed after its pages were dropped")
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("the file does not hold what was written through the mapping")
	}
	if err := m.Unmap(); err != nil {
		t.Fatal(err)
	}
}

// TestOpenDirect: a file opened for direct I/O takes and returns whole
// aligned blocks from aligned memory, and FreeBytes and DropCache work on
// it where the system has them.
func TestOpenDirect(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "direct")
	f, direct, err := OpenDirect(path, os.O_RDWR|os.O_CREATE)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	t.Logf("direct I/O: %v", direct)
	buf, free := AllocFloats(2 * 4096 / 8)
	if free != nil {
		defer free()
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), 8*len(buf))
	for i := range b {
		b[i] = byte(i % 251)
	}
	if _, err := f.WriteAt(b[:4096], 4096); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := DropCache(path); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		t.Fatal(err)
	}
	clear(b[4096:])
	if _, err := f.ReadAt(b[4096:], 4096); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b[:4096], b[4096:]) {
		t.Fatal("read back other bytes than written")
	}
	if n, err := FreeBytes(dir); errors.Is(err, errors.ErrUnsupported) {
		t.Log(err)
	} else if err != nil || n <= 0 {
		t.Fatalf("FreeBytes = %d, %v", n, err)
	}
}
