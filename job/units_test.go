package job

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// parseINI reads a systemd unit file as INI: [Section] headers, KEY=VALUE
// lines, # and ; comments; anything else is an error.
func parseINI(t *testing.T, path string) map[string]map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]map[string]string{}
	var sec map[string]string
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := strings.TrimSpace(sc.Text())
		switch {
		case l == "" || l[0] == '#' || l[0] == ';':
		case l[0] == '[' && l[len(l)-1] == ']':
			name := l[1 : len(l)-1]
			if out[name] != nil {
				t.Errorf("%s:%d: section [%s] twice", path, n, name)
			}
			sec = map[string]string{}
			out[name] = sec
		case sec == nil:
			t.Errorf("%s:%d: %q before any section", path, n, l)
		default:
			k, v, ok := strings.Cut(l, "=")
			if !ok || strings.TrimSpace(k) == "" || strings.ContainsAny(k, " \t") {
				t.Errorf("%s:%d: %q is not KEY=VALUE", path, n, l)
				continue
			}
			sec[k] = v
		}
	}
	return out
}

// TestSystemdUnits: the README's service and timer parse as INI and say
// what the README says they do.
func TestSystemdUnits(t *testing.T) {
	dir := filepath.Join("..", "docs", "systemd")
	svc := parseINI(t, filepath.Join(dir, "dualcrf-job@.service"))
	if s := svc["Service"]; s["Type"] != "oneshot" || !strings.Contains(s["ExecStart"], "dualcrf run --progress json %i.yaml") || s["KillSignal"] != "SIGTERM" {
		t.Errorf("service: %v", svc)
	}
	tm := parseINI(t, filepath.Join(dir, "dualcrf-job@.timer"))
	if tm["Timer"]["OnCalendar"] == "" || tm["Timer"]["Persistent"] != "true" || tm["Install"]["WantedBy"] != "timers.target" {
		t.Errorf("timer: %v", tm)
	}
}
