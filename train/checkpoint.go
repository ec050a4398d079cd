package train

// Checkpoints. A checkpoint directory holds numbered snapshots and a file
// CURRENT naming the newest complete one:
//
//	DIR/CURRENT              "ckpt-000012\n"
//	DIR/ckpt-000012/duals.bin    μ (the FileStore format, with the dataset's fingerprint)
//	DIR/ckpt-000012/weights.bin  w as little-endian float64
//	DIR/ckpt-000012/state.json   epoch, counters, ‖w‖², RNG and sampler state, the log so far, checksums
//
// A snapshot is written into a temporary directory, synced, and renamed into
// place; only then is CURRENT replaced (write, sync, rename). A crash at any
// moment therefore leaves the previous snapshot named by CURRENT and
// complete. Loading verifies the checksums, that the duals belong to this
// dataset, and that the weights equal ŵ(μ) recomputed from the duals; a
// snapshot that fails is refused with the reason and the next older one is
// tried.

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// ErrNoCheckpoint is returned by LoadCheckpoint when DIR holds no usable
// snapshot.
var ErrNoCheckpoint = errors.New("train: no usable checkpoint")

// keepSnapshots is the number of snapshots kept on disk.
const keepSnapshots = 2

// CheckpointState is the JSON part of a snapshot.
type CheckpointState struct {
	Version     int           `json:"version"`
	Fingerprint string        `json:"fingerprint"` // hex of Fingerprint(dataset)
	Epoch       int           `json:"epoch"`       // completed epochs
	Training    time.Duration `json:"training_ns"` // training time so far
	Steps       int64         `json:"steps"`
	LineSearch  int64         `json:"line_search"`
	WSq         float64       `json:"wsq"`
	RNG         []byte        `json:"rng"`
	Sampler     SamplerState  `json:"sampler"`
	Records     []EpochRecord `json:"records"`
	WeightsHash string        `json:"weights_sha256"`
	Dim         int           `json:"dim"`
}

// Checkpoint is a loaded, verified snapshot.
type Checkpoint struct {
	Dir     string // the snapshot's directory
	State   CheckpointState
	Weights []float64
	Duals   *FileStore // open; the caller closes it
}

// SaveCheckpoint writes a snapshot of m (with the driver's epoch count,
// training time and log) under dir.
func SaveCheckpoint(dir string, m *SDCA, epoch int, training time.Duration, recs []EpochRecord) (err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	name := fmt.Sprintf("ckpt-%06d", epoch)
	tmp, err := os.MkdirTemp(dir, "."+name+".tmp-")
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	d := m.p.Data
	fs, err := CreateFileStore(filepath.Join(tmp, "duals.bin"), d)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	for i := 0; i < d.Len(); i++ {
		copy(fs.Block(i), m.duals.Block(i))
	}
	if err := fs.Close(); err != nil { // msync + munmap
		return fmt.Errorf("checkpoint: %w", err)
	}
	wb := float64Bytes(m.w)
	sum := sha256.Sum256(wb)
	if err := writeSynced(filepath.Join(tmp, "weights.bin"), wb); err != nil {
		return err
	}
	rng, err := m.src.MarshalBinary()
	if err != nil {
		return err
	}
	fp := Fingerprint(d)
	st := CheckpointState{Version: 1, Fingerprint: hex.EncodeToString(fp[:]), Epoch: epoch, Training: training,
		Steps: m.steps, LineSearch: m.lsIters, WSq: m.wsq, RNG: rng, Sampler: m.sampler.State(),
		Records: recs, WeightsHash: hex.EncodeToString(sum[:]), Dim: len(m.w)}
	js, err := json.Marshal(st)
	if err != nil {
		return err
	}
	if err := writeSynced(filepath.Join(tmp, "state.json"), js); err != nil {
		return err
	}
	if err := syncDir(tmp); err != nil {
		return err
	}
	final := filepath.Join(dir, name)
	os.RemoveAll(final) // a snapshot of the same epoch (after a resume) is replaced
	if err := os.Rename(tmp, final); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := syncDir(dir); err != nil {
		return err
	}
	if err := writeSyncedRename(filepath.Join(dir, "CURRENT"), []byte(name+"\n")); err != nil {
		return err
	}
	pruneSnapshots(dir, name)
	return nil
}

// pruneSnapshots removes all but the newest keepSnapshots snapshots, never
// the current one, and stale temporary directories.
func pruneSnapshots(dir, current string) {
	names := snapshotNames(dir)
	for i, n := range names {
		if i >= keepSnapshots && n != current {
			os.RemoveAll(filepath.Join(dir, n))
		}
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".ckpt-") {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

// snapshotNames lists the snapshot directories, newest first.
func snapshotNames(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), "ckpt-") {
			names = append(names, e.Name())
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(names)))
	return names
}

// LoadCheckpoint finds the newest valid snapshot under dir for problem p:
// the one CURRENT names, else older ones. Each refused snapshot is reported
// through warn (may be nil) with the reason.
func LoadCheckpoint(dir string, p *Problem, warn func(string)) (*Checkpoint, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("resume %s: not a directory", dir)
	}
	var order []string
	if b, err := os.ReadFile(filepath.Join(dir, "CURRENT")); err == nil {
		order = append(order, strings.TrimSpace(string(b)))
	}
	for _, n := range snapshotNames(dir) {
		if len(order) == 0 || n != order[0] {
			order = append(order, n)
		}
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("%w: %s is not a checkpoint directory (no CURRENT, no ckpt-* snapshot)", ErrNoCheckpoint, dir)
	}
	var reasons []string
	for _, n := range order {
		c, err := loadSnapshot(filepath.Join(dir, n), p)
		if err == nil {
			return c, nil
		}
		reasons = append(reasons, err.Error())
		if warn != nil {
			warn(fmt.Sprintf("resume: refusing snapshot %s: %v", n, err))
		}
	}
	return nil, fmt.Errorf("%w in %s: %s", ErrNoCheckpoint, dir, strings.Join(reasons, "; "))
}

func loadSnapshot(snap string, p *Problem) (*Checkpoint, error) {
	js, err := os.ReadFile(filepath.Join(snap, "state.json"))
	if err != nil {
		return nil, err
	}
	var st CheckpointState
	if err := json.Unmarshal(js, &st); err != nil {
		return nil, fmt.Errorf("state.json: %w", err)
	}
	if st.Version != 1 {
		return nil, fmt.Errorf("state.json: version %d, this build reads 1", st.Version)
	}
	fp := Fingerprint(p.Data)
	if st.Fingerprint != hex.EncodeToString(fp[:]) {
		return nil, fmt.Errorf("made for another dataset (fingerprint %.12s…, this one %.12s…)", st.Fingerprint, hex.EncodeToString(fp[:]))
	}
	if st.Dim != p.Layout.Dim() {
		return nil, fmt.Errorf("has %d weights, this problem needs %d (other --no-bias setting?)", st.Dim, p.Layout.Dim())
	}
	wb, err := os.ReadFile(filepath.Join(snap, "weights.bin"))
	if err != nil {
		return nil, err
	}
	if sum := sha256.Sum256(wb); hex.EncodeToString(sum[:]) != st.WeightsHash || len(wb) != 8*st.Dim {
		return nil, fmt.Errorf("weights.bin: checksum or size mismatch (corrupt or incomplete)")
	}
	fs, err := OpenFileStore(filepath.Join(snap, "duals.bin"), p.Data)
	if err != nil {
		return nil, err
	}
	c := &Checkpoint{Dir: snap, State: st, Weights: bytesFloat64(wb), Duals: fs}
	if err := c.verify(p); err != nil {
		fs.Close()
		return nil, err
	}
	return c, nil
}

// verify checks that every block is a probability distribution on each
// clique and that the weights equal ŵ(μ).
func (c *Checkpoint) verify(p *Problem) error {
	K := p.Layout.NumLabels
	for i := 0; i < c.Duals.Len(); i++ {
		mu := c.Duals.Block(i)
		for off := 0; off < len(mu); off += K * K {
			end := min(off+K*K, len(mu))
			s := 0.0
			for _, x := range mu[off:end] {
				if !(x >= 0) {
					return fmt.Errorf("duals.bin: sentence %d has a negative or NaN marginal", i)
				}
				s += x
			}
			if math.Abs(s-1) > 1e-6 {
				return fmt.Errorf("duals.bin: sentence %d has a clique summing to %g, not 1", i, s)
			}
		}
	}
	w := p.What(c.Duals)
	scale, diff := 1.0, 0.0
	for j, v := range w {
		scale = max(scale, math.Abs(v))
		diff = max(diff, math.Abs(v-c.Weights[j]))
	}
	if diff > 1e-7*scale {
		return fmt.Errorf("weights differ from ŵ(μ) recomputed from the duals by %.3g (scale %.3g)", diff, scale)
	}
	return nil
}

func float64Bytes(v []float64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
	return b
}

func bytesFloat64(b []byte) []float64 {
	v := make([]float64, len(b)/8)
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return v
}

// writeSynced writes a new file and fsyncs it.
func writeSynced(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("checkpoint: write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("checkpoint: sync %s: %w", path, err)
	}
	return f.Close()
}

// writeSyncedRename replaces path atomically with content b.
func writeSyncedRename(path string, b []byte) error {
	tmp := path + ".tmp"
	os.Remove(tmp)
	if err := writeSynced(tmp, b); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return syncDir(filepath.Dir(path))
}
