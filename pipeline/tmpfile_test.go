package pipeline

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/internal/platform"
)

// TestHelperWriter is not a test: run by startWriter in a child process,
// it begins an output and waits to be killed with it half written.
func TestHelperWriter(t *testing.T) {
	mode, path := os.Getenv("DUALCRF_TEST_WRITER"), os.Getenv("DUALCRF_TEST_PATH")
	if mode == "" {
		return // run as a test: nothing to do
	}
	out, err := createOutput(path, os.Stdout, mode != "named")
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Fprint(out, strings.Repeat("partial ", 1<<18)) // more than the buffer
	if err := out.buf.Flush(); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	if mode == "window" {
		// Stop where a kill is the worst: named, not yet renamed.
		dir, base := filepath.Split(path)
		if err := platform.LinkUnnamed(out.tmp, filepath.Join(dir, tempPrefix(base)+"window")); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin) // until killed
	runtime.KeepAlive(out)               // its file (and lock) must outlive the wait
	os.Exit(0)
}

// startWriter starts TestHelperWriter in mode for path and waits until it
// is ready to be killed.
func startWriter(t *testing.T, mode, path string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriter$")
	cmd.Env = append(os.Environ(), "DUALCRF_TEST_WRITER="+mode, "DUALCRF_TEST_PATH="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close() })
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "ready\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper writer (%s): %q, %v", mode, line, err)
	}
	return cmd
}

// kill9 kills the helper with SIGKILL and reaps it.
func kill9(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
}

func sorted(names []string) []string {
	sort.Strings(names)
	return names
}

// TestKilledWriterLeavesNothing: a writer killed with SIGKILL in the middle
// of its output leaves nothing behind once the same output is created again
// (formerly every kill left a ".NAME.tmp-*" file that nothing removed).
// Where unnamed files exist, it leaves nothing even before that.
func TestKilledWriterLeavesNothing(t *testing.T) {
	for _, mode := range []string{"unnamed", "named", "window"} {
		t.Run(mode, func(t *testing.T) {
			if mode != "named" && runtime.GOOS != "linux" {
				t.Skip("unnamed temporary files are Linux's")
			}
			dir := t.TempDir()
			path := filepath.Join(dir, "out.arrow")
			other := filepath.Join(dir, "other.arrow")
			cmd := startWriter(t, mode, path)
			live := dirEntries(t, dir)
			switch mode {
			case "unnamed":
				if len(live) != 0 {
					t.Fatalf("while writing, the directory holds %v; want nothing", live)
				}
			default:
				if len(live) != 1 || !strings.HasPrefix(live[0], ".out.arrow.tmp-") {
					t.Fatalf("while writing, the directory holds %v", live)
				}
				// A live writer's file survives another run's cleanup.
				out, err := CreateOutput(path)
				if err != nil {
					t.Fatal(err)
				}
				out.Abort()
				if got := dirEntries(t, dir); !reflect.DeepEqual(got, live) {
					t.Fatalf("cleanup while the writer lives: %v, want %v", got, live)
				}
			}
			kill9(t, cmd)
			// Another output's cleanup leaves this output's files alone.
			out, err := CreateOutput(other)
			if err != nil {
				t.Fatal(err)
			}
			out.Abort()
			if got := dirEntries(t, dir); !reflect.DeepEqual(got, live) {
				t.Fatalf("after the kill: %v, want %v", got, live)
			}
			// Running the same command again cleans up.
			out, err = CreateOutput(path)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprint(out, "whole")
			if err := out.Commit(); err != nil {
				t.Fatal(err)
			}
			if got := dirEntries(t, dir); !reflect.DeepEqual(got, []string{"out.arrow"}) {
				t.Fatalf("after the re-run the directory holds %v, want [out.arrow]", got)
			}
		})
	}
}

// TestStaleTempRule: only unlocked regular ".NAME.tmp-*" files of the
// output being created are removed.
func TestStaleTempRule(t *testing.T) {
	dir := t.TempDir()
	write := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write(".m.arrow.tmp-123")                                                       // a killed writer's: removed
	held := write(".m.arrow.tmp-456")                                               // locked: a live writer's
	write(".m.arrow.tmp")                                                           // not a temporary name
	write(".m.arrowx.tmp-1")                                                        // another output's
	write("m.arrow.tmp-1")                                                          // not hidden: not ours
	if err := os.Mkdir(filepath.Join(dir, ".m.arrow.tmp-dir"), 0o755); err != nil { // not a file
		t.Fatal(err)
	}
	if err := os.Symlink(held, filepath.Join(dir, ".m.arrow.tmp-link")); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(held)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if ok, err := lockFile(f); !ok || err != nil {
		t.Fatalf("lock: %v %v", ok, err)
	}
	out, err := CreateOutput(filepath.Join(dir, "m.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	if err := out.Commit(); err != nil {
		t.Fatal(err)
	}
	want := []string{".m.arrow.tmp", ".m.arrow.tmp-456", ".m.arrow.tmp-dir", ".m.arrow.tmp-link", ".m.arrowx.tmp-1", "m.arrow", "m.arrow.tmp-1"}
	if got := sorted(dirEntries(t, dir)); !reflect.DeepEqual(got, want) {
		t.Fatalf("directory holds\n %v\nwant\n %v", got, want)
	}
}
