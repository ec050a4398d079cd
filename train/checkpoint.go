package train

// Checkpoints. A checkpoint directory holds numbered snapshots, a file
// CURRENT naming the newest complete one, and a lock:
//
//	DIR/LOCK                       flock'ed by the one run that writes DIR
//	DIR/CURRENT                    "ckpt-000012\n"
//	DIR/ckpt-000012/duals.bin      μ (the duals.File format, at the run's precision, with the dataset's fingerprint)
//	DIR/ckpt-000012/weights.bin    ŵ(μ) as little-endian float64 (the weights; for the elastic net
//	                               their soft-thresholded copy is the model's)
//	DIR/ckpt-000012/state.json     {"sha256": …, "state": {…}}: position, counters, ‖w‖², RNG and
//	                               sampler state, the log so far, the run's settings, checksums
//
// Snapshot names say exactly where the run was: ckpt-000012 after epoch 12
// (its record and certificate made), ckpt-000013-step4096 inside epoch 13
// after 4,096 steps, ckpt-000013-cert after epoch 13's steps but before its
// record (a certificate pass was interrupted). A name therefore never
// stands for two different states.
//
// A snapshot is written into a temporary directory, synced, and renamed into
// place (exchanged atomically with an older one of the same name); only then
// is CURRENT replaced (write, sync, rename). A crash at any moment therefore
// leaves the previous snapshot named by CURRENT and complete. Loading
// verifies every file — the state's SHA-256, the weights' SHA-256, the duals'
// header and CRC-32C, the position and counters against each other, the
// dataset's fingerprint, and the weights against ŵ(μ) recomputed from the
// duals; a snapshot that fails is refused with the reason and the next older
// one is tried.

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/duals"
	"github.com/dualcrf/dualcrf/internal/platform"
	"github.com/dualcrf/dualcrf/option"
)

// keepSnapshots is the number of snapshots kept on disk.
const keepSnapshots = 2

// stateVersion is the version of state.json this build writes and reads;
// version 2 held the run settings by the command's flag names.
const stateVersion = 3

// checkpointState is the JSON part of a snapshot.
type checkpointState struct {
	Version     int    `json:"version"`
	Fingerprint string `json:"fingerprint"` // hex of duals.Fingerprint(dataset)
	Sentences   int    `json:"sentences"`
	Dim         int    `json:"dim"`
	// The position: Epoch epochs' steps done, Step steps of the next one,
	// Next the sentence drawn for step Step (−1 when Step = 0); Pending: the
	// record of epoch Epoch is not made yet.
	Epoch           int           `json:"epoch"`
	Step            int           `json:"step"`
	Next            int           `json:"next"`
	Pending         bool          `json:"pending"`
	Training        time.Duration `json:"training_ns"`
	EpochTraining   time.Duration `json:"epoch_training_ns"`
	EpochLineSearch int64         `json:"epoch_line_search"`
	Steps           int64         `json:"steps"`
	LineSearch      int64         `json:"line_search"`
	WSq             float64       `json:"wsq"`
	RNG             []byte        `json:"rng"`
	Sampler         SamplerState  `json:"sampler"`
	Records         []EpochRecord `json:"records"`
	Settings        RunSettings   `json:"settings"`
	WeightsHash     string        `json:"weights_sha256"`
	DualsCRC        uint32        `json:"duals_crc32c"`
	// Schedule is the schedule of a parallel SDCA (absent for a
	// sequential one): "rounds" snapshots only where its pipeline is empty
	// (Next is the sentence carried to the next round, or −1); the
	// asynchronous ones ("async-atomic", "async-wild") between steps, Next
	// −1. Workers, the number of workers, and WorkerRNG, the workers'
	// random states, only a snapshot of an earlier version's parallel SDCA
	// has: such a snapshot is refused (this one cannot continue it).
	Schedule  string   `json:"schedule,omitempty"`
	Workers   int      `json:"workers,omitempty"`
	WorkerRNG [][]byte `json:"worker_rng,omitempty"`
	// AverageHash, for BCFW averaging, is the SHA-256 (hex) of
	// average.bin, its averaged weights w̄ as little-endian float64, and
	// AverageEpochs the epochs averaged into them.
	AverageHash   string `json:"average_sha256,omitempty"`
	AverageEpochs int    `json:"average_epochs,omitempty"`
	// Stream, for a run on a duals.Stream, is its committed slot map and
	// block checksums (the snapshot has no duals.bin: the duals stay in
	// the streamed file); BlockOrder is the epoch's block order and
	// BlockPos the blocks of it done (a snapshot is at a block boundary,
	// Next −1).
	Stream     *duals.StreamState `json:"stream,omitempty"`
	BlockOrder []int              `json:"block_order,omitempty"`
	BlockSteps []int              `json:"block_steps,omitempty"`
	BlockShare []float64          `json:"block_share,omitempty"`
	BlockPos   int                `json:"block_pos,omitempty"`
	// WarmRefresh: the run started warm, and refreshes its gap estimates
	// every WarmRefreshEvery epochs unless RefreshEvery says otherwise
	// (SDCA.Warm); a resume goes on doing so.
	WarmRefresh bool `json:"warm_refresh,omitempty"`
	// WarmGaps: the run started warm and its initial certificate, not
	// made yet, hands its exact block gaps to the sampler (SDCA.Warm).
	WarmGaps bool `json:"warm_gaps,omitempty"`
	// Facts are the caller's facts about the run (Settings.Facts).
	Facts json.RawMessage `json:"facts,omitempty"`
	// Held lists the streamed run's working set (sentences held apart from
	// their blocks), in the order of their duals in held.bin, whose CRC-32C
	// is HeldCRC; HeldOut the positions in Held of those ranked out of it,
	// held until their block's period.
	Held    []int  `json:"held,omitempty"`
	HeldOut []int  `json:"held_out,omitempty"`
	HeldCRC uint32 `json:"held_crc32c,omitempty"`
	// Refreshed counts the oracle calls the streamed run made to refresh
	// a block's gap estimates when it was read (Counters.OracleCalls).
	Refreshed int64 `json:"refreshed,omitempty"`
}

// stateFile is state.json: the state and the SHA-256 of its exact bytes.
type stateFile struct {
	SHA256 string          `json:"sha256"`
	State  json.RawMessage `json:"state"`
}

// Checkpoint is a loaded, verified snapshot.
type Checkpoint struct {
	Dir     string // the snapshot's directory
	Weights []float64
	Duals   *duals.File // open; the caller closes it; nil for a streamed run's
	// Refused lists the newer snapshots LoadCheckpoint refused before
	// this one, each with the reason ("ckpt-000012: state.json: …").
	Refused []string
	state   checkpointState
}

// Facts returns the caller's facts about the run the snapshot recorded
// (Settings.Facts); nil when none.
func (c *Checkpoint) Facts() json.RawMessage { return c.state.Facts }

// Progress returns the run's progress at the snapshot (its log shares
// the checkpoint's).
func (c *Checkpoint) Progress() *Progress {
	st := c.state
	return &Progress{Position: Position{Epoch: st.Epoch, Step: st.Step, Pending: st.Pending},
		Training: st.Training, Records: st.Records, settings: st.Settings, facts: st.Facts,
		EpochTraining: st.EpochTraining, EpochLineSearch: st.EpochLineSearch}
}

// snapshotName returns the name of the snapshot at pos.
func snapshotName(pos Position) string {
	switch {
	case pos.Pending:
		return fmt.Sprintf("ckpt-%06d-cert", pos.Epoch)
	case pos.Step > 0:
		return fmt.Sprintf("ckpt-%06d-step%d", pos.Epoch+1, pos.Step)
	}
	return fmt.Sprintf("ckpt-%06d", pos.Epoch)
}

var snapshotRE = regexp.MustCompile(`^ckpt-([0-9]{6,9})(-cert|-step([1-9][0-9]{0,11}))?$`)

// parseSnapshotName returns the position a snapshot name stands for.
func parseSnapshotName(name string) (Position, bool) {
	m := snapshotRE.FindStringSubmatch(name)
	if m == nil {
		return Position{}, false
	}
	ep, _ := strconv.Atoi(m[1])
	switch {
	case m[2] == "-cert":
		return Position{Epoch: ep, Pending: true}, true
	case m[3] != "":
		if ep == 0 {
			return Position{}, false
		}
		k, _ := strconv.Atoi(m[3])
		return Position{Epoch: ep - 1, Step: k}, true
	}
	return Position{Epoch: ep}, true
}

// before orders positions in time.
func (a Position) before(b Position) bool {
	key := func(p Position) [3]int {
		switch {
		case p.Pending:
			return [3]int{p.Epoch, 0, 0}
		case p.Step == 0:
			return [3]int{p.Epoch, 1, 0}
		}
		return [3]int{p.Epoch, 2, p.Step}
	}
	ka, kb := key(a), key(b)
	for i := range ka {
		if ka[i] != kb[i] {
			return ka[i] < kb[i]
		}
	}
	return false
}

// snapshotter is a method whose snapshots SaveCheckpoint writes.
type snapshotter interface {
	Method
	saveSnapshot(dir string, pr Progress) (string, error)
}

// SaveCheckpoint writes a snapshot of m at the driver's progress pr (what
// Train hands Settings.Checkpoint, the run's settings included) under dir
// (which the caller has locked with LockDir) and returns its path. m is a
// method that reads RunCheckpoint (SDCA, BCFW).
func SaveCheckpoint(dir string, m Method, pr Progress) (path string, err error) {
	s, ok := m.(snapshotter)
	if !ok {
		return "", fmt.Errorf("%w: %T cannot be checkpointed", ErrSettings, m)
	}
	return s.saveSnapshot(dir, pr)
}

// saveSnapshot writes SDCA's snapshot (SaveCheckpoint).
func (m *SDCA) saveSnapshot(dir string, pr Progress) (path string, err error) {
	name, tmp, err := beginSnapshot(dir, pr, m.pos)
	if err != nil {
		return "", err
	}
	if a, ok := m.sched.(*async); ok && !a.fresh {
		// Asynchronous steps leave w a little off ŵ(μ): the snapshot holds
		// ŵ(μ) itself.
		if err := a.exact(); err != nil {
			os.RemoveAll(tmp)
			return "", err
		}
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	d := m.p.Data
	if ss := m.streamStore(); ss != nil {
		// No copy of the duals: commit the streamed file and record its
		// slot map in the snapshot.
		err = ss.Commit(func(st duals.StreamState) error {
			if b := m.heldBytes(); len(b) > 0 {
				if err := writeSynced(filepath.Join(tmp, "held.bin"), b); err != nil {
					return err
				}
			}
			path, err = m.writeSnapshot(dir, tmp, name, pr, 0, &st)
			return err
		})
		return path, err
	}
	crc, err := duals.WriteFile(filepath.Join(tmp, "duals.bin"), d, m.duals)
	if err != nil {
		return "", fmt.Errorf("checkpoint: %w", err)
	}
	return m.writeSnapshot(dir, tmp, name, pr, crc, nil)
}

// writeSnapshot writes the weights and state.json of m at pr into tmp
// (which holds the duals, if any: their CRC crc, or the streamed store's
// committed state stream), and renames it into place as dir/name.
func (m *SDCA) writeSnapshot(dir, tmp, name string, pr Progress, crc uint32, stream *duals.StreamState) (string, error) {
	d := m.p.Data
	wb := floatBytes(m.st.dualVector()) // ŵ(μ); little-endian: writeDualsFile checked the host
	sum := sha256.Sum256(wb)
	if err := writeSynced(filepath.Join(tmp, "weights.bin"), wb); err != nil {
		return "", err
	}
	rng, err := m.src.MarshalBinary()
	if err != nil {
		return "", err
	}
	fp := duals.Fingerprint(d)
	st := checkpointState{Version: stateVersion, Fingerprint: hex.EncodeToString(fp[:]), Sentences: d.Len(), Dim: len(m.st.dualVector()),
		Epoch: pr.Epoch, Step: pr.Step, Next: -1, Pending: pr.Pending, Training: pr.Training,
		EpochTraining: pr.EpochTraining, EpochLineSearch: pr.EpochLineSearch,
		Steps: m.st.steps, LineSearch: m.st.lsIters, WSq: m.st.normSq(), RNG: rng, Sampler: m.sched.samplerState(),
		Records: pr.Records, Settings: pr.settings, WeightsHash: hex.EncodeToString(sum[:]), DualsCRC: crc, Stream: stream,
		WarmRefresh: m.warmRefresh, WarmGaps: m.warmGaps, Facts: pr.facts}
	if err := m.sched.save(&st); err != nil {
		return "", err
	}
	return commitSnapshot(dir, tmp, name, st)
}

// beginSnapshot checks that the driver's progress pr is at the method's
// step pos and carries the run's settings, and makes the temporary
// directory tmp in dir where the snapshot name is written before
// commitSnapshot renames it.
func beginSnapshot(dir string, pr Progress, pos int) (name, tmp string, err error) {
	if pr.Step != pos {
		return "", "", fmt.Errorf("checkpoint: the driver is at step %d of its epoch, the method at %d", pr.Step, pos)
	}
	if pr.settings.Version != settingsVersion {
		return "", "", fmt.Errorf("checkpoint: the progress holds no run settings to record (it was not made by Train)")
	}
	name = snapshotName(pr.Position)
	if tmp, err = os.MkdirTemp(dir, "."+name+".tmp-"); err != nil {
		return "", "", fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	return name, tmp, nil
}

// commitSnapshot writes the state st into the snapshot directory tmp, whose
// other files are written and synced, and makes it the snapshot name of
// dir: tmp renamed to it, CURRENT pointing at it, older snapshots pruned.
func commitSnapshot(dir, tmp, name string, st checkpointState) (string, error) {
	js, err := encodeState(st)
	if err != nil {
		return "", fmt.Errorf("checkpoint: %w", err)
	}
	if err := writeSynced(filepath.Join(tmp, "state.json"), js); err != nil {
		return "", err
	}
	if err := platform.SyncDir(tmp); err != nil {
		return "", err
	}
	final := filepath.Join(dir, name)
	if err := renameReplacing(tmp, final); err != nil {
		return "", fmt.Errorf("checkpoint: %w", err)
	}
	if err := platform.SyncDir(dir); err != nil {
		return "", err
	}
	if err := writeSyncedRename(filepath.Join(dir, "CURRENT"), []byte(name+"\n")); err != nil {
		return "", err
	}
	pruneSnapshots(dir, name)
	return final, nil
}

// renameReplacing renames the directory tmp to final; an existing final
// (a snapshot of the same position, written again after a resume) is
// exchanged with it atomically (where the system can: platform.ExchangeDirs) and then
// removed, so final never vanishes.
func renameReplacing(tmp, final string) error {
	err := os.Rename(tmp, final)
	if err == nil || !platform.IsDirInTheWay(err) {
		return err
	}
	if err := platform.ExchangeDirs(tmp, final); err != nil {
		// No atomic exchange here: move the old one aside first.
		old := tmp + ".old"
		if err := os.Rename(final, old); err != nil {
			return err
		}
		if err := os.Rename(tmp, final); err != nil {
			return err
		}
		return os.RemoveAll(old)
	}
	return os.RemoveAll(tmp) // tmp now holds the old snapshot
}

// encodeState returns the bytes of state.json for st: its JSON with the
// SHA-256 of those exact bytes.
func encodeState(st checkpointState) ([]byte, error) {
	body, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(body)
	return json.Marshal(stateFile{SHA256: hex.EncodeToString(sum[:]), State: body})
}

// decodeState parses and checks state.json for a dataset of n sentences
// and dim weights: its checksum, version, and that its position, counters,
// random state, sampler state and log are consistent. It never trusts a
// number it has not checked.
func decodeState(b []byte, n, dim int) (checkpointState, error) {
	var st checkpointState
	var f stateFile
	if err := json.Unmarshal(b, &f); err != nil {
		return st, fmt.Errorf("state.json: %w", err)
	}
	sum := sha256.Sum256(f.State)
	if f.SHA256 != hex.EncodeToString(sum[:]) {
		return st, fmt.Errorf("state.json: checksum mismatch (edited or corrupt)")
	}
	if again, err := json.Marshal(f); err != nil || !bytes.Equal(again, b) {
		return st, fmt.Errorf("state.json: not in the form this program writes (edited or corrupt)")
	}
	var head struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(f.State, &head); err != nil {
		return st, fmt.Errorf("state.json: %w", err)
	}
	switch {
	case head.Version < stateVersion:
		return st, errOldSettings
	case head.Version > stateVersion:
		return st, fmt.Errorf("state.json: version %d, this build reads %d (written by a later version of dualcrf)", head.Version, stateVersion)
	}
	dec := json.NewDecoder(bytes.NewReader(f.State))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil {
		return st, fmt.Errorf("state.json: %w", err)
	}
	if st.Settings.Version != settingsVersion {
		return st, fmt.Errorf("state.json: run settings of version %d, this build reads %d", st.Settings.Version, settingsVersion)
	}
	if err := st.check(n, dim); err != nil {
		return st, fmt.Errorf("state.json: %w", err)
	}
	return st, nil
}

// check verifies that the state is one an SDCA run on n sentences and dim
// weights can be in.
func (st *checkpointState) check(n, dim int) error {
	switch {
	case st.Sentences != n:
		return fmt.Errorf("made for %d sentences, this dataset has %d", st.Sentences, n)
	case st.Dim != dim:
		return fmt.Errorf("has %d weights, this problem needs %d (%w)", st.Dim, dim, &option.Error{Msg: "other {NoBias} setting?"})
	case st.Epoch < 0 || st.Epoch > 1<<30:
		return fmt.Errorf("epoch %d out of range", st.Epoch)
	case st.Step < 0 || st.Step >= n:
		return fmt.Errorf("step %d out of range [0,%d)", st.Step, n)
	case st.Pending && st.Step != 0:
		return fmt.Errorf("pending record at step %d", st.Step)
	case len(st.WorkerRNG) != 0:
		return fmt.Errorf("made by an earlier version's parallel SDCA (%d workers with their own random states), which this one cannot continue; start a fresh run", len(st.WorkerRNG))
	case st.WarmGaps && !(st.Epoch == 0 && st.Pending):
		return fmt.Errorf("a warm start's initial gaps pending at epoch %d (pending %v)", st.Epoch, st.Pending)
	case len(st.Facts) > 0 && st.Facts[0] != '{':
		return fmt.Errorf("the run's facts are not a JSON object")
	case st.Refreshed < 0 || st.Refreshed > 0 && st.Stream == nil:
		return fmt.Errorf("%d refresh oracle calls", st.Refreshed)
	case st.Workers != 0:
		return fmt.Errorf("made by an earlier version's parallel SDCA (%d workers), which this one cannot continue; start a fresh run", st.Workers)
	case st.Schedule != "" && st.Schedule != ScheduleRounds && st.Schedule != ScheduleAsyncAtomic && st.Schedule != ScheduleAsyncWild:
		return fmt.Errorf("schedule %q", st.Schedule)
	case st.Stream != nil && (st.Next != -1 || st.BlockPos < 0 || (st.Step > 0) != (st.BlockPos > 0) ||
		len(st.BlockSteps) != len(st.BlockOrder) || len(st.BlockShare) != len(st.BlockOrder) || (st.Step > 0 && st.BlockPos >= len(st.BlockOrder))):
		return fmt.Errorf("streamed run at step %d, block %d of %d, next sentence %d", st.Step, st.BlockPos, len(st.BlockOrder), st.Next)
	case st.Stream == nil && (st.Step == 0 && st.Next != -1 || st.Step > 0 && st.Schedule == "" && (st.Next < 0 || st.Next >= n) ||
		st.Schedule == ScheduleRounds && (st.Next < -1 || st.Next >= n) || (st.Schedule == ScheduleAsyncAtomic || st.Schedule == ScheduleAsyncWild) && st.Next != -1):
		return fmt.Errorf("next sentence %d at step %d", st.Next, st.Step)
	case st.Steps != int64(st.Epoch)*int64(n)+int64(st.Step):
		return fmt.Errorf("%d steps done, but epoch %d step %d of %d sentences means %d",
			st.Steps, st.Epoch, st.Step, n, int64(st.Epoch)*int64(n)+int64(st.Step))
	case st.LineSearch < 0 || st.EpochLineSearch < 0 || st.EpochLineSearch > st.LineSearch:
		return fmt.Errorf("line-search counters %d, %d", st.LineSearch, st.EpochLineSearch)
	case st.Training < 0 || st.EpochTraining < 0 || st.EpochTraining > st.Training:
		return fmt.Errorf("training times %v, %v", st.Training, st.EpochTraining)
	case !(st.WSq >= 0) || math.IsInf(st.WSq, 0):
		return fmt.Errorf("‖w‖² = %g", st.WSq)
	case len(st.RNG) != 20:
		return fmt.Errorf("random state of %d bytes, want 20", len(st.RNG))
	case len(st.Sampler.Gaps) != n:
		return fmt.Errorf("sampler state has %d gaps for %d sentences", len(st.Sampler.Gaps), n)
	}
	for i, g := range st.Sampler.Gaps {
		if !(g >= 0 && g <= maxGapEstimate) {
			return fmt.Errorf("sampler gap %d is %g", i, g)
		}
	}
	want := st.Epoch + 1
	if st.Pending {
		want = st.Epoch
	}
	if len(st.Records) != want {
		return fmt.Errorf("%d log records at epoch %d (pending %v), want %d", len(st.Records), st.Epoch, st.Pending, want)
	}
	for i, r := range st.Records {
		if r.Epoch != i || r.Steps < 0 || r.Steps > st.Steps {
			return fmt.Errorf("log record %d: epoch %d, %d steps", i, r.Epoch, r.Steps)
		}
	}
	return nil
}

// pruneSnapshots removes all but the newest keepSnapshots snapshots, never
// the current one.
func pruneSnapshots(dir, current string) {
	for i, n := range snapshotNames(dir) {
		if i >= keepSnapshots && n != current {
			os.RemoveAll(filepath.Join(dir, n))
		}
	}
}

// snapshotNames lists the snapshot directories, newest first.
func snapshotNames(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	type snap struct {
		name string
		pos  Position
	}
	var snaps []snap
	for _, e := range ents {
		if pos, ok := parseSnapshotName(e.Name()); ok && e.IsDir() {
			snaps = append(snaps, snap{e.Name(), pos})
		}
	}
	sort.Slice(snaps, func(i, j int) bool { return snaps[j].pos.before(snaps[i].pos) })
	names := make([]string, len(snaps))
	for i, s := range snaps {
		names[i] = s.name
	}
	return names
}

// LoadCheckpoint finds the newest valid snapshot under dir for problem p:
// the one CURRENT names, else older ones. Each refused snapshot is reported
// through warn (may be nil) with the reason. The caller holds dir's lock.
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
		name := strings.TrimSuffix(string(b), "\n")
		if _, ok := parseSnapshotName(name); ok {
			order = append(order, name)
		} else if warn != nil {
			warn(fmt.Sprintf("resume: %s names %.40q, not a snapshot of this directory; ignoring it",
				filepath.Join(dir, "CURRENT"), name))
		}
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
			if pos, _ := parseSnapshotName(n); pos != (Position{Epoch: c.state.Epoch, Step: c.state.Step, Pending: c.state.Pending}) {
				c.Duals.Close()
				err = fmt.Errorf("state.json holds position %d/%d/%v, not the one its name says", c.state.Epoch, c.state.Step, c.state.Pending)
			} else {
				c.Refused = reasons
				return c, nil
			}
		}
		reasons = append(reasons, n+": "+err.Error())
		if warn != nil {
			warn(fmt.Sprintf("resume: refusing snapshot %s: %v", n, err))
		}
	}
	return nil, fmt.Errorf("%w in %s: %s", ErrNoCheckpoint, dir, strings.Join(reasons, "; "))
}

func loadSnapshot(snap string, p *Problem) (*Checkpoint, error) {
	js, err := readSmall(filepath.Join(snap, "state.json"), 1<<20+64*int64(p.N()))
	if err != nil {
		return nil, err
	}
	fp := duals.Fingerprint(p.Data)
	var head struct {
		State struct {
			Fingerprint string `json:"fingerprint"`
			Dim         int    `json:"dim"`
		} `json:"state"`
	}
	dim := p.Layout.Dim()
	if json.Unmarshal(js, &head) == nil {
		if head.State.Fingerprint != "" && head.State.Fingerprint != hex.EncodeToString(fp[:]) {
			return nil, fmt.Errorf("made for another dataset (fingerprint %.12s…, this one %.12s…)", head.State.Fingerprint, hex.EncodeToString(fp[:]))
		}
		if p.Layout.Free != nil && head.State.Dim == p.Layout.Dense().Dim() {
			dim = head.State.Dim // the weights of a dense layout over the same feature space: compacted below
		}
	}
	st, err := decodeState(js, p.N(), dim)
	if err != nil {
		return nil, err
	}
	if st.Fingerprint != hex.EncodeToString(fp[:]) {
		return nil, fmt.Errorf("made for another dataset (fingerprint %.12s…, this one %.12s…)", st.Fingerprint, hex.EncodeToString(fp[:]))
	}
	wb, err := readSmall(filepath.Join(snap, "weights.bin"), 8*int64(st.Dim))
	if err != nil {
		return nil, err
	}
	w, err := decodeWeights(wb, st.Dim, st.WeightsHash)
	if err != nil {
		return nil, err
	}
	if st.Dim != p.Layout.Dim() {
		var zero bool
		if w, zero = p.Layout.Compact(w); !zero {
			return nil, fmt.Errorf("weights.bin: a weight outside the feature space is not zero (%w)", &option.Error{Msg: "other {FeatureSpace} setting?"})
		}
		st.Dim = len(w)
	}
	if st.Stream != nil {
		// The duals are in the streamed file: SDCA's resume adopts its slot
		// map, checks each block's CRC as it reads it and the weights
		// against ŵ(μ).
		return &Checkpoint{Dir: snap, state: st, Weights: w}, nil
	}
	fs, err := duals.OpenFile(filepath.Join(snap, "duals.bin"), p.Data)
	if err != nil {
		return nil, err
	}
	c := &Checkpoint{Dir: snap, state: st, Weights: w, Duals: fs}
	if err := c.verify(p); err != nil {
		fs.Close()
		return nil, err
	}
	return c, nil
}

// readSmall reads a file of at most max bytes.
func readSmall(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > max {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d it can hold", filepath.Base(path), st.Size(), max)
	}
	b := make([]byte, st.Size())
	if _, err := f.ReadAt(b, 0); err != nil && st.Size() > 0 {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return b, nil
}

// decodeWeights checks weights.bin (dim little-endian float64 with the
// SHA-256 hash, hex) and returns the weights, all finite.
func decodeWeights(b []byte, dim int, hash string) ([]float64, error) {
	if len(b) != 8*dim {
		return nil, fmt.Errorf("weights.bin: %d bytes, want %d (%d weights)", len(b), 8*dim, dim)
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != hash {
		return nil, fmt.Errorf("weights.bin: checksum mismatch (corrupt or incomplete)")
	}
	w := bytesFloat64(b)
	for j, v := range w {
		if !finite(v) {
			return nil, fmt.Errorf("weights.bin: weight %d is %g", j, v)
		}
	}
	return w, nil
}

// verify checks the duals' checksum, that every block is a probability
// distribution on each clique, and that the weights equal ŵ(μ).
func (c *Checkpoint) verify(p *Problem) error {
	crc := uint32(0)
	raw := c.Duals.Sweep()
	for i := 0; i < c.Duals.Len(); i++ {
		crc = crc32.Update(crc, castagnoli, raw(i))
	}
	if crc != c.state.DualsCRC {
		return fmt.Errorf("duals.bin: CRC-32C %08x, state.json says %08x (corrupt)", crc, c.state.DualsCRC)
	}
	for _, b := range c.Duals.Padding() {
		if b != 0 {
			return fmt.Errorf("duals.bin: the padding after μ is not zero (corrupt)")
		}
	}
	K := p.Layout.NumLabels
	r := c.Duals.SweepReader()
	var mu []float64
	for i := 0; i < c.Duals.Len(); i++ {
		mu = grow(mu, crf.BlockLen(p.Data.SentStart[i+1]-p.Data.SentStart[i], K))
		r.Load(i, mu)
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
	w, err := p.What(c.Duals.SweepReader()) // What reads the blocks in order
	if err != nil {
		return fmt.Errorf("duals: %w", err)
	}
	scale, diff := 1.0, 0.0
	for j, v := range w {
		scale = max(scale, math.Abs(v))
		diff = max(diff, math.Abs(v-c.Weights[j]))
	}
	// ‖w‖² of the primal point: ŵ(μ) itself, or for the elastic net its
	// soft-thresholded copy — by the snapshot's own λ and λ₁ (another λ₁
	// is for the settings check to name).
	wsq := 0.0
	tau := 0.0
	if rs := c.state.Settings; rs.L1 != 0 {
		tau = rs.L1 / rs.Lambda
	}
	for _, v := range c.Weights {
		v = soft(v, tau)
		wsq += v * v
	}
	if diff > 1e-7*scale {
		return fmt.Errorf("weights differ from ŵ(μ) recomputed from the duals by %.3g (scale %.3g)", diff, scale)
	}
	if math.Abs(wsq-c.state.WSq) > 1e-9*max(1, wsq) {
		return fmt.Errorf("state.json: ‖w‖² = %.17g, the weights give %.17g", c.state.WSq, wsq)
	}
	return nil
}

// floatBytes views v as its bytes (little-endian hosts only: checkHost).
func floatBytes(v []float64) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 8*len(v))
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
	return platform.SyncDir(filepath.Dir(path))
}

// Snapshots lists the snapshots in dir, newest first; a directory that
// does not exist has none.
func Snapshots(dir string) []string { return snapshotNames(dir) }

// CheckFresh refuses a checkpoint directory that holds snapshots (or a
// CURRENT naming one) when a run is to start from the beginning there: its
// snapshots would be mixed with the earlier run's, and a streamed run
// would overwrite the duals they refer to. The refusal is an
// *option.Error about the checkpoint directory (Checkpoint, as
// stage.TrainOptions names it) that wraps ErrCheckpointExists.
func CheckFresh(dir string) error {
	if names := snapshotNames(dir); len(names) > 0 {
		return freshError(dir, names[0])
	}
	if b, err := os.ReadFile(filepath.Join(dir, "CURRENT")); err == nil {
		return freshError(dir, fmt.Sprintf("%.40q", strings.TrimSpace(string(b))))
	}
	return nil
}

// freshError is CheckFresh's refusal of dir, whose newest snapshot is
// newest.
func freshError(dir, newest string) error {
	return &option.Error{Err: ErrCheckpointExists,
		Msg: fmt.Sprintf("{Checkpoint} %s holds the snapshots of an earlier run (newest %s): continue it with {Resume} %s, or remove %s to start afresh", dir, newest, dir, dir)}
}

// RemoveSnapshots removes what a finished run leaves in its checkpoint
// directory dir (which the caller has locked): the snapshots, CURRENT and,
// when streamed is not "", the streamed duals file they refer to. The
// directory itself and its LOCK stay.
func RemoveSnapshots(dir, streamed string) error {
	var errs []error
	// CURRENT first: a crash midway leaves no name pointing at a removed
	// snapshot, only older snapshots that a resume would still verify.
	if err := os.Remove(filepath.Join(dir, "CURRENT")); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	for _, n := range snapshotNames(dir) {
		if err := os.RemoveAll(filepath.Join(dir, n)); err != nil {
			errs = append(errs, err)
		}
	}
	if streamed != "" {
		if err := os.Remove(streamed); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("remove the snapshots in %s: %w", dir, err)
	}
	return nil
}
