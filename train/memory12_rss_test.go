package train

import (
	"context"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/crf/crftest"
	"github.com/dualcrf/dualcrf/duals"
)

// rssFile returns the process's resident file-backed memory (RssFile of
// /proc/self/status), in bytes; without /proc (not Linux) the test is
// skipped.
func rssFile(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if errors.Is(err, fs.ErrNotExist) {
		t.Skip("no /proc/self/status: the resident memory is Linux's to tell")
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "RssFile:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no RssFile in /proc/self/status")
	return 0
}

// TestResumeLeavesSnapshotOnDisk: loading a snapshot (which verifies every
// dual) and resuming from it must not leave the snapshot's duals file
// resident beside the run's own duals — formerly its mapped pages stayed,
// doubling a resumed run's memory. Saving must not map it either.
func TestResumeLeavesSnapshotOnDisk(t *testing.T) {
	rng := rand.New(rand.NewPCG(88, 1))
	d := crftest.RandomDataset(rng, 400, 24, 30, 24, false) // about 40 MiB of duals
	p, err := NewProblem(d, 1/float64(d.Len()), false)
	if err != nil {
		t.Fatal(err)
	}
	size := duals.Bytes(d, duals.DefaultPrecision)
	dir := t.TempDir()
	m := &SDCA{Seed: 1}
	if err := m.Init(p); err != nil {
		t.Fatal(err)
	}
	rs, _ := settingsOf(p, Settings{}, m)
	pr := Progress{settings: rs, Records: []EpochRecord{{}}}
	base := rssFile(t)
	if _, err := SaveCheckpoint(dir, m, pr); err != nil {
		t.Fatal(err)
	}
	if grew := rssFile(t) - base; grew > size/4 {
		t.Fatalf("saving %d bytes of duals left %d bytes of file pages resident", size, grew)
	}
	base = rssFile(t)
	c, err := LoadCheckpoint(dir, p, func(s string) { t.Error(s) })
	if err != nil {
		t.Fatal(err)
	}
	defer c.Duals.Close()
	if grew := rssFile(t) - base; grew > size/4 {
		t.Fatalf("verifying %d bytes of duals left %d bytes of the snapshot resident", size, grew)
	}
	r := &SDCA{Seed: 1}
	if err := r.Resume(p, c); err != nil {
		t.Fatal(err)
	}
	if grew := rssFile(t) - base; grew > size/4 {
		t.Fatalf("resuming with %d bytes of duals left %d bytes of the snapshot resident", size, grew)
	}
	if _, err := r.Certify(context.Background()); err != nil {
		t.Fatal(err)
	}
}
