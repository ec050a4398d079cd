package crfsuite

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/dualcrf/dualcrf/crf"
)

// The format's constants, as CRFsuite 0.12's model reader expects them.
const (
	fileMagic   = "lCRF"
	modelType   = "FOMC"
	version     = 100
	headerSize  = 48
	chunkSize   = 12 // a chunk's id, size and item count
	featureSize = 20 // type, source, destination (uint32) and weight (float64)

	stateFeature = 0 // attribute → label
	transFeature = 1 // label → next label

	cqdbTables    = 256
	cqdbHeader    = 24
	cqdbData      = cqdbHeader + 8*cqdbTables // the first key/data record
	cqdbByteOrder = 0x62445371
)

// ErrNotExportable is returned (wrapped, with the reason) for a model
// CRFsuite's format cannot hold exactly.
var ErrNotExportable = errors.New("the model cannot be written in CRFsuite's format")

// Markers name the attributes that carry a model's bias, start and end
// weights in CRFsuite's model, which has none of the three (see the
// package documentation): Bias is present, with value 1, at every token,
// Start at the first token and End at the last. All three are empty for a
// model without those weights (trained with --no-bias).
type Markers struct{ Bias, Start, End string }

// MarkersOf returns the marker attributes of m: "@bias", "@start" and
// "@end" — no template attribute starts with '@' — each lengthened by '@'
// until m has no attribute of that name (a model trained on CRFsuite
// attribute files may have one), so that a marker never stands for an
// attribute the model knows. A tagger given an attribute that equals a
// marker but is not one must leave it out: the model does not know it, so
// dualcrf's own decode gives it no weight.
func MarkersOf(m *crf.Model) Markers {
	if m.Layout.NoBias {
		return Markers{}
	}
	have := make(map[string]bool)
	for _, n := range m.AttrNames {
		if strings.HasPrefix(n, "@") {
			have[n] = true
		}
	}
	name := func(base string) string {
		for have[base] {
			base += "@"
		}
		return base
	}
	return Markers{Bias: name("@bias"), Start: name("@start"), End: name("@end")}
}

// Check reports why m cannot be written in CRFsuite's format, or nil: a
// label or attribute name with a NUL byte (CRFsuite's names are C
// strings), or a model m.Check refuses.
func Check(m *crf.Model) error {
	if err := m.Check(); err != nil {
		return err
	}
	for i, n := range m.LabelNames {
		if strings.IndexByte(n, 0) >= 0 {
			return fmt.Errorf("%w: label %d, %q, holds a NUL byte", ErrNotExportable, i, n)
		}
	}
	for i, n := range m.AttrNames {
		if strings.IndexByte(n, 0) >= 0 {
			return fmt.Errorf("%w: attribute %d, %q, holds a NUL byte", ErrNotExportable, i, n)
		}
	}
	return nil
}

// feature is one weight of CRFsuite's model.
type feature struct {
	kind     uint32 // stateFeature or transFeature
	src, dst uint32 // attribute (CRFsuite's id) or label → label
	weight   float64
}

// Summary counts what WriteModel wrote.
type Summary struct {
	Features   int // non-zero weights written (state and transition)
	Transition int // of which transition features
	Attributes int // attributes with at least one non-zero weight (markers included)
	Markers    int // of which marker attributes (bias, start, end)
	Labels     int
	Bytes      int64
}

// WriteModel writes m to w in CRFsuite 0.12's model format. It writes the
// non-zero weights only (CRFsuite's trainer does the same) and the
// attributes that have one, numbered in the model's order, then the
// marker attributes (MarkersOf) of the bias, start and end weights; labels
// keep the model's ids. It refuses what Check refuses.
func WriteModel(w io.Writer, m *crf.Model) (Summary, error) {
	if err := Check(m); err != nil {
		return Summary{}, err
	}
	A, K := m.Layout.NumAttrs, m.Layout.NumLabels
	var (
		feats     []feature
		attrRefs  [][]uint32 // CRFsuite attribute id → its feature ids
		attrNames []string   // CRFsuite attribute id → name
		labelRefs = make([][]uint32, K)
	)
	addAttr := func(name string, row []float64) {
		var refs []uint32
		for y, wt := range row {
			if wt == 0 {
				continue
			}
			refs = append(refs, uint32(len(feats)))
			feats = append(feats, feature{stateFeature, uint32(len(attrNames)), uint32(y), wt})
		}
		if refs != nil {
			attrRefs = append(attrRefs, refs)
			attrNames = append(attrNames, name)
		}
	}
	for a := range A {
		addAttr(m.AttrNames[a], m.Weights[a*K:(a+1)*K])
	}
	markers := 0
	if mk := MarkersOf(m); !m.Layout.NoBias {
		for i, name := range []string{mk.Bias, mk.Start, mk.End} {
			off := m.Layout.Bias() + i*K
			before := len(attrNames)
			addAttr(name, m.Weights[off:off+K])
			markers += len(attrNames) - before
		}
	}
	trans := m.Weights[m.Layout.Trans() : m.Layout.Trans()+K*K]
	for y := range K {
		for y2, wt := range trans[y*K : (y+1)*K] {
			if wt == 0 {
				continue
			}
			labelRefs[y] = append(labelRefs[y], uint32(len(feats)))
			feats = append(feats, feature{transFeature, uint32(y), uint32(y2), wt})
		}
	}
	s := Summary{Features: len(feats), Attributes: len(attrNames), Markers: markers, Labels: K}
	for _, r := range labelRefs {
		s.Transition += len(r)
	}

	var b buffer
	b.Write(make([]byte, headerSize)) // the header, filled in last
	var h header
	h.numFeatures, h.numLabels, h.numAttrs = uint32(len(feats)), uint32(K), uint32(len(attrNames))

	h.offFeatures = b.pos()
	b.Write([]byte("FEAT"))
	b.u32(uint32(chunkSize + featureSize*len(feats)))
	b.u32(uint32(len(feats)))
	for _, f := range feats {
		b.u32(f.kind)
		b.u32(f.src)
		b.u32(f.dst)
		b.u64(math.Float64bits(f.weight))
	}

	h.offLabels = b.pos()
	writeCQDB(&b, m.LabelNames)
	h.offAttrs = b.pos()
	writeCQDB(&b, attrNames)

	// CRFsuite's writer keeps two more label slots than labels (for the
	// begin and end states of older versions), with offset zero.
	h.offLabelRefs = writeRefs(&b, "LFRF", labelRefs, K+2)
	h.offAttrRefs = writeRefs(&b, "AFRF", attrRefs, len(attrRefs))

	if b.Len() > math.MaxUint32 {
		return Summary{}, fmt.Errorf("%w: the file would hold %d bytes, more than its 32-bit offsets reach", ErrNotExportable, b.Len())
	}
	h.size = uint32(b.Len())
	h.put(b.Bytes()[:headerSize])
	s.Bytes = int64(b.Len())
	if _, err := w.Write(b.Bytes()); err != nil {
		return Summary{}, err
	}
	return s, nil
}

// header is the model file's header.
type header struct {
	size, numFeatures, numLabels, numAttrs                      uint32
	offFeatures, offLabels, offAttrs, offLabelRefs, offAttrRefs uint32
}

// put writes h into p, the file's first headerSize bytes.
func (h header) put(p []byte) {
	copy(p[0:4], fileMagic)
	le := binary.LittleEndian
	le.PutUint32(p[4:], h.size)
	copy(p[8:12], modelType)
	for i, v := range []uint32{version, h.numFeatures, h.numLabels, h.numAttrs,
		h.offFeatures, h.offLabels, h.offAttrs, h.offLabelRefs, h.offAttrRefs} {
		le.PutUint32(p[12+4*i:], v)
	}
}

// buffer is the file being built.
type buffer struct{ bytes.Buffer }

func (b *buffer) pos() uint32 { return uint32(b.Len()) }

func (b *buffer) u32(v uint32) { b.Write(binary.LittleEndian.AppendUint32(nil, v)) }

func (b *buffer) u64(v uint64) { b.Write(binary.LittleEndian.AppendUint64(nil, v)) }

func (b *buffer) align4() {
	for b.Len()%4 != 0 {
		b.WriteByte(0)
	}
}

// writeRefs writes a chunk of feature-id lists (one per label or
// attribute), aligned to 4 bytes, with slots ≥ len(refs) offsets (the
// others zero), and returns its offset.
func writeRefs(b *buffer, id string, refs [][]uint32, slots int) uint32 {
	b.align4()
	begin := b.Len()
	b.Write(make([]byte, chunkSize+4*slots))
	offsets := make([]uint32, slots)
	for i, r := range refs {
		offsets[i] = b.pos()
		b.u32(uint32(len(r)))
		for _, f := range r {
			b.u32(f)
		}
	}
	p := b.Bytes()[begin:]
	le := binary.LittleEndian
	copy(p[0:4], id)
	le.PutUint32(p[4:], uint32(b.Len()-begin))
	le.PutUint32(p[8:], uint32(slots))
	for i, o := range offsets {
		le.PutUint32(p[chunkSize+4*i:], o)
	}
	return uint32(begin)
}

// writeCQDB writes a constant quark database mapping names[i] to i and
// back: the header, 256 table references, the key/data records (id, key
// size, key with its NUL), the hash tables (twice as many buckets as keys,
// open addressing from bucket hash>>8 mod size) and the id → record array.
// Offsets inside it count from its first byte.
func writeCQDB(b *buffer, names []string) {
	begin := b.Len()
	b.Write(make([]byte, cqdbData))
	type bucket struct{ hash, offset uint32 }
	var tables [cqdbTables][]bucket
	back := make([]uint32, len(names))
	for id, n := range names {
		off := uint32(b.Len() - begin)
		key := append([]byte(n), 0)
		hv := hashLittle(key, 0)
		tables[hv%cqdbTables] = append(tables[hv%cqdbTables], bucket{hv, off})
		back[id] = off
		b.u32(uint32(id))
		b.u32(uint32(len(key)))
		b.Write(key)
	}
	var refs [cqdbTables][2]uint32
	for i, t := range tables {
		if len(t) == 0 {
			continue
		}
		n := 2 * len(t)
		slots := make([]bucket, n)
		for _, e := range t {
			k := int(e.hash>>8) % n
			for slots[k].offset != 0 {
				k = (k + 1) % n
			}
			slots[k] = e
		}
		refs[i] = [2]uint32{uint32(b.Len() - begin), uint32(n)}
		for _, e := range slots {
			b.u32(e.hash)
			b.u32(e.offset)
		}
	}
	bwdOffset := uint32(0)
	if len(names) > 0 {
		bwdOffset = uint32(b.Len() - begin)
		for _, o := range back {
			b.u32(o)
		}
	}
	p := b.Bytes()[begin:]
	le := binary.LittleEndian
	copy(p[0:4], "CQDB")
	le.PutUint32(p[4:], uint32(len(p)))
	le.PutUint32(p[8:], 0) // flags
	le.PutUint32(p[12:], cqdbByteOrder)
	le.PutUint32(p[16:], uint32(len(names)))
	le.PutUint32(p[20:], bwdOffset)
	for i, r := range refs {
		le.PutUint32(p[cqdbHeader+8*i:], r[0])
		le.PutUint32(p[cqdbHeader+8*i+4:], r[1])
	}
}
