package train

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/duals"
)

// newStream creates a streamed store for p in dir with blocks of about
// blockBytes (≤ 0: one block).
func newStream(t *testing.T, p *Problem, path string, blockBytes int64, spare int) *duals.Stream {
	t.Helper()
	o := duals.StreamOptions{BlockBytes: blockBytes, Spare: spare}
	if p.L1 > 0 {
		o.Precision = duals.Float64 // the elastic net's
	}
	s, err := duals.CreateStream(path, p.Data, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// streamRun trains p sequentially on a fresh streamed store and returns
// the result.
func streamRun(t *testing.T, p *Problem, kind string, blockBytes int64, epochs int) (*Result, *duals.Stream) {
	t.Helper()
	return streamRunWith(t, p, &SDCA{Sampler: kindSampler(t, kind, p), Seed: 5, Workers: 1}, blockBytes, epochs)
}

// streamRunWith trains p with m on a fresh streamed store and returns the
// result.
func streamRunWith(t *testing.T, p *Problem, m *SDCA, blockBytes int64, epochs int) (*Result, *duals.Stream) {
	t.Helper()
	s := newStream(t, p, filepath.Join(t.TempDir(), "duals.stream"), blockBytes, 0)
	m.Duals = s
	res, err := Train(context.Background(), p, Settings{MaxEpochs: epochs, GapTol: 1e-300, GapEvery: 1}, m)
	if err != nil {
		t.Fatal(err)
	}
	return res, s
}

// TestStreamOneBlockIsInMemory: with one block of every sentence, the
// streamed SDCA makes exactly the in-memory SDCA's steps (same weights and
// certificates bit for bit), for every sampler kind.
func TestStreamOneBlockIsInMemory(t *testing.T) {
	p := randomProblem(t, 71, 80, 6, 15, 3, true, 0)
	for _, kind := range SamplerKinds() {
		t.Run(kind, func(t *testing.T) {
			mem := &SDCA{Sampler: kindSampler(t, kind, p), Seed: 5, Workers: 1}
			want, err := Train(context.Background(), p, Settings{MaxEpochs: 4, GapTol: 1e-300, GapEvery: 1}, mem)
			if err != nil {
				t.Fatal(err)
			}
			got, s := streamRun(t, p, kind, 0, 4)
			if s.Blocks() != 1 {
				t.Fatalf("%d blocks, want 1", s.Blocks())
			}
			sameBits(t, "weights", want.Weights, got.Weights)
			for e := range want.Records {
				if want.Records[e].Gap != got.Records[e].Gap {
					t.Fatalf("epoch %d: gap %.17g in memory, %.17g streamed", e, want.Records[e].Gap, got.Records[e].Gap)
				}
			}
		})
	}
}

// TestStreamBlocksCertifyExactly runs the streamed SDCA on many blocks and
// checks that its certificate — computed from μ read block by block from
// the file — equals bit for bit the one computed in memory from a copy of
// the same μ, that the gap identity holds, that the gap falls, that the
// same seed gives the same weights, and that a store of other blocks goes
// elsewhere.
func TestStreamBlocksCertifyExactly(t *testing.T) {
	p := randomProblem(t, 72, 300, 6, 15, 3, true, 0)
	bb := duals.Bytes(p.Data, duals.DefaultPrecision) / 9
	for _, kind := range []string{SamplerGap, SamplerUniform} {
		t.Run(kind, func(t *testing.T) {
			res, s := streamRun(t, p, kind, bb, 6)
			if s.Blocks() < 8 {
				t.Fatalf("%d blocks, want ≥ 8", s.Blocks())
			}
			if g0, g := res.Records[0].Gap, res.Last.Gap; !(g < g0/5) {
				t.Fatalf("gap %g after 6 epochs from %g", g, g0)
			}
			mem := duals.NewMemory(p.Data, s.Precision())
			defer mem.Close()
			for i := 0; i < p.N(); i++ {
				copy(mem.Raw(i), s.Raw(i))
			}
			w := mustWhat(t, p, mem)
			sameBits(t, "ŵ(μ) in memory vs the certified weights", w, res.Weights)
			r, err := p.pass(context.Background(), w, mem, false)
			if err != nil {
				t.Fatal(err)
			}
			if r.Primal != res.Last.Primal || r.Dual != res.Last.Dual {
				t.Fatalf("in memory P %.17g D %.17g, streamed P %.17g D %.17g", r.Primal, r.Dual, res.Last.Primal, res.Last.Dual)
			}
			again, _ := streamRun(t, p, kind, bb, 6)
			sameBits(t, "same seed", res.Weights, again.Weights)
			other, _ := streamRun(t, p, kind, bb/2, 6)
			if other.Weights[0] == res.Weights[0] && other.Weights[len(res.Weights)-1] == res.Weights[len(res.Weights)-1] {
				t.Fatalf("other blocks, same weights: the blocks make no difference?")
			}
		})
	}
}

// streamCkptRun trains p on the streamed store at path (created afresh, or
// opened and resumed from dir's newest snapshot when dir has one), with
// checkpoints into dir, and the saver wrapped by wrap.
func streamCkptRun(t *testing.T, p *Problem, path, dir string, set Settings, ctx context.Context,
	wrap func(func(Progress) (string, error)) func(Progress) (string, error)) (*Result, error) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	o := duals.StreamOptions{BlockBytes: duals.Bytes(p.Data, duals.DefaultPrecision) / 9, Spare: 2}
	if p.L1 > 0 {
		o.Precision = duals.Float64 // the elastic net's
	}
	var s *duals.Stream
	var err error
	resume := len(snapshotNames(dir)) > 0
	if resume {
		s, err = duals.OpenStream(path, p.Data, o)
	} else {
		s, err = duals.CreateStream(path, p.Data, o)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := &SDCA{Sampler: kindSampler(t, SamplerGap, p), Seed: 9, Duals: s}
	set.Checkpoint = saver(dir, m)
	if wrap != nil {
		set.Checkpoint = wrap(set.Checkpoint)
	}
	if resume {
		c, err := LoadCheckpoint(dir, p, func(s string) { t.Log(s) })
		if err != nil {
			t.Fatal(err)
		}
		set.Resume = c
	}
	return Train(ctx, p, set, m)
}

// TestStreamCrashAnywhereResumes: a checkpointed streamed run commits
// within epochs (2 spare slots: every block write); a crash after any
// commit — blocks written to the file but not committed, simulated by a
// commit that fails before its state file — and a resume from the last
// committed state give the uninterrupted run's weights bit for bit; so
// does a cancellation between two blocks.
func TestStreamCrashAnywhereResumes(t *testing.T) {
	p := randomProblem(t, 73, 200, 6, 15, 3, true, 0)
	set := Settings{MaxEpochs: 4, GapTol: 1e-300, GapEvery: 2, CheckpointEvery: 1}
	base := t.TempDir()
	full, err := streamCkptRun(t, p, filepath.Join(base, "duals"), filepath.Join(base, "ck"), set, context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	commits := 0
	count := func(save func(Progress) (string, error)) func(Progress) (string, error) {
		return func(pr Progress) (string, error) { commits++; return save(pr) }
	}
	dir := t.TempDir()
	if _, err := streamCkptRun(t, p, filepath.Join(dir, "duals"), filepath.Join(dir, "ck"), set, context.Background(), count); err != nil {
		t.Fatal(err)
	}
	if commits < 8 {
		t.Fatalf("%d commits in 4 epochs; want commits within epochs", commits)
	}
	crash := errors.New("crash")
	for _, at := range []int{1, 2, 3, commits / 2, commits - 1} {
		t.Run(fmt.Sprint("commit", at), func(t *testing.T) {
			dir := t.TempDir()
			path, ck := filepath.Join(dir, "duals"), filepath.Join(dir, "ck")
			k := 0
			fail := func(save func(Progress) (string, error)) func(Progress) (string, error) {
				return func(pr Progress) (string, error) {
					if k++; k == at {
						return "", crash
					}
					return save(pr)
				}
			}
			if _, err := streamCkptRun(t, p, path, ck, set, context.Background(), fail); !errors.Is(err, crash) {
				t.Fatalf("got %v, want the crash", err)
			}
			if at == 1 {
				return // nothing committed: a new run starts afresh
			}
			res, err := streamCkptRun(t, p, path, ck, set, context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			sameBits(t, "resumed vs uninterrupted", full.Weights, res.Weights)
		})
	}
	t.Run("cancel", func(t *testing.T) {
		dir := t.TempDir()
		path, ck := filepath.Join(dir, "duals"), filepath.Join(dir, "ck")
		ctx, cancel := context.WithCancel(context.Background())
		k := 0
		stop := func(save func(Progress) (string, error)) func(Progress) (string, error) {
			return func(pr Progress) (string, error) {
				if k++; k == 5 {
					cancel()
				}
				return save(pr)
			}
		}
		_, err := streamCkptRun(t, p, path, ck, set, ctx, stop)
		var ie *InterruptedError
		if !errors.As(err, &ie) {
			t.Fatalf("got %v, want an interruption", err)
		}
		res, err := streamCkptRun(t, p, path, ck, set, context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		sameBits(t, "resumed vs uninterrupted", full.Weights, res.Weights)
	})
}

// TestStreamCorrupt: a flipped byte in a block of the streamed file, or a
// file that is not one, is refused on resume with an error naming the file.
func TestStreamCorrupt(t *testing.T) {
	p := randomProblem(t, 74, 120, 6, 15, 3, true, 0)
	set := Settings{MaxEpochs: 2, GapTol: 1e-300, CheckpointEvery: 1}
	dir := t.TempDir()
	path, ck := filepath.Join(dir, "duals"), filepath.Join(dir, "ck")
	if _, err := streamCkptRun(t, p, path, ck, set, context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	b := make([]byte, st.Size())
	f.ReadAt(b, 0)
	o := duals.StreamOptions{BlockBytes: duals.Bytes(p.Data, duals.DefaultPrecision) / 9, Spare: 2}
	if p.L1 > 0 {
		o.Precision = duals.Float64 // the elastic net's
	}
	// Flip a byte inside every slot's first entry: whichever slots the
	// state references, a block read is corrupt.
	blocks, slot, size := duals.StreamLayout(p.Data, o)
	header := size - int64(blocks+o.Spare)*slot // the header page before the slots
	for at := header + 3; at < st.Size(); at += slot {
		b[at] ^= 0x40
	}
	f.WriteAt(b, 0)
	f.Close()
	s, err := duals.OpenStream(path, p.Data, o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := LoadCheckpoint(ck, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := &SDCA{Sampler: kindSampler(t, SamplerGap, p), Seed: 9, Duals: s}
	set.Resume = c
	set.Checkpoint = saver(ck, m)
	_, err = Train(context.Background(), p, set, m)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "CRC") {
		t.Fatalf("got %v, want a CRC error naming %s", err, path)
	}
	s.Close() // releases the file's lock
	os.WriteFile(path, []byte("not a streamed duals file at all"), 0o666)
	if _, err := duals.OpenStream(path, p.Data, o); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("got %v, want an error naming %s", err, path)
	}
	other := randomProblem(t, 75, 120, 6, 15, 3, true, 0)
	so, err := duals.CreateStream(path, other.Data, o)
	if err != nil {
		t.Fatal(err)
	}
	so.Close()
	if _, err := duals.OpenStream(path, p.Data, o); !errors.Is(err, duals.ErrMismatch) {
		t.Fatalf("got %v, want duals.ErrMismatch", err)
	}
}

// TestStreamHeldCorrupt: a snapshot's working set (held.bin) flipped,
// truncated or missing is refused on resume with an error naming it.
func TestStreamHeldCorrupt(t *testing.T) {
	p := randomProblem(t, 76, 200, 6, 15, 3, true, 0)
	set := Settings{MaxEpochs: 2, GapTol: 1e-300, CheckpointEvery: 1}
	for _, how := range []string{"flip", "truncate", "remove"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			path, ck := filepath.Join(dir, "duals"), filepath.Join(dir, "ck")
			if _, err := streamCkptRun(t, p, path, ck, set, context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			cur, err := os.ReadFile(filepath.Join(ck, "CURRENT"))
			if err != nil {
				t.Fatal(err)
			}
			held := filepath.Join(ck, strings.TrimSpace(string(cur)), "held.bin")
			b, err := os.ReadFile(held)
			if err != nil || len(b) == 0 {
				t.Fatalf("the last snapshot holds no working set: %v", err)
			}
			switch how {
			case "flip":
				b[len(b)/2] ^= 1
				os.WriteFile(held, b, 0o666)
			case "truncate":
				os.WriteFile(held, b[:len(b)-8], 0o666)
			case "remove":
				os.Remove(held)
			}
			_, err = streamCkptRun(t, p, path, ck, Settings{MaxEpochs: 3, GapTol: 1e-300, CheckpointEvery: 1}, context.Background(), nil)
			if err == nil || !strings.Contains(err.Error(), "held.bin") {
				t.Fatalf("got %v, want an error naming held.bin", err)
			}
		})
	}
}

// TestStreamFileAfterRun: when a run on many blocks with a working set
// ends, the file holds every sentence's final duals, held ones included:
// ŵ(μ) recomputed from the file reopened equals the model's weights.
func TestStreamFileAfterRun(t *testing.T) {
	p := randomProblem(t, 77, 300, 6, 15, 3, true, 0)
	path := filepath.Join(t.TempDir(), "duals.stream")
	o := duals.StreamOptions{BlockBytes: duals.Bytes(p.Data, duals.DefaultPrecision) / 9}
	s, err := duals.CreateStream(path, p.Data, o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := &SDCA{Sampler: kindSampler(t, SamplerGap, p), Seed: 5, Duals: s}
	res, err := Train(context.Background(), p, Settings{MaxEpochs: 4, GapTol: 1e-300, GapEvery: 1}, m)
	if err != nil {
		t.Fatal(err)
	}
	if s.HeldUsed() == 0 {
		t.Fatal("the run ended with no held sentence: nothing to check")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := duals.OpenStream(path, p.Data, o)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sameBits(t, "ŵ(μ) from the file vs the model's weights", mustWhat(t, p, r), res.Weights)
}

// TestStreamBlockRefreshCalls: with a working set, every block's gap
// estimates are made exact when it is read — one oracle call per sentence
// an epoch besides the steps' — and the run's counters say so; with one
// block nothing is refreshed.
func TestStreamBlockRefreshCalls(t *testing.T) {
	p := randomProblem(t, 78, 300, 6, 15, 3, true, 0)
	const epochs = 3
	for _, blocks := range []int64{9, 1} {
		res, s := streamRun(t, p, SamplerGap, duals.Bytes(p.Data, duals.DefaultPrecision)/blocks, epochs)
		want := int64(epochs) * int64(p.N())
		if s.Blocks() == 1 {
			want = 0
		}
		steps := int64(epochs) * int64(p.N())
		if got := res.Records[len(res.Records)-1].OracleCalls - steps; got != want {
			t.Fatalf("%d blocks: %d oracle calls besides the %d steps, want %d", s.Blocks(), got, steps, want)
		}
	}
}
