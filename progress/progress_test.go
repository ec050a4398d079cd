package progress

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the reporter's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestJSONEvents: every line of JSON mode is an event that parses, the
// sequence numbers and times increase, a task's events go start →
// progress… → end, and messages become log events in their place.
func TestJSONEvents(t *testing.T) {
	var buf syncBuffer
	r := New(&buf, JSON, Options{Interval: time.Millisecond})
	task := r.Start("train", "steps", 1000)
	log := r.Writer(nil)
	for i := 0; i < 10; i++ {
		task.Add(100)
		time.Sleep(2 * time.Millisecond)
	}
	log.Write([]byte("epoch   1  0.100s\npartial"))
	log.Write([]byte(" line\n"))
	task.Note("gap 1e-2 → 1e-3")
	task.End()
	r.Close()

	var events []Event
	sc := bufio.NewScanner(strings.NewReader(buf.String()))
	for sc.Scan() {
		var e Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		events = append(events, e)
	}
	if len(events) < 4 {
		t.Fatalf("%d events: %s", len(events), buf.String())
	}
	var logs []string
	for i, e := range events {
		if e.Seq != int64(i+1) || (i > 0 && e.Time < events[i-1].Time) {
			t.Errorf("event %d out of order: %+v", i, e)
		}
		if e.Event == "log" {
			logs = append(logs, e.Msg)
		}
	}
	if first, last := events[0], events[len(events)-1]; first.Event != "start" || last.Event != "end" || last.Done != 1000 || last.Total != 1000 || last.Note == "" {
		t.Errorf("first %+v, last %+v", first, last)
	}
	if strings.Join(logs, "|") != "epoch   1  0.100s|partial line" {
		t.Errorf("log events %q", logs)
	}
}

// TestRenderBar: the bar fills the width the text leaves, counts and
// rates are compact, and a narrow terminal gets no bar and a cut line.
func TestRenderBar(t *testing.T) {
	got := RenderBar(80, "train", "steps", 500, 1000, 250, 2, 2, "gap 2e-3 → 1e-3")
	if n := runeLen(got); n != 80 {
		t.Errorf("width %d, want 80: %q", n, got)
	}
	for _, want := range []string{"train █", "░", " 50%", "500/1000 steps", "250 steps/s", "ETA 0:02", "gap 2e-3 → 1e-3"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	if full, empty := strings.Count(got, "█"), strings.Count(got, "░"); full-empty > 1 || empty-full > 1 {
		t.Errorf("half done: %d full, %d empty cells", full, empty)
	}
	narrow := RenderBar(30, "featurize", "bytes", 3<<20, 6<<20, 1<<20, 3, 3, "")
	if runeLen(narrow) > 30 || strings.Contains(narrow, "█") || !strings.HasPrefix(narrow, "featurize  50%  3.0MiB/6.0MiB") {
		t.Errorf("narrow: %q", narrow)
	}
	unknown := RenderBar(80, "decode", "sentences", 12345, 0, 6000, -1, 2.1, "")
	if strings.Contains(unknown, "%") || !strings.Contains(unknown, "12.3k sentences") || !strings.Contains(unknown, "0:02") {
		t.Errorf("unknown total: %q", unknown)
	}
}

// TestBarRedraws: on a terminal the bar is redrawn in place (\r, erase to
// the end of line), messages go above it, and it is cleared at the end.
func TestBarRedraws(t *testing.T) {
	var buf syncBuffer
	r := New(&buf, Bar, Options{Width: 60, Interval: time.Millisecond})
	task := r.Start("decode", "sentences", 10)
	task.Set(5)
	time.Sleep(5 * time.Millisecond)
	r.Writer(nil).Write([]byte("decode: warning: something\n"))
	task.End()
	r.Close()
	out := buf.String()
	if !strings.Contains(out, "\r\x1b[Kdecode: warning: something\n") {
		t.Errorf("message not written over a cleared bar: %q", out)
	}
	if !strings.HasSuffix(out, "\r\x1b[K") {
		t.Errorf("bar not cleared at the end: %q", out)
	}
	if strings.Count(out, "\r") < 3 {
		t.Errorf("no redraws: %q", out)
	}
}

// TestModes: the flag's values parse, Auto resolves by the terminal, and
// None gives a nil reporter whose tasks do nothing.
func TestModes(t *testing.T) {
	for _, s := range Modes() {
		if _, err := ParseMode(s); err != nil {
			t.Error(err)
		}
	}
	if _, err := ParseMode("bars"); err == nil || !strings.Contains(err.Error(), "progress mode \"bars\": want one of none, auto, bar, json") {
		t.Errorf("bad mode: %v", err)
	}
	if Auto.Resolve(true) != Bar || Auto.Resolve(false) != None || JSON.Resolve(false) != JSON {
		t.Error("Resolve")
	}
	var r *Reporter
	if New(nil, None, Options{}) != nil || r.Mode() != None {
		t.Error("None reporter")
	}
	task := r.Start("x", "steps", 1)
	task.Add(1)
	task.End()
	if err := r.Close(); err != nil || r.Writer(nil) != nil {
		t.Error("nil reporter")
	}
}

// TestRenderBarLongNote: a note too long for the line is cut (with an
// ellipsis) so that the bar keeps 10 columns.
func TestRenderBarLongNote(t *testing.T) {
	note := "epoch 3/100  gap 73.2 → 0.001 (est 0.361)  certs 1  checkpoint…"
	got := RenderBar(90, "run 2/5 │ train", "steps", 8936, 8936, 1202, 0, 7, note)
	if runeLen(got) > 90 || strings.Count(got, "█") != 10 || !strings.HasSuffix(got, "…") || !strings.Contains(got, "epoch 3/100") {
		t.Errorf("%q", got)
	}
}

// TestTaskPhases: a phase restarts the count out of its own total and
// unit, read from its poll function; every JSON event names the phase; the
// bar shows it after the task's name; a phase that counts nothing shows
// its time only.
func TestTaskPhases(t *testing.T) {
	var buf syncBuffer
	r := New(&buf, JSON, Options{Interval: time.Hour}) // events only at phase changes and the end
	task := r.Start("train", "steps", 100)
	task.Set(100)
	var passed int64 = 40
	task.Phase("certify epoch 12", "sentences", 80, func() int64 { return passed })
	task.Phase("checkpoint epoch 12", "", 0, nil)
	task.Phase("epoch 13/20", "steps", 100, nil)
	task.Add(7)
	task.End()
	r.Close()
	var events []Event
	sc := bufio.NewScanner(strings.NewReader(buf.String()))
	for sc.Scan() {
		var e Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		events = append(events, e)
	}
	want := []Event{
		{Event: "start", Task: "train", Unit: "steps", Done: 0, Total: 100},
		{Event: "phase", Task: "train", Phase: "certify epoch 12", Unit: "sentences", Done: 40, Total: 80},
		{Event: "phase", Task: "train", Phase: "checkpoint epoch 12"},
		{Event: "phase", Task: "train", Phase: "epoch 13/20", Unit: "steps", Done: 0, Total: 100},
		{Event: "end", Task: "train", Phase: "epoch 13/20", Unit: "steps", Done: 7, Total: 100},
	}
	if len(events) != len(want) {
		t.Fatalf("%d events, want %d:\n%s", len(events), len(want), buf.String())
	}
	for i, e := range events {
		w := want[i]
		if e.Event != w.Event || e.Phase != w.Phase || e.Unit != w.Unit || e.Done != w.Done || e.Total != w.Total {
			t.Errorf("event %d: %+v, want %+v", i, e, w)
		}
	}

	var bar syncBuffer
	rb := New(&bar, Bar, Options{Width: 160, Interval: time.Hour}) // wide: the rate's digits vary with the clock
	tb := rb.Start("train", "steps", 100)
	tb.Note("gap 2.1e-3 @12 → 1e-3")
	tb.Phase("certify epoch 12", "sentences", 80, func() int64 { return 48 })
	if out := bar.String(); !strings.Contains(out, "train certify epoch 12 █") || !strings.Contains(out, " 60%  48/80 sentences") || !strings.Contains(out, "gap 2.1e-3 @12") {
		t.Errorf("certificate bar %q", out)
	}
	tb.Phase("checkpoint epoch 12", "", 0, nil)
	tb.End()
	rb.Close()
	if got := RenderBar(80, "train checkpoint epoch 12", "", 0, 0, 0, -1, 65, "gap 2.1e-3 @12"); got != "train checkpoint epoch 12  1:05  gap 2.1e-3 @12" {
		t.Errorf("uncounted phase: %q", got)
	}
}
