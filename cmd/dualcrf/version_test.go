package main

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// TestVersion checks `dualcrf --version`: one line on standard output
// naming the module version and the Go version of the build.
func TestVersion(t *testing.T) {
	for _, flag := range []string{"--version", "-v"} {
		r := mustRun(t, t.TempDir(), flag)
		out := string(r.stdout)
		if !strings.HasPrefix(out, "dualcrf version ") || !strings.HasSuffix(out, ", "+runtime.Version()+"\n") ||
			strings.Count(out, "\n") != 1 || len(r.stderr) != 0 {
			t.Errorf("dualcrf %s: stdout %q, stderr %q", flag, out, r.stderr)
		}
	}
}

// TestFormatVersion checks what --version says with and without the
// version-control settings a build may record.
func TestFormatVersion(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}
	if got, want := formatVersion(bi), "(devel), go1.26.8"; got != want {
		t.Errorf("no VCS settings: %q, want %q", got, want)
	}
	bi.Main.Version = "v1.2.3"
	bi.Settings = []debug.BuildSetting{{Key: "-compiler", Value: "gc"}, {Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "9b31a5db69c9d76a98080f9ba54716f8f799a32e"},
		{Key: "vcs.time", Value: "2026-11-22T16:12:32Z"}, {Key: "vcs.modified", Value: "true"}}
	want := "v1.2.3, revision 9b31a5db69c9d76a98080f9ba54716f8f799a32e of 2026-11-22T16:12:32Z with uncommitted changes, go1.26.8"
	if got := formatVersion(bi); got != want {
		t.Errorf("with VCS settings: %q, want %q", got, want)
	}
}
