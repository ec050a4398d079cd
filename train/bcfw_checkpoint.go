package train

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/dualcrf/dualcrf/duals"
)

// BCFW's snapshots have SDCA's format (duals.bin, weights.bin,
// state.json): its duals are clique marginals and its weights ŵ(μ), so
// LoadCheckpoint verifies them as it does SDCA's; the run settings record
// the solver "bcfw", which an SDCA run refuses to resume and vice versa.

// RunSettings returns every setting of BCFW on p that a resumed run must
// repeat: the sampler's, the seed, λ, the feature space and the Hamming
// loss.
func (m *BCFW) RunSettings(p *Problem) RunSettings {
	rs := RunSettings{Version: settingsVersion, Solver: "bcfw", Seed: m.Seed, Lambda: p.Lambda, Sentences: p.N(),
		FeatureSpace: p.FeatureSpace(), Transitions: p.TransitionSpace(), Bias: !p.Layout.NoBias, Workers: 1,
		Hamming: m.hamming()}
	rs.Sampler, rs.NonUniform = samplerSettings(m.Sampler)
	return rs
}

// Resume implements Resumer: it prepares BCFW for p at checkpoint c's
// exact position, a verified checkpoint of a run with the same settings
// (Train checks them).
func (m *BCFW) Resume(p *Problem, c *Checkpoint) error {
	if err := m.setup(p); err != nil {
		return err
	}
	st := c.state
	if st.Stream != nil || st.Workers > 1 {
		return fmt.Errorf("resume %s: not a snapshot of a BCFW run", c.Dir)
	}
	c.CopyDuals(m.duals)
	m.st.w = slices.Clone(c.Weights)
	m.st.wsq = st.WSq
	m.st.steps, m.epoch, m.pos, m.next = st.Steps, st.Epoch, st.Step, st.Next
	if st.Steps == 0 {
		m.whatAt = 0 // w = 0 from the gold duals, as Init left it
	}
	if err := m.resumeAverage(c); err != nil {
		return err
	}
	if err := m.src.UnmarshalBinary(st.RNG); err != nil {
		return fmt.Errorf("resume: random state: %w", err)
	}
	return m.sampler.Restore(st.Sampler)
}

// saveSnapshot writes BCFW's snapshot (SaveCheckpoint).
func (m *BCFW) saveSnapshot(dir string, pr Progress) (path string, err error) {
	name, tmp, err := beginSnapshot(dir, pr, m.pos)
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	d := m.p.Data
	crc, err := duals.WriteFile(filepath.Join(tmp, "duals.bin"), d, m.duals)
	if err != nil {
		return "", fmt.Errorf("checkpoint: %w", err)
	}
	wb := floatBytes(m.st.w)
	sum := sha256.Sum256(wb)
	if err := writeSynced(filepath.Join(tmp, "weights.bin"), wb); err != nil {
		return "", err
	}
	var avgHash string
	if m.avg != nil {
		ab := floatBytes(m.avg)
		sum := sha256.Sum256(ab)
		avgHash = hex.EncodeToString(sum[:])
		if err := writeSynced(filepath.Join(tmp, "average.bin"), ab); err != nil {
			return "", err
		}
	}
	rng, err := m.src.MarshalBinary()
	if err != nil {
		return "", err
	}
	fp := duals.Fingerprint(d)
	st := checkpointState{Version: stateVersion, Fingerprint: hex.EncodeToString(fp[:]), Sentences: d.Len(), Dim: len(m.st.w),
		Epoch: pr.Epoch, Step: pr.Step, Next: m.next, Pending: pr.Pending, Training: pr.Training,
		EpochTraining: pr.EpochTraining, EpochLineSearch: pr.EpochLineSearch,
		Steps: m.st.steps, WSq: m.st.wsq, RNG: rng, Sampler: m.sampler.State(),
		Records: pr.Records, Settings: pr.settings, WeightsHash: hex.EncodeToString(sum[:]), DualsCRC: crc,
		AverageHash: avgHash, AverageEpochs: m.avgN, Facts: pr.facts}
	return commitSnapshot(dir, tmp, name, st)
}

// resumeAverage restores w̄ from the snapshot's average.bin when the run
// averages; a snapshot with averaged weights and a run not averaging, or
// the other way round, cannot continue each other.
func (m *BCFW) resumeAverage(c *Checkpoint) error {
	st := c.state
	switch {
	case m.avg == nil && st.AverageHash == "":
		return nil
	case m.avg == nil:
		return fmt.Errorf("resume %s: the snapshot holds averaged weights; this run (NoAverage) keeps none", c.Dir)
	case st.AverageHash == "":
		return fmt.Errorf("resume %s: the snapshot holds no averaged weights (a run with NoAverage)", c.Dir)
	case st.AverageEpochs < 0 || st.AverageEpochs > st.Epoch:
		return fmt.Errorf("resume %s: state.json: %d epochs averaged after %d epochs", c.Dir, st.AverageEpochs, st.Epoch)
	}
	path := filepath.Join(c.Dir, "average.bin")
	b, err := readSmall(path, 8*int64(len(m.avg)))
	if err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	if len(b) != 8*len(m.avg) {
		return fmt.Errorf("resume: %s: %d bytes, want %d (%d weights)", path, len(b), 8*len(m.avg), len(m.avg))
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != st.AverageHash {
		return fmt.Errorf("resume: %s: checksum mismatch (corrupt or incomplete)", path)
	}
	for j, v := range bytesFloat64(b) {
		if !finite(v) {
			return fmt.Errorf("resume: %s: weight %d is %g", path, j, v)
		}
		m.avg[j] = v
	}
	m.avgN = st.AverageEpochs
	return nil
}
