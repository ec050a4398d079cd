package duals

// The kept-duals file: the final duals of a run with what a later run on a
// grown corpus needs to find its sentences again (a key per sentence, the
// label names), so that it can start from them (a warm start). Unlike the
// File format it is not tied to one dataset: blocks are found by key.
//
//	off        size   field
//	  0           8   magic "DCRFKEPT"
//	  8           4   format version (2; version 1 held float64 only and
//	                  had no precision in its header)
//	 12           4   J, bytes of the JSON header (KeptInfo)
//	 16           4   CRC-32C of bytes 0–15 and the JSON header
//	 20           J   JSON header
//	 20+J      20·n   per sentence: key (16 bytes), T (uint32)
//	 ..           4   CRC-32C of the n records
//	 ..         b·E   μ, E = Σ BlockLen(T_j, K) entries encoded at the
//	                  header's precision (b = 8 for float64, 4 for float32,
//	                  2 for bfloat16),
//	                  little-endian
//	 ..           4   CRC-32C of μ's bytes
//	 ..           8   magic "DCRFEND\x00"
//
// The size of the file follows from the header and the records, so a
// truncated or extended file is refused before μ is read.

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"

	"github.com/dualcrf/dualcrf/crf"
)

const (
	keptMagic    = "DCRFKEPT"
	keptEnd      = "DCRFEND\x00"
	keptVersion  = 2
	keptMaxJSON  = 1 << 24
	keptRecord   = 20
	keptMaxLabel = 1 << 16
	keptMaxT     = 1 << 24
)

// SentenceKey identifies a sentence across feature tables: a hash of its
// tokens and gold label names (never of ids, which change with the
// vocabulary), with the occurrence number of a sentence that comes more
// than once.
type SentenceKey [16]byte

// KeptInfo is the header of a kept-duals file: what the duals are of and
// what a warm start compares before using them.
type KeptInfo struct {
	// Labels are the label names; block entries are indexed by their
	// position (the run's label ids).
	Labels []string `json:"labels"`
	// Sentences is the number of blocks.
	Sentences int `json:"sentences"`
	// Lambda is λ's value, LambdaSetting how it was given ("1/n",
	// "c/n" or a number): a grown corpus keeps the setting, not the value.
	Lambda        float64 `json:"lambda"`
	LambdaSetting string  `json:"lambda_setting"`
	// L1Setting is the elastic net's λ₁ as it was given ("" without one).
	L1Setting string `json:"l1_setting,omitempty"`
	// Templates fingerprints the feature templates of the table (SHA-256
	// of its recorded templates, hex); "" when it recorded none.
	Templates string `json:"templates"`
	// KeyColumns are the text columns the keys hash, in order; empty: the
	// keys hash the attribute names and values.
	KeyColumns []string `json:"key_columns"`
	// FeatureSpace, Transitions and Bias describe the weights (for the
	// log: the duals do not depend on them).
	FeatureSpace string `json:"feature_space"`
	Transitions  string `json:"transitions"`
	Bias         bool   `json:"bias"`
	// Source names the training table; Primal and Gap are the run's last
	// certificate.
	Source string  `json:"source"`
	Primal float64 `json:"primal"`
	Gap    float64 `json:"gap"`
	// Precision names how μ is encoded (Precision's String): set by
	// WriteKept from the store; "float64" in a file of version 1.
	Precision string `json:"precision"`
}

// WriteKept writes the duals in src, of dataset d, as a kept-duals file
// to w with one key per sentence, at src's precision; name names the file
// in errors. The caller decides where the bytes go and when they become
// the file (an atomic output: pipeline.Output). info.Labels,
// info.Sentences and info.Precision are taken from d and src.
func WriteKept(w io.Writer, name string, info KeptInfo, keys []SentenceKey, d *crf.Dataset, src Store) error {
	if err := checkHost(name); err != nil {
		return err
	}
	n, K := d.Len(), d.NumLabels
	if src.Len() != n || len(keys) != n {
		return fmt.Errorf("write kept duals %s: %d blocks and %d keys for %d sentences", name, src.Len(), len(keys), n)
	}
	info.Labels, info.Sentences, info.Precision = d.LabelNames, n, src.Precision().String()
	js, err := json.Marshal(info)
	if err != nil {
		return fmt.Errorf("write kept duals %s: %w", name, err)
	}
	fail := func(err error) error { return fmt.Errorf("write kept duals %s: %w", name, err) }
	bw := bufio.NewWriterSize(w, 1<<20)
	head := make([]byte, 20, 20+len(js))
	copy(head, keptMagic)
	binary.LittleEndian.PutUint32(head[8:], keptVersion)
	binary.LittleEndian.PutUint32(head[12:], uint32(len(js)))
	crc := crc32.Update(crc32.Update(0, castagnoli, head[:16]), castagnoli, js)
	binary.LittleEndian.PutUint32(head[16:], crc)
	if _, err := bw.Write(append(head, js...)); err != nil {
		return fail(err)
	}
	crc = 0
	var rec [keptRecord]byte
	for i, k := range keys {
		copy(rec[:16], k[:])
		binary.LittleEndian.PutUint32(rec[16:], uint32(d.SentStart[i+1]-d.SentStart[i]))
		crc = crc32.Update(crc, castagnoli, rec[:])
		if _, err := bw.Write(rec[:]); err != nil {
			return fail(err)
		}
	}
	var u4 [4]byte
	binary.LittleEndian.PutUint32(u4[:], crc)
	if _, err := bw.Write(u4[:]); err != nil {
		return fail(err)
	}
	crc = 0
	p := src.Precision()
	read := rawReader(src)
	for i := range n {
		b, err := read(i)
		if err != nil {
			return fail(err)
		}
		if want := p.BlockBytes(d.SentStart[i+1]-d.SentStart[i], K); int64(len(b)) != want {
			return fail(fmt.Errorf("block %d has %d bytes, want %d", i, len(b), want))
		}
		crc = crc32.Update(crc, castagnoli, b)
		if _, err := bw.Write(b); err != nil {
			return fail(err)
		}
	}
	binary.LittleEndian.PutUint32(u4[:], crc)
	if _, err := bw.Write(append(u4[:], keptEnd...)); err != nil {
		return fail(err)
	}
	if err := bw.Flush(); err != nil {
		return fail(err)
	}
	return nil
}

// Kept is a verified kept-duals file open for reading.
type Kept struct {
	// Info is the file's header.
	Info KeptInfo
	// Keys and Lens are each block's sentence key and token count.
	Keys []SentenceKey
	Lens []int
	// Precision is how the file encodes μ (Float64 in a file of version 1).
	Precision Precision
	name      string
	r         io.ReaderAt
	c         io.Closer
	muAt      int64  // offset of μ
	muCRC     uint32 // μ's checksum, as the file records it
}

// OpenKept opens the kept-duals file at path and verifies its header and
// sentence records against their checksums, the file's size and its end
// mark; μ, the bulk of the file, is verified as Each reads it (one read
// of it, not two). Errors are *FileError naming the file.
func OpenKept(path string) (*Kept, error) {
	if err := checkHost(path); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, &FileError{Path: path, Msg: err.Error(), Err: err}
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, &FileError{Path: path, Msg: err.Error(), Err: err}
	}
	k, err := ReadKept(f, st.Size(), path)
	if err != nil {
		f.Close()
		return nil, err
	}
	k.c = f
	return k, nil
}

// ReadKept reads and verifies a kept-duals file of size bytes from r, as
// OpenKept does; name names it in errors. The Kept reads μ from r in Each.
func ReadKept(r io.ReaderAt, size int64, name string) (*Kept, error) {
	bad := func(format string, args ...any) error {
		return &FileError{Path: name, Msg: "not a usable kept-duals file: " + fmt.Sprintf(format, args...), Err: ErrFormat}
	}
	var head [20]byte
	if size < int64(len(head)) {
		return nil, bad("%d bytes, shorter than its header", size)
	}
	if _, err := r.ReadAt(head[:], 0); err != nil {
		return nil, &FileError{Path: name, Msg: err.Error(), Err: err}
	}
	if string(head[:8]) != keptMagic {
		return nil, bad("it does not start with %q", keptMagic)
	}
	version := binary.LittleEndian.Uint32(head[8:])
	if version != 1 && version != keptVersion {
		return nil, bad("format version %d, this program reads versions 1 and %d", version, keptVersion)
	}
	J := int64(binary.LittleEndian.Uint32(head[12:]))
	if J > keptMaxJSON || 20+J > size {
		return nil, bad("a header of %d bytes in a file of %d", J, size)
	}
	js := make([]byte, J)
	if _, err := r.ReadAt(js, 20); err != nil {
		return nil, &FileError{Path: name, Msg: err.Error(), Err: err}
	}
	if crc := crc32.Update(crc32.Update(0, castagnoli, head[:16]), castagnoli, js); crc != binary.LittleEndian.Uint32(head[16:]) {
		return nil, bad("the header's checksum does not match (corrupted)")
	}
	k := &Kept{name: name, r: r}
	if err := json.Unmarshal(js, &k.Info); err != nil {
		return nil, bad("header: %v", err)
	}
	switch {
	case version == 1 && k.Info.Precision == "":
		k.Info.Precision, k.Precision = Float64.String(), Float64
	case version == 1:
		return nil, bad("a file of version 1 with a precision (%q) in its header", k.Info.Precision)
	default:
		p, err := ParsePrecision(k.Info.Precision)
		if err != nil {
			return nil, bad("header: %v", err)
		}
		k.Precision = p
	}
	n, K := k.Info.Sentences, len(k.Info.Labels)
	if n < 0 || K < 1 || K > keptMaxLabel {
		return nil, bad("%d sentences and %d labels", n, K)
	}
	seen := make(map[string]bool, K)
	for _, l := range k.Info.Labels {
		if seen[l] {
			return nil, bad("label %q twice", l)
		}
		seen[l] = true
	}
	recAt := 20 + J
	if int64(n) > (size-recAt)/keptRecord {
		return nil, bad("%d sentences do not fit in %d bytes", n, size)
	}
	recs := make([]byte, n*keptRecord+4)
	if _, err := r.ReadAt(recs, recAt); err != nil {
		return nil, bad("truncated in its sentence records")
	}
	if crc32.Checksum(recs[:n*keptRecord], castagnoli) != binary.LittleEndian.Uint32(recs[n*keptRecord:]) {
		return nil, bad("the sentence records' checksum does not match (corrupted)")
	}
	k.Keys, k.Lens = make([]SentenceKey, n), make([]int, n)
	entries := int64(0)
	for i := range n {
		rec := recs[i*keptRecord:]
		copy(k.Keys[i][:], rec[:16])
		T := int(binary.LittleEndian.Uint32(rec[16:]))
		if T < 1 || T > keptMaxT {
			return nil, bad("sentence %d has %d tokens", i, T)
		}
		k.Lens[i] = T
		entries += int64(crf.BlockLen(T, K))
		if entries > math.MaxInt64/16 {
			return nil, bad("too many entries")
		}
	}
	k.muAt = recAt + int64(n*keptRecord) + 4
	muBytes := k.Precision.EntryBytes() * entries
	if want := k.muAt + muBytes + 4 + int64(len(keptEnd)); size != want {
		return nil, bad("%d bytes, want %d for its %d sentences and %d labels (truncated or extended)", size, want, n, K)
	}
	var tail [4 + len(keptEnd)]byte
	if _, err := r.ReadAt(tail[:], k.muAt+muBytes); err != nil {
		return nil, &FileError{Path: name, Msg: err.Error(), Err: err}
	}
	if string(tail[4:]) != keptEnd {
		return nil, bad("it does not end with its end mark")
	}
	k.muCRC = binary.LittleEndian.Uint32(tail[:4])
	return k, nil
}

// Each calls fn with every block of the file in order (j = 0..n−1),
// decoded to float64 whatever the file's precision; mu is reused between
// calls. It stops at fn's first error. It verifies μ as it reads it: a
// block entry that is not a probability (for float32 and bfloat16, a
// stored number outside [0, 1]) is an error before fn sees the block; μ's checksum is compared after the last block, so a
// corrupted file is an error of Each after fn has seen its blocks — a
// caller that fails on Each's error (a warm start's Init) never goes on
// from them. Errors of the file are *FileError naming it.
func (k *Kept) Each(fn func(j int, mu []float64) error) error { return k.each(fn) }

func (k *Kept) each(fn func(j int, mu []float64) error) error {
	bad := func(format string, args ...any) error {
		return &FileError{Path: k.name, Msg: "not a usable kept-duals file: " + fmt.Sprintf(format, args...), Err: ErrFormat}
	}
	crc := uint32(0)
	K := len(k.Info.Labels)
	br := bufio.NewReaderSize(io.NewSectionReader(k.r, k.muAt, math.MaxInt64-k.muAt), 1<<20)
	var mu []float64
	eb := int(k.Precision.EntryBytes())
	var raw []float64 // 8-byte aligned room for a block's bytes
	for j, T := range k.Lens {
		m := crf.BlockLen(T, K)
		if cap(mu) < m {
			mu = make([]float64, m)
			raw = make([]float64, m)
		}
		mu = mu[:m]
		b := floatBytes(raw[:m])[:eb*m]
		if _, err := io.ReadFull(br, b); err != nil {
			return &FileError{Path: k.name, Msg: fmt.Sprintf("reading sentence %d's duals: %v", j, err), Err: err}
		}
		crc = crc32.Update(crc, castagnoli, b)
		switch k.Precision {
		case Float32:
			for _, x := range float32View(b)[:m] {
				if !(x >= 0 && x <= 1+1e-6) { // a probability or a conditional, up to rounding
					return bad("sentence %d's duals hold %g, not a probability", j, x)
				}
			}
			k.Precision.Decode(mu, b, K)
		case BFloat16:
			for _, c := range uint16View(b)[:m] {
				if x := bf16Value(c); !(x >= 0 && x <= 1) { // a probability or a conditional
					return bad("sentence %d's duals hold %g, not a probability", j, x)
				}
			}
			k.Precision.Decode(mu, b, K)
		default:
			for e := range mu {
				x := math.Float64frombits(binary.LittleEndian.Uint64(b[8*e:]))
				if !(x >= 0 && x <= 1+1e-9) { // a probability, up to rounding
					return bad("sentence %d's duals hold %g, not a probability", j, x)
				}
				mu[e] = x
			}
		}
		if err := fn(j, mu); err != nil {
			return err
		}
	}
	if crc != k.muCRC {
		return bad("the duals' checksum does not match (corrupted)")
	}
	return nil
}

// Name returns the file's name.
func (k *Kept) Name() string { return k.name }

// Close closes the file (of OpenKept; ReadKept's reader is the caller's).
func (k *Kept) Close() error {
	if k == nil || k.c == nil {
		return nil
	}
	err := k.c.Close()
	k.c = nil
	return err
}
