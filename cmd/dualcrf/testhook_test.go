package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// testHookEnv is the variable of the signal test hook (testhook.go),
// read only by a binary built with the dualcrf_testhook tag.
const testHookEnv = "DUALCRF_TEST_SIGNAL"

// hooked builds, once, the binary with the signal test hook.
var hooked struct {
	once sync.Once
	path string
	err  error
}

// hookedBin returns the path of the dualcrf binary built with the
// dualcrf_testhook tag, building it on first use.
func hookedBin(t *testing.T) string {
	t.Helper()
	hooked.once.Do(func() {
		path := filepath.Join(binDir, "dualcrf-testhook")
		out, err := exec.Command("go", "build", "-tags", "dualcrf_testhook", "-o", path, ".").CombinedOutput()
		if err != nil {
			hooked.err = fmt.Errorf("go build -tags dualcrf_testhook ./cmd/dualcrf: %v\n%s", err, out)
			return
		}
		hooked.path = path
	})
	if hooked.err != nil {
		t.Fatal(hooked.err)
	}
	return hooked.path
}

// withTestHook makes cmd, from command, a run of the hooked binary with
// the hook's variable set to spec.
func withTestHook(t *testing.T, cmd *exec.Cmd, spec string) {
	t.Helper()
	cmd.Path = hookedBin(t)
	cmd.Env = append(cmd.Env, testHookEnv+"="+spec)
}

// TestTestHookOffByDefault: the default binary ignores the hook's
// variable: the run is not interrupted and says nothing of a hook.
func TestTestHookOffByDefault(t *testing.T) {
	table := demoFeatures(t)
	dir := t.TempDir()
	cmd := command(dir, "train", "-q", "--max-epochs", "1", "-o", "m.arrow", table)
	cmd.Env = append(cmd.Env, testHookEnv+"=epoch:0:0:INT")
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), "hook") {
		t.Fatalf("default binary with %s set: %v\n%s", testHookEnv, err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "m.arrow")); err != nil {
		t.Fatalf("no model: %v", err)
	}
}
