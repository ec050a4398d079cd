package platform

// Mapping is the first bytes of a file mapped into memory read-write and
// shared (MAP_SHARED; a read-write view of a file mapping on Windows): the
// kernel pages them, and writes to Bytes reach the file. MapShared makes
// one; Unmap ends it.
type Mapping struct {
	mem  []byte
	view mapView // what unmapping and flushing need besides mem
}

// Bytes returns the mapped bytes; they must not be used after Unmap.
func (m *Mapping) Bytes() []byte { return m.mem }

// Advice is an access pattern declared for a mapping (madvise), which the
// kernel's read-ahead follows. Systems without madvise ignore it.
type Advice int

const (
	// AccessNormal is the default pattern (MADV_NORMAL): some read-ahead.
	AccessNormal Advice = iota
	// AccessRandom declares random access (MADV_RANDOM): no read-ahead.
	AccessRandom
)
