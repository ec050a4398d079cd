package main

// The feature combinations are a table, walked by a test: every solver
// (the log loss by SDCA, L-BFGS, OEG and SAG; the hinge loss) with its
// duals in memory, in a memory-mapped file or streamed, with checkpoints
// or without, keeping its duals, starting warm from kept ones or neither,
// by the default schedule (no flag: SDCA's rounds on every core) or with
// --workers 2; SDCA's duals at the default precision (float32)
// or float64, and the other solvers given --dual-precision; and the
// elastic net (--l1) with SDCA in every placement of its duals (float64
// and one worker; a precision or --workers 2 given refused), with
// checkpoints or without, keeping its duals or not, and with each other
// solver. Every
// cell either trains to a model — and with a checkpoint directory,
// stopped by SIGTERM halfway and resumed, to the uninterrupted run's
// bytes — or is refused before any work, naming the flags; none panics.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// comboCell is one cell of the table.
type comboCell struct {
	solver  string // sdca, lbfgs, oeg, sag, or hinge (--loss hinge)
	duals   string // memory (the default: no flag), file or stream
	ckpt    bool   // --checkpoint
	warm    string // keep (--keep-duals), warm (--warm-start) or ""
	workers int    // 1: the default (no flag; SDCA's rounds on every core), or 2 (--workers 2)
	prec    string // --dual-precision: "" (the default, float32) or float64
	l1      bool   // --l1 0.1/n
}

func (c comboCell) String() string {
	ck := "-"
	if c.ckpt {
		ck = "ckpt"
	}
	l1 := ""
	if c.l1 {
		l1 = " l1"
	}
	return fmt.Sprintf("%-5s %-6s %-4s %-4s w%d %-7s%s", c.solver, c.duals, ck, cmpOr(c.warm, "-"), c.workers, cmpOr(c.prec, "float32"), l1)
}

func cmpOr(s, t string) string {
	if s != "" {
		return s
	}
	return t
}

// comboFixtures are the tables the cells train on: a day's 70 sentences,
// kept duals trained on them, and the grown table of 100 sentences that
// the cells train on, with the memory budget that streams its duals in
// several blocks.
type comboFixtures struct {
	dir, table, kept string
	budget           map[budgetKey]string
}

// budgetKey is what a streamed cell's budget depends on: the number of
// workers, the precision of the duals ("" the default) and whether it
// trains the elastic net (float64 duals and one more weight vector).
type budgetKey struct {
	workers int
	prec    string
	l1      bool
}

// minStreamBlocks is the fewest blocks a streamed cell must stream its
// duals in: a block holds at least 1 MiB, and the grown table's duals
// are 3.4 MiB in float64, 1.7 MiB in float32 (the default).
func minStreamBlocks(prec string) int {
	if prec == "float64" {
		return 3
	}
	return 2
}

// termAfter is a context that a SIGTERM cancels at its at-th look (Err);
// it counts the looks (at < 0: it never cancels).
type termAfter struct {
	context.Context
	cancel context.CancelCauseFunc
	mu     sync.Mutex
	calls  int
	at     int
}

func newTermAfter(at int) *termAfter {
	ctx, cancel := context.WithCancelCause(context.Background())
	return &termAfter{Context: ctx, cancel: cancel, at: at}
}

func (c *termAfter) Err() error {
	c.mu.Lock()
	c.calls++
	if c.calls == c.at {
		c.cancel(&signalError{syscall.SIGTERM})
	}
	c.mu.Unlock()
	return c.Context.Err()
}

// runIn runs the command in process with the context ctx (no change of
// directory: every path is absolute).
func runIn(ctx context.Context, args ...string) result {
	var out, errb bytes.Buffer
	code := run(ctx, append([]string{"dualcrf"}, args...), strings.NewReader(""), &out, &errb)
	return result{args: args, stdout: out.Bytes(), stderr: errb.Bytes(), code: code}
}

var (
	comboOnce sync.Once
	comboFix  comboFixtures
	comboErr  error
)

// makeComboFixtures returns the fixtures, made on first use: the first
// 70 and 100 sentences of train150.txt featurized, the duals of the first
// table kept, and the memory budget at which the second one's duals
// stream in several blocks.
func makeComboFixtures(t *testing.T) comboFixtures {
	t.Helper()
	comboOnce.Do(func() { comboFix, comboErr = buildComboFixtures(filepath.Join(binDir, "combos")) })
	if comboErr != nil {
		t.Fatal(comboErr)
	}
	return comboFix
}

func buildComboFixtures(dir string) (comboFixtures, error) {
	var fx comboFixtures
	full, err := os.ReadFile("testdata/train150.txt")
	if err != nil {
		return fx, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fx, err
	}
	sents := strings.SplitAfter(strings.TrimSpace(string(full))+"\n", "\n\n")
	p := func(name string) string { return filepath.Join(dir, name) }
	must := func(args ...string) error {
		if r := runIn(context.Background(), args...); r.code != 0 {
			return fmt.Errorf("%v", r)
		}
		return nil
	}
	for _, c := range []struct {
		name string
		n    int
	}{{"day1", 70}, {"day2", 100}} {
		if err := os.WriteFile(p(c.name+".txt"), []byte(strings.Join(sents[:c.n], "")), 0o644); err != nil {
			return fx, err
		}
		if err := must("featurize", "--template", "chunking", "-o", p(c.name+".arrow"), p(c.name+".txt")); err != nil {
			return fx, err
		}
	}
	if err := must("train", "-q", "--max-epochs", "3", "--keep-duals", p("day1.duals"), "-o", p("day1.model"), p("day1.arrow")); err != nil {
		return fx, err
	}
	fx = comboFixtures{dir: dir, table: p("day2.arrow"), kept: p("day1.duals"), budget: map[budgetKey]string{}}
	// The budget of each number of workers and precision, and of the
	// elastic net: the first, from 36 MiB in steps of 512 KiB, at which a
	// run with checkpoints streams the duals in several blocks
	// (minStreamBlocks; a run that meets its target at the initial
	// certificate costs one pass).
	for _, workers := range []int{1, 2} {
		keys := []budgetKey{{workers, "", false}, {workers, "float64", false}}
		if workers == 1 {
			keys = append(keys, budgetKey{workers, "", true}) // the elastic net's one worker
		}
		for _, key := range keys {
			prec := key.prec
			if key.l1 {
				prec = "float64" // the elastic net's duals
			}
			found := ""
			for kib := 36 << 10; kib <= 72<<10 && found == ""; kib += 512 {
				budget := fmt.Sprintf("%dKiB", kib)
				args := []string{"train", "-q", "--duals", "stream", "--memory-budget", budget, "--checkpoint", p(fmt.Sprint("probe", workers, key.prec, key.l1)),
					"--gap-tol", "1e9", "-o", p("probe.model")}
				if workers == 2 { // as the cells give it (cellArgs): 1 is the default, no flag
					args = append(args, "--workers", "2")
				}
				if key.prec != "" {
					args = append(args, "--dual-precision", key.prec)
				}
				if key.l1 {
					args = append(args, "--l1", "0.1/n")
				}
				r := runIn(context.Background(), append(args, fx.table)...)
				if r.code == 0 && streamBlocks(r.stderr) >= minStreamBlocks(prec) {
					found = budget
				}
			}
			if found == "" {
				return fx, fmt.Errorf("no memory budget from 36 to 72 MiB streams the table's %s duals in %d blocks or more with %d workers (l1 %v)",
					cmpOr(prec, "float32"), minStreamBlocks(prec), workers, key.l1)
			}
			fx.budget[key] = found
		}
	}
	return fx, nil
}

// args returns the cell's command line, writing into dir.
func (c comboCell) args(fx comboFixtures, dir string) []string {
	a := []string{"train", "-q", "--max-epochs", "2", "--gap-tol", "1e-9", "-o", filepath.Join(dir, "model.arrow")}
	switch c.solver {
	case "hinge":
		a = append(a, "--loss", "hinge")
	case "sdca":
	default:
		a = append(a, "--solver", c.solver)
	}
	switch c.duals {
	case "file":
		a = append(a, "--duals", filepath.Join(dir, "duals.bin"))
	case "stream":
		a = append(a, "--duals", "stream", "--memory-budget", fx.budget[budgetKey{c.workers, c.prec, c.l1}])
	}
	if c.ckpt {
		a = append(a, "--checkpoint", filepath.Join(dir, "ck"))
	}
	switch c.warm {
	case "keep":
		a = append(a, "--keep-duals", filepath.Join(dir, "kept.duals"))
	case "warm":
		a = append(a, "--warm-start", fx.kept)
	}
	if c.workers == 2 {
		a = append(a, "--workers", "2")
	}
	if c.prec != "" {
		a = append(a, "--dual-precision", c.prec)
	}
	if c.l1 {
		a = append(a, "--l1", "0.1/n")
	}
	return append(a, fx.table)
}

// TestCombinations walks the table of feature combinations (the file's
// comment) and logs each cell: "runs", "runs; resumed after SIGTERM to
// the same bytes", or "refused: MESSAGE".
func TestCombinations(t *testing.T) {
	t0 := time.Now()
	fx := makeComboFixtures(t)
	setup := time.Since(t0)
	var cells []comboCell
	for _, solver := range []string{"sdca", "lbfgs", "oeg", "sag", "hinge"} {
		for _, duals := range []string{"memory", "file", "stream"} {
			for _, ckpt := range []bool{false, true} {
				for _, warm := range []string{"", "keep", "warm"} {
					for _, workers := range []int{1, 2} {
						cells = append(cells, comboCell{solver, duals, ckpt, warm, workers, "", false})
						if solver == "sdca" {
							cells = append(cells, comboCell{solver, duals, ckpt, warm, workers, "float64", false})
						}
					}
				}
			}
		}
	}
	// The other solvers keep no duals of SDCA's (BCFW's are float64): the
	// precision is refused.
	for _, solver := range []string{"lbfgs", "oeg", "sag", "hinge"} {
		cells = append(cells, comboCell{solver, "memory", false, "", 1, "float64", false})
	}
	// The elastic net: SDCA's placements, checkpoints, kept duals and
	// workers (a warm start from the fixture's ℓ2 duals would start
	// cold), its duals in float64, float32 given refused; and the other
	// solvers once each.
	for _, duals := range []string{"memory", "file", "stream"} {
		for _, ckpt := range []bool{false, true} {
			for _, warm := range []string{"", "keep"} {
				cells = append(cells, comboCell{"sdca", duals, ckpt, warm, 1, "", true})
			}
		}
	}
	cells = append(cells, comboCell{"sdca", "memory", false, "", 1, "float32", true}, comboCell{"sdca", "memory", false, "", 2, "", true})
	for _, solver := range []string{"lbfgs", "oeg", "sag", "hinge"} {
		cells = append(cells, comboCell{solver, "memory", false, "", 1, "", true})
	}
	// Four cells at a time (in process, each in directories of its own):
	// the runs wait on fsync as much as they compute.
	outcomes := make([]string, len(cells))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i, c := range cells {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			outcomes[i] = comboRun(t, fx, c)
		}()
	}
	wg.Wait()
	var table []string
	runs, refused := 0, 0
	for i, c := range cells {
		if strings.HasPrefix(outcomes[i], "refused") {
			refused++
		} else {
			runs++
		}
		table = append(table, fmt.Sprintf("%s  %s", c, strings.ReplaceAll(outcomes[i], fx.dir, "FIX")))
	}
	t.Logf("%d cells: %d run, %d refused; %v (fixtures %v), load %s\n%s", len(cells), runs, refused,
		time.Since(t0).Round(time.Millisecond), setup.Round(time.Millisecond), loadAverage(), strings.Join(table, "\n"))
}

// comboRun runs cell c and returns its outcome, failing the test where
// the cell breaks the table's rules.
func comboRun(t *testing.T, fx comboFixtures, c comboCell) string {
	t.Helper()
	fail := func(format string, args ...any) string {
		t.Errorf("%s: "+format, append([]any{c}, args...)...)
		return "FAILED"
	}
	dir := t.TempDir()
	args := c.args(fx, dir)
	count := newTermAfter(-1)
	r := runIn(count, args...)
	noPanic(t, r)
	switch r.code {
	case 0:
	case 1:
		if c.prec != "" && c.solver != "sdca" && !strings.Contains(string(r.stderr), "--dual-precision") {
			return fail("refused without naming --dual-precision: %v", r)
		}
		// Refused: before any work (nothing in the cell's directory,
		// nothing on standard output), naming a flag of the cell.
		msg := strings.TrimSpace(string(r.stderr))
		if i := strings.LastIndex(msg, "\n"); i >= 0 {
			msg = msg[i+1:]
		}
		named := false
		for _, a := range args {
			if strings.HasPrefix(a, "--") && strings.Contains(msg, a) {
				named = true
			}
		}
		if !strings.HasPrefix(msg, "dualcrf: --") || !named {
			return fail("refused without naming one of its flags: %v", r)
		}
		if left := dirEntries(t, dir); len(left) > 0 || len(r.stdout) > 0 {
			return fail("refused, but left %v (and %d bytes on standard output)", left, len(r.stdout))
		}
		return "refused: " + strings.ReplaceAll(strings.TrimPrefix(msg, "dualcrf: "), dir, "DIR")
	default:
		return fail("exit %d: %v", r.code, r)
	}
	if _, err := os.Stat(filepath.Join(dir, "model.arrow")); err != nil {
		return fail("exit 0 without a model: %v", err)
	}
	log := string(r.stderr)
	if c.prec != "" && c.solver != "sdca" {
		return fail("--dual-precision with --solver %s ran", c.solver)
	}
	if c.duals == "stream" && streamBlocks(r.stderr) < minStreamBlocks(c.prec) {
		return fail("streamed duals, but not in several blocks:\n%s", log)
	}
	if c.warm == "warm" && !strings.Contains(log, "train: warm start from "+fx.kept+": 70 sentences kept, 30 added") {
		return fail("no warm start from the kept duals:\n%s", log)
	}
	if c.warm == "keep" {
		if _, err := os.Stat(filepath.Join(dir, "kept.duals")); err != nil {
			return fail("no kept duals: %v", err)
		}
	}
	if !c.ckpt {
		return "runs"
	}
	// Stopped by SIGTERM halfway through its context's looks (inside an
	// epoch, a certificate or a snapshot), then resumed with the same
	// command and --resume: the uninterrupted run's bytes.
	dir2 := t.TempDir()
	args2 := c.args(fx, dir2)
	stop := runIn(newTermAfter(max(1, count.calls/2)), args2...)
	noPanic(t, stop)
	if stop.code != 143 || !strings.Contains(string(stop.stderr), "--resume "+filepath.Join(dir2, "ck")) {
		return fail("SIGTERM after %d of %d looks: want exit 143 and how to resume: %v", count.calls/2, count.calls, stop)
	}
	if _, err := os.Stat(filepath.Join(dir2, "model.arrow")); err == nil {
		return fail("the interrupted run wrote a model")
	}
	resumed := runIn(context.Background(), append(slices.Clone(args2[:len(args2)-1]), "--resume", filepath.Join(dir2, "ck"), fx.table)...)
	noPanic(t, resumed)
	if resumed.code != 0 {
		return fail("resume: %v", resumed)
	}
	for _, name := range []string{"model.arrow", "kept.duals"} {
		a, errA := os.ReadFile(filepath.Join(dir, name))
		b, errB := os.ReadFile(filepath.Join(dir2, name))
		if errA != nil && os.IsNotExist(errA) && name == "kept.duals" && c.warm != "keep" {
			continue
		}
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			return fail("%s of the resumed run differs from the uninterrupted run's (%v, %v)\nstopped: %s\nresumed: %s",
				name, errA, errB, stop.stderr, resumed.stderr)
		}
	}
	return fmt.Sprintf("runs; stopped by SIGTERM (%s), resumed to the same bytes", interruptedWhere(stop.stderr))
}

// streamBlocks is the number of blocks a train log says its duals are
// streamed in; 0 when it says none.
func streamBlocks(log []byte) int {
	m := regexp.MustCompile(`streamed from .* in ([0-9]+) blocks`).FindSubmatch(log)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// interruptedWhere is what an interrupted run's message says of where it
// was ("interrupted in epoch 2").
func interruptedWhere(stderr []byte) string {
	m := regexp.MustCompile(`interrupted (in epoch [0-9]+|during [^;]*)`).FindSubmatch(stderr)
	if m == nil {
		return "?"
	}
	return string(m[1])
}

// loadAverage is the system's load average (Linux), for the log.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// TestStreamBudgetMonotone: a larger memory budget is never refused where
// a smaller one streams the same table's duals (a budget between two that
// ran used to be refused: its plan took one block buffer fewer than it
// holds, so blocks too large for it).
func TestStreamBudgetMonotone(t *testing.T) {
	fx := makeComboFixtures(t)
	dir := t.TempDir()
	accepted := ""
	for kib := 40 << 10; kib <= 52<<10; kib += 1024 {
		budget := fmt.Sprintf("%dKiB", kib)
		r := runIn(context.Background(), "train", "-q", "--duals", "stream", "--memory-budget", budget, "--gap-tol", "1e9",
			"-o", filepath.Join(dir, "m.arrow"), fx.table)
		noPanic(t, r)
		switch {
		case r.code == 0:
			accepted = budget
		case accepted != "":
			t.Fatalf("--memory-budget %s ran, but %s is refused: %s", accepted, budget, r.stderr)
		}
	}
	if accepted == "" {
		t.Fatal("no budget from 40 to 52 MiB ran")
	}
}
