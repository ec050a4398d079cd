// Package progress shows how far a stage has come: bars with a rate and an
// ETA on a terminal, one JSON object per event for schedulers, or nothing.
//
// The work being measured never calls into this package on its hot path:
// a Task's count is an atomic counter, or a function the display polls,
// and a Reporter redraws on its own clock (at most Rate times a second), so
// a display costs the same whether it is on or off.
package progress

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dualcrf/dualcrf/internal/platform"
)

// Mode is how progress is shown.
type Mode string

// The modes of --progress.
const (
	None Mode = "none" // no display (messages and per-epoch lines as usual)
	Auto Mode = "auto" // Bar when standard error is a terminal, else None
	Bar  Mode = "bar"  // a bar with rate and ETA, redrawn in place
	JSON Mode = "json" // one JSON object per event line; messages become "log" events
)

// DefaultMode is --progress's default.
const DefaultMode = Auto

// Modes lists the modes, for help texts.
func Modes() []string { return []string{string(None), string(Auto), string(Bar), string(JSON)} }

// ParseMode reads a mode name.
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes() {
		if s == m {
			return Mode(s), nil
		}
	}
	return "", fmt.Errorf("progress mode %q: want one of %s", s, strings.Join(Modes(), ", "))
}

// Resolve turns Auto into Bar or None by whether the display is a
// terminal.
func (m Mode) Resolve(terminal bool) Mode {
	if m != Auto {
		return m
	}
	if terminal {
		return Bar
	}
	return None
}

// DefaultInterval is the shortest time between two redraws of a bar (ten
// a second); JSON progress events come at most once a second per task.
const (
	DefaultInterval = 100 * time.Millisecond
	JSONInterval    = time.Second
)

// Options configure a Reporter.
type Options struct {
	// Width is the terminal's width in columns; 0: 80.
	Width int
	// Interval is the shortest time between two redraws; 0:
	// DefaultInterval for bars, JSONInterval for JSON.
	Interval time.Duration
	// Now is the clock; nil: time.Now.
	Now func() time.Time
}

// Reporter draws the tasks of one process on w (standard error). A nil
// *Reporter is valid and shows nothing, so stages take one unconditionally.
type Reporter struct {
	mode  Mode
	w     io.Writer
	o     Options
	mu    sync.Mutex // guards everything below and writes to w
	tasks []*Task    // the tasks running, the latest (the one drawn) last
	drawn bool       // a bar is on the terminal's last line
	seq   int64
	stop  chan struct{}
	done  chan struct{}
	start time.Time
}

// New returns a Reporter in mode (Bar or JSON; Auto must be resolved
// first) writing to w, or nil for None.
func New(w io.Writer, mode Mode, o Options) *Reporter {
	if mode != Bar && mode != JSON {
		return nil
	}
	if o.Width <= 0 {
		o.Width = 80
	}
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
		if mode == JSON {
			o.Interval = JSONInterval
		}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	r := &Reporter{mode: mode, w: w, o: o, stop: make(chan struct{}), done: make(chan struct{})}
	r.start = o.Now()
	go r.loop()
	return r
}

// Mode returns the reporter's mode; None for a nil reporter.
func (r *Reporter) Mode() Mode {
	if r == nil {
		return None
	}
	return r.mode
}

// loop redraws every interval until Close.
func (r *Reporter) loop() {
	defer close(r.done)
	t := time.NewTicker(r.o.Interval)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			r.mu.Lock()
			if t := r.top(); t != nil {
				r.draw(t, "progress")
			}
			r.mu.Unlock()
		}
	}
}

// Close stops the redraws and clears the bar. It returns nil (an
// io.Closer).
func (r *Reporter) Close() error {
	if r == nil {
		return nil
	}
	close(r.stop)
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clear()
	return nil
}

// Task is one measured piece of work: a count done out of a total, in a
// unit, with a note (e.g. the certified gap). Its methods are safe from any
// goroutine; a nil *Task ignores them.
type Task struct {
	r     *Reporter
	name  string
	unit  string // guarded by r.mu
	phase string // guarded by r.mu; "" when the task has no phases
	done  atomic.Int64
	total atomic.Int64
	poll  func() int64 // when set, the count, polled at each redraw
	note  atomic.Pointer[string]
	start time.Time
	ended bool // guarded by r.mu
}

// Start begins a task named name counting unit ("bytes" is shown in
// binary multiples) out of total (0: unknown), and draws it.
func (r *Reporter) Start(name, unit string, total int64) *Task {
	if r == nil {
		return nil
	}
	t := &Task{r: r, name: name, unit: unit, start: r.o.Now()}
	t.total.Store(total)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tasks = append(r.tasks, t)
	r.draw(t, "start")
	return t
}

// top returns the task drawn (the latest started), or nil; r.mu is held.
func (r *Reporter) top() *Task {
	if len(r.tasks) == 0 {
		return nil
	}
	return r.tasks[len(r.tasks)-1]
}

// prefix is what the tasks under t show before t's bar: "run 2/5 │ ";
// r.mu is held.
func (r *Reporter) prefix(t *Task) string {
	s := ""
	for _, u := range r.tasks {
		if u == t {
			break
		}
		name := u.name
		if u.phase != "" {
			name += " " + u.phase
		}
		s += fmt.Sprintf("%s %d/%d │ ", name, u.count(), u.total.Load())
	}
	return s
}

// Add counts n more units done.
func (t *Task) Add(n int64) {
	if t != nil {
		t.done.Add(n)
	}
}

// Set sets the count done.
func (t *Task) Set(n int64) {
	if t != nil {
		t.done.Store(n)
	}
}

// SetTotal sets the total (0: unknown).
func (t *Task) SetTotal(n int64) {
	if t != nil {
		t.total.Store(n)
	}
}

// Poll makes the display read the count from f at each redraw instead of
// from Add and Set: f must be safe to call from another goroutine.
func (t *Task) Poll(f func() int64) {
	if t == nil {
		return
	}
	t.r.mu.Lock()
	t.poll = f
	t.r.mu.Unlock()
}

// Restart resets the count and the clock (a new epoch) with a new note.
func (t *Task) Restart(note string) {
	if t == nil {
		return
	}
	t.r.mu.Lock()
	defer t.r.mu.Unlock()
	t.done.Store(0)
	t.start = t.r.o.Now()
	t.note.Store(&note)
	t.r.draw(t, "restart")
}

// Phase starts a phase of the task (e.g. "init", "certify epoch 12"):
// the count restarts from 0 out of total (0: unknown) in unit, read from
// poll at each redraw when poll is not nil; the clock restarts; the bar
// shows the phase after the task's name, and every JSON event carries it
// (a "phase" event marks the start).
func (t *Task) Phase(phase, unit string, total int64, poll func() int64) {
	if t == nil {
		return
	}
	t.r.mu.Lock()
	defer t.r.mu.Unlock()
	t.phase, t.unit, t.poll = phase, unit, poll
	t.done.Store(0)
	t.total.Store(total)
	t.start = t.r.o.Now()
	t.r.draw(t, "phase")
}

// Note sets the text shown after the counts (and in JSON events).
func (t *Task) Note(s string) {
	if t != nil {
		t.note.Store(&s)
	}
}

// End finishes the task: its last state is drawn once more (as an "end"
// event in JSON) and the bar is cleared.
func (t *Task) End() {
	if t == nil {
		return
	}
	r := t.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if t.ended {
		return
	}
	t.ended = true
	r.draw(t, "end")
	r.clear()
	for i, u := range r.tasks {
		if u == t {
			r.tasks = append(r.tasks[:i], r.tasks[i+1:]...)
			break
		}
	}
	if u := r.top(); u != nil {
		r.draw(u, "")
	}
}

// count returns the count done; r.mu is held.
func (t *Task) count() int64 {
	if t.poll != nil {
		return t.poll()
	}
	return t.done.Load()
}

// noteText returns the note.
func (t *Task) noteText() string {
	if p := t.note.Load(); p != nil {
		return *p
	}
	return ""
}

// Writer returns a writer for messages (whole lines): on a terminal the
// bar is lifted, the lines written, and the bar drawn again below them;
// in JSON each line becomes a "log" event. A nil reporter returns w.
func (r *Reporter) Writer(w io.Writer) io.Writer {
	if r == nil {
		return w
	}
	return &lineWriter{r: r}
}

// lineWriter passes messages through the reporter.
type lineWriter struct {
	r   *Reporter
	buf []byte
}

// Write writes the complete lines of p (a partial line waits for its end).
func (lw *lineWriter) Write(p []byte) (int, error) {
	r := lw.r
	r.mu.Lock()
	defer r.mu.Unlock()
	lw.buf = append(lw.buf, p...)
	for {
		i := strings.IndexByte(string(lw.buf), '\n')
		if i < 0 {
			break
		}
		line := string(lw.buf[:i])
		lw.buf = lw.buf[i+1:]
		if r.mode == JSON {
			r.logLine(line)
			continue
		}
		r.clear()
		fmt.Fprintln(r.w, line)
		if t := r.top(); t != nil {
			r.draw(t, "")
		}
	}
	return len(p), nil
}

// Event is one JSON progress line.
type Event struct {
	Seq     int64   `json:"seq"`
	Time    float64 `json:"t"` // seconds since the reporter started
	Event   string  `json:"event"`
	Task    string  `json:"task,omitempty"`
	Phase   string  `json:"phase,omitempty"` // the task's phase (Task.Phase), when it has phases
	Unit    string  `json:"unit,omitempty"`
	Done    int64   `json:"done"`
	Total   int64   `json:"total,omitempty"`
	Rate    float64 `json:"rate,omitempty"`  // units per second since the task (re)started
	ETA     float64 `json:"eta_s,omitempty"` // seconds left at that rate; absent when unknown
	Elapsed float64 `json:"elapsed_s"`
	Note    string  `json:"note,omitempty"`
	Msg     string  `json:"msg,omitempty"`
}

// draw shows t's state: a bar on the terminal, or an event of kind in
// JSON (kind "" draws only on a terminal); r.mu is held.
func (r *Reporter) draw(t *Task, kind string) {
	now := r.o.Now()
	done, total := t.count(), t.total.Load()
	el := now.Sub(t.start).Seconds()
	rate, eta := 0.0, -1.0
	if el > 0 {
		rate = float64(done) / el
	}
	if rate > 0 && total > 0 && done <= total {
		eta = float64(total-done) / rate
	}
	if r.mode == JSON {
		if kind == "" {
			return
		}
		e := Event{Event: kind, Task: t.name, Phase: t.phase, Unit: t.unit, Done: done, Total: total, Rate: rate, Elapsed: el, Note: t.noteText()}
		if eta >= 0 {
			e.ETA = eta
		}
		r.emit(e)
		return
	}
	name := t.name
	if t.phase != "" {
		name += " " + t.phase
	}
	line := RenderBar(r.o.Width, r.prefix(t)+name, t.unit, done, total, rate, eta, el, t.noteText())
	fmt.Fprint(r.w, "\r"+line+"\x1b[K")
	r.drawn = true
}

// logEvent is a message as a JSON event.
type logEvent struct {
	Seq     int64   `json:"seq"`
	Time    float64 `json:"t"`
	Event   string  `json:"event"` // "log"
	Msg     string  `json:"msg"`
	Elapsed float64 `json:"elapsed_s"`
}

// logLine writes a message as a "log" event; r.mu is held.
func (r *Reporter) logLine(msg string) {
	r.seq++
	t := r.o.Now().Sub(r.start).Seconds()
	r.write(logEvent{Seq: r.seq, Time: t, Event: "log", Msg: msg, Elapsed: t})
}

// emit numbers and writes one task event; r.mu is held.
func (r *Reporter) emit(e Event) {
	r.seq++
	e.Seq = r.seq
	e.Time = r.o.Now().Sub(r.start).Seconds()
	r.write(e)
}

// write writes v as one JSON line, '<' and '>' as they are; r.mu is held.
func (r *Reporter) write(v any) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return // every field is JSON-safe; rates are finite
	}
	io.WriteString(r.w, b.String())
}

// clear erases the bar, leaving the cursor at the start of its line; r.mu
// is held.
func (r *Reporter) clear() {
	if r.drawn {
		fmt.Fprint(r.w, "\r\x1b[K")
		r.drawn = false
	}
}

// RenderBar lays out one bar line at most width columns wide:
//
//	train  ███████░░░░░░  61%  5.3k/8.9k steps  12.1k steps/s  ETA 0:03  gap 2.1e-3 → 1e-3
//
// The bar takes what the text leaves (at least 10 columns, else none); an
// unknown total (0) shows the count and rate only; no unit ("": nothing
// counted) the elapsed time only.
func RenderBar(width int, name, unit string, done, total int64, rate, eta, elapsed float64, note string) string {
	if unit == "" { // nothing counted: the time it has taken
		s := name + "  " + clock(elapsed)
		if note != "" {
			s += "  " + note
		}
		return truncate(s, width)
	}
	counts := amount(done, unit)
	if total > 0 {
		counts = amount(done, unit) + "/" + amount(total, unit)
	}
	right := fmt.Sprintf("  %s  %s/s", counts, amount(int64(rate), unit))
	if unit != "bytes" {
		right = fmt.Sprintf("  %s %s  %s %s/s", counts, unit, amount(int64(rate), unit), unit)
	}
	if eta >= 0 {
		right += "  ETA " + clock(eta)
	} else {
		right += "  " + clock(elapsed)
	}
	left := name
	if total > 0 {
		pct := min(100*float64(done)/float64(total), 100)
		right = fmt.Sprintf(" %3.0f%%", pct) + right
		if note != "" { // the note gives way to a bar of 10 columns
			room := width - runeLen(left) - runeLen(right) - 1 - 10 - 2
			if room < runeLen(note) && room >= 8 {
				note = string([]rune(note)[:room-1]) + "…"
			}
		}
	}
	if note != "" {
		right += "  " + note
	}
	if total > 0 {
		if barW := width - runeLen(left) - runeLen(right) - 1; barW >= 10 {
			fill := int(float64(barW) * min(float64(done)/float64(total), 1))
			left += " " + strings.Repeat("█", fill) + strings.Repeat("░", barW-fill)
		}
	}
	return truncate(left+right, width)
}

// amount writes n compactly: binary multiples for bytes, k/M/G otherwise.
func amount(n int64, unit string) string {
	if unit == "bytes" {
		const k = 1024
		switch {
		case n >= k*k*k:
			return fmt.Sprintf("%.1fGiB", float64(n)/(k*k*k))
		case n >= k*k:
			return fmt.Sprintf("%.1fMiB", float64(n)/(k*k))
		case n >= k:
			return fmt.Sprintf("%.1fKiB", float64(n)/k)
		}
		return fmt.Sprintf("%dB", n)
	}
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1fG", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1e4:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// clock writes seconds as m:ss or h:mm:ss.
func clock(s float64) string {
	n := int64(s + 0.5)
	if n >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", n/3600, n/60%60, n%60)
	}
	return fmt.Sprintf("%d:%02d", n/60, n%60)
}

// runeLen is the number of runes (columns, for the text drawn) of s.
func runeLen(s string) int { return len([]rune(s)) }

// truncate cuts s to width runes.
func truncate(s string, width int) string {
	r := []rune(s)
	if len(r) > width {
		return string(r[:width])
	}
	return s
}

// ForStderr returns the reporter that mode (Auto resolved by whether
// stderr is a terminal) asks for on stderr, or nil.
func ForStderr(stderr io.Writer, mode Mode) *Reporter {
	tty, width := terminal(stderr)
	return New(stderr, mode.Resolve(tty), Options{Width: width})
}

// terminal reports whether w is a terminal that can show a bar and, if so,
// its width in columns (0 when the terminal does not say).
func terminal(w io.Writer) (bool, int) {
	f, ok := w.(*os.File)
	if !ok {
		return false, 0
	}
	return platform.ANSITerminal(f)
}
