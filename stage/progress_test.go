package stage_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/dualcrf/dualcrf/progress"
	"github.com/dualcrf/dualcrf/stage"
	"github.com/dualcrf/dualcrf/train"
)

// lockedBuffer is a buffer the reporter's goroutine may write to.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// TestProgressHooks: with Progress set, featurize, train (SDCA, whose
// steps are polled from another goroutine: run with -race) and decode
// each report a task from start to end, and the model is the one trained
// without progress.
func TestProgressHooks(t *testing.T) {
	ctx := context.Background()
	var buf lockedBuffer
	p := progress.New(&buf, progress.JSON, progress.Options{Interval: 1})
	src := stage.File("../cmd/dualcrf/testdata/train150.txt")
	tab, _, err := stage.FeaturizeTable(ctx, src, stage.FeaturizeOptions{Progress: p})
	if err != nil {
		t.Fatal(err)
	}
	o := stage.TrainOptions{MaxEpochs: 3, GapTol: 1e-9, Method: &train.SDCA{Seed: 1}}
	plain, err := stage.Train(ctx, tab, "train150", o)
	if err != nil {
		t.Fatal(err)
	}
	o.Progress = p
	res, err := stage.Train(ctx, tab, "train150", o)
	if err != nil {
		t.Fatal(err)
	}
	var pred bytes.Buffer
	if _, err := stage.Decode(ctx, res.Model, src, &pred, stage.DecodeOptions{Text: true, Progress: p}); err != nil {
		t.Fatal(err)
	}
	p.Close()
	for i, w := range plain.Model.Weights {
		if res.Model.Weights[i] != w {
			t.Fatalf("weight %d: %g with progress, %g without", i, res.Model.Weights[i], w)
		}
	}
	ends := map[string]progress.Event{}
	var phases []string                 // train's phases, in the order they started
	last := map[string]progress.Event{} // each phase's last event
	sc := bufio.NewScanner(strings.NewReader(buf.b.String()))
	for sc.Scan() {
		var e progress.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("%q: %v", sc.Text(), err)
		}
		if e.Event == "end" {
			ends[e.Task] = e
		}
		if e.Task != "train" || e.Event == "start" {
			continue
		}
		if e.Phase == "" {
			t.Errorf("train event without its phase: %q", sc.Text())
		}
		if e.Event == "phase" {
			phases = append(phases, e.Phase)
		}
		last[e.Phase] = e
		// SDCA's certificate: ŵ(μ) and a forward–backward pass, 150 sentences each.
		if strings.HasPrefix(e.Phase, "certify") && (e.Unit != "sentences" || e.Total != 300 || e.Done > 300 || (e.Event == "phase" && e.Done != 0)) {
			t.Errorf("certificate pass counted as %d/%d %s: %q", e.Done, e.Total, e.Unit, sc.Text())
		}
		if strings.HasPrefix(e.Phase, "epoch") && (e.Unit != "steps" || e.Total != 150) {
			t.Errorf("epoch counted as %d/%d %s", e.Done, e.Total, e.Unit)
		}
	}
	// MaxEpochs 3 and the default policy: the initial point and the last
	// epoch are certified.
	if got, want := strings.Join(phases, "|"), "init|certify epoch 0|epoch 1/3|epoch 2/3|epoch 3/3|certify epoch 3"; got != want {
		t.Errorf("train's phases %q, want %q", got, want)
	}
	if e := last["certify epoch 3"]; e.Done != 300 { // its last event is the end, after the pass
		t.Errorf("the last certificate counted %d of 300 sentences", e.Done)
	}
	if e := last["init"]; e.Total != 300 || e.Done > 300 {
		t.Errorf("init counted %d of %d sentences, want of μ⁰ and ŵ(μ⁰): 300", e.Done, e.Total)
	}
	if f := ends["featurize"]; f.Done == 0 || f.Done != f.Total {
		t.Errorf("featurize end %+v", f)
	}
	if tr := ends["train"]; tr.Total != 300 || tr.Done != 300 || !strings.Contains(tr.Note, " @3 → 1e-09") || !strings.Contains(tr.Note, "certs 2") {
		t.Errorf("train end %+v", tr)
	}
	if d := ends["decode"]; d.Done != 150 {
		t.Errorf("decode end %+v", d)
	}
}
