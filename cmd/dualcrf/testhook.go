//go:build dualcrf_testhook

// The signal test hook, built only with the dualcrf_testhook tag (as the
// end-to-end tests build their binary for the runs that use it): the
// default binary reads no such variable (testhook_off.go).

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/dualcrf/dualcrf/stage"
)

// hookEnv names a hidden test hook: "PHASE:EPOCH:CHECKS:SIG" makes train
// send itself SIG (INT, TERM, or KILL: a crash) when it enters PHASE (epoch, certificate,
// checkpoint write) of EPOCH — at once when CHECKS is 0, else at the
// CHECKS-th look at its context after that (every 256 SDCA steps, every
// chunk of a certificate pass) — and wait until the signal has cancelled
// the run, so that the interruption lands exactly there.
const hookEnv = "DUALCRF_TEST_SIGNAL"

// hookCtx raises the signal on the armed check of Err.
type hookCtx struct {
	context.Context
	mu     sync.Mutex
	armed  bool
	left   int
	sig    syscall.Signal
	raised bool
	log    io.Writer
}

// Err raises the signal when the countdown ends, then waits for it.
func (h *hookCtx) Err() error {
	h.mu.Lock()
	fire := false
	if h.armed && !h.raised {
		h.left--
		fire = h.left <= 0
	}
	h.mu.Unlock()
	if fire {
		h.raise()
	}
	return h.Context.Err()
}

// raise sends the signal once and waits (up to a minute) for the
// cancellation it causes.
func (h *hookCtx) raise() {
	h.mu.Lock()
	if h.raised {
		h.mu.Unlock()
		return
	}
	h.raised = true
	h.mu.Unlock()
	if err := signalSelf(h.sig); err != nil {
		fmt.Fprintf(h.log, "train: warning: test hook: %v\n", err)
		return
	}
	select {
	case <-h.Context.Done():
	case <-time.After(time.Minute):
	}
}

// installTestHook returns the stage's context, wrapped, with o.Phase set,
// when the hook's variable is set.
func installTestHook(c *cli.Context, o *stage.TrainOptions) context.Context {
	ctx, stderr := c.Context, c.App.ErrWriter
	spec := os.Getenv(hookEnv)
	if spec == "" {
		return ctx
	}
	parts := strings.Split(spec, ":")
	if len(parts) != 4 {
		fmt.Fprintf(stderr, "train: warning: %s=%q ignored (want PHASE:EPOCH:CHECKS:INT|TERM|KILL)\n", hookEnv, spec)
		return ctx
	}
	epoch, err1 := strconv.Atoi(parts[1])
	checks, err2 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil {
		fmt.Fprintf(stderr, "train: warning: %s=%q ignored\n", hookEnv, spec)
		return ctx
	}
	h := &hookCtx{Context: ctx, sig: syscall.SIGINT, log: stderr}
	switch parts[3] {
	case "TERM":
		h.sig = syscall.SIGTERM
	case "KILL":
		h.sig = syscall.SIGKILL
	}
	o.Phase = func(phase string, ep int) {
		if phase != parts[0] || ep != epoch {
			return
		}
		fmt.Fprintf(stderr, "train: test hook: SIG%s in %s of epoch %d after %d checks\n", parts[3], phase, ep, checks)
		if checks == 0 {
			h.raise()
			return
		}
		h.mu.Lock()
		h.armed, h.left = true, checks
		h.mu.Unlock()
	}
	return h
}

// signalSelf sends sig to this process (on Windows it fails: a process
// cannot send itself SIGINT or SIGTERM there).
func signalSelf(sig syscall.Signal) error {
	p, err := os.FindProcess(os.Getpid())
	if err != nil {
		return err
	}
	return p.Signal(sig)
}
