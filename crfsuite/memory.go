package crfsuite

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/dualcrf/dualcrf/crf"
)

// Size is what writing a model in CRFsuite's format takes, worked out from
// the model before anything is built (WriteModel builds the whole file in
// memory, its offsets being known only at the end).
type Size struct {
	File   int64 // the file's bytes, exactly
	Memory int64 // what WriteModel allocates in all, an upper bound of what it holds at once besides the model: its feature and reference lists and the file being built, with their growth
}

// SizeOf returns what writing m with WriteModel takes. A File above
// math.MaxUint32 is refused by WriteModel (the format's offsets are 32-bit).
func SizeOf(m *crf.Model) Size {
	A, K := m.Layout.NumAttrs, m.Layout.NumLabels
	var feats, trans, attrs, attrNameBytes int64
	for a := range A {
		n := int64(0)
		for _, w := range m.Weights[a*K : (a+1)*K] {
			if w != 0 {
				n++
			}
		}
		if n > 0 {
			feats += n
			attrs++
			attrNameBytes += int64(len(m.AttrNames[a]))
		}
	}
	if !m.Layout.NoBias {
		mk := MarkersOf(m)
		for i, name := range []string{mk.Bias, mk.Start, mk.End} {
			n := int64(0)
			off := m.Layout.Bias() + i*K
			for _, w := range m.Weights[off : off+K] {
				if w != 0 {
					n++
				}
			}
			if n > 0 {
				feats += n
				attrs++
				attrNameBytes += int64(len(name))
			}
		}
	}
	for _, w := range m.Weights[m.Layout.Trans() : m.Layout.Trans()+K*K] {
		if w != 0 {
			trans++
		}
	}
	var labelNameBytes int64
	for _, l := range m.LabelNames {
		labelNameBytes += int64(len(l))
	}
	all := feats + trans
	cqdb := func(n, nameBytes int64) int64 {
		b := cqdbData + 9*n + nameBytes + 16*n // records (id, size, key, NUL); hash tables of 2n buckets
		if n > 0 {
			b += 4 * n // the id → record array
		}
		return b
	}
	align := func(b int64) int64 { return (b + 3) &^ 3 }
	file := int64(headerSize) + chunkSize + featureSize*all
	file += cqdb(int64(K), labelNameBytes)
	file += cqdb(attrs, attrNameBytes)
	file = align(file) + chunkSize + 4*int64(K+2) + 4*int64(K) + 4*trans
	file = align(file) + chunkSize + 4*attrs + 4*attrs + 4*feats
	featBytes := int64(unsafe.Sizeof(feature{})) * all
	refs := 4*all + int64(unsafe.Sizeof([]uint32(nil))+unsafe.Sizeof(""))*attrs
	// What WriteModel allocates in all, which bounds what it holds at once
	// (and covers the garbage collector's headroom): slices grown by
	// appending allocate up to five times their final length over their
	// growth (by a quarter at a time once large), the file's buffer up to
	// four times the file, and every
	// number written makes as many bytes of garbage again; the model's
	// check sets its names apart.
	names := int64(A + K)
	return Size{File: file, Memory: 64<<10 + 96*names + 5*featBytes + 5*refs + 6*file}
}

// Check reports a file too large for the format's 32-bit offsets
// (ErrNotExportable), before anything is built.
func (s Size) Check() error {
	if s.File > math.MaxUint32 {
		return fmt.Errorf("%w: the file would hold %d bytes, more than its 32-bit offsets reach", ErrNotExportable, s.File)
	}
	return nil
}
