package duals

import "testing"

// FuzzDualsHeader feeds arbitrary header pages and file sizes to the duals
// file's header parser. The input is the page's first bytes (the rest is
// zero but for one byte, junk at junkAt), which keeps inputs small enough to
// mutate and minimise quickly.
func FuzzDualsHeader(f *testing.F) {
	for _, p := range Precisions {
		h := layoutFor(1000, p)
		h.version, h.K, h.n = fileVersion, 3, 10
		good := h.encode()[:headerUsed]
		f.Add(good, int64(h.size), byte(0), uint16(0))
		f.Add(good, int64(h.size), byte(1), uint16(4000))
		f.Add(good[:100], int64(h.size), byte(0), uint16(0))
	}
	f.Add([]byte{}, int64(headerSize), byte(0), uint16(0))
	f.Fuzz(func(t *testing.T, head []byte, size int64, junk byte, junkAt uint16) {
		if len(head) > headerSize {
			return
		}
		page := make([]byte, headerSize)
		copy(page, head)
		if int(junkAt) >= len(head) && int(junkAt) < headerSize {
			page[junkAt] = junk
		}
		got, err := parseHeader(page, "duals.bin", size)
		if err != nil {
			return
		}
		if got.version != fileVersion || !Precision(got.dtype).Valid() || uint64(size) != got.size || got.size != layoutFor(got.entries, Precision(got.dtype)).size {
			t.Fatalf("accepted inconsistent header %+v for size %d", got, size)
		}
		for _, b := range page[headerUsed:] {
			if b != 0 {
				t.Fatal("accepted a header page with junk after its fields")
			}
		}
	})
}
