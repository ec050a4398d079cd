package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/internal/datatest"
)

// writeConlluSlice writes sentences [from, to) of the gzipped CoNLL-U file
// src to dst, gzipped.
func writeConlluSlice(t *testing.T, src, dst string, from, to int) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	zr, err := gzip.NewReader(in)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	sent := 0
	for sc.Scan() && sent < to {
		line := sc.Text()
		if sent >= from {
			io.WriteString(zw, line+"\n")
		}
		if strings.TrimSpace(line) == "" {
			sent++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if sent < to {
		t.Fatalf("%s has %d sentences, want at least %d", src, sent, to)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestEWTXPOSStores runs the large-label case end to end on a slice of EWT
// (the development file the repository carries: 150 training and 50 test
// sentences, XPOS labels) with its duals in memory, streamed in one block
// and streamed in several. Independent answers: a one-block streamed run
// is the in-memory run bit for bit, so the two logs must agree exactly;
// the several-block run must report more than one block and start from the
// same certified initial point; every run's estimate row must be the one
// in its log.
func TestEWTXPOSStores(t *testing.T) {
	if testing.Short() {
		t.Skip("builds dualcrf and trains three small runs")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to build dualcrf with")
	}
	dev := datatest.Carried(t, "testdata", "corpora", "ud_english_ewt", "en_ewt-ud-dev.conllu.gz")
	data, out := t.TempDir(), t.TempDir()
	ds := datasets()[slices.IndexFunc(datasets(), func(d dataset) bool { return d.Name == "ewt-xpos" })]
	writeConlluSlice(t, dev, filepath.Join(data, ds.Train), 0, 150)
	writeConlluSlice(t, dev, filepath.Join(data, ds.Test), 150, 200)
	// The slice's duals are about 42 MiB and the rest of the run about
	// 45 MiB: a 1 GiB budget holds the duals in one block, 60 MiB leaves
	// three buffers of about 5 MiB.
	args := []string{"-data", data, "-out", out, "-sets", "ewt-xpos", "-solvers", "gap",
		"-duals", "memory,stream:1GiB,stream:60MiB", "-max-epochs", "3", "-gap-tol", "1e-9", "-gap-levels", "1e-1"}
	var md, progress bytes.Buffer
	if err := run(context.Background(), args, &md, &progress); err != nil {
		t.Fatalf("bench: %v\n%s", err, progress.String())
	}
	logs := map[string][]logRow{}
	for _, name := range []string{"gap+memory", "gap+stream:1GiB", "gap+stream:60MiB"} {
		dir := filepath.Join(out, "ewt-xpos", runDir(name))
		rows, err := readLog(filepath.Join(dir, "log.arrow"))
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 4 {
			t.Fatalf("%s: %d log rows, want epochs 0..3", name, len(rows))
		}
		logs[name] = rows
		blocks, err := streamBlocks(filepath.Join(dir, "train.stderr"))
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case name == "gap+memory" && blocks != 0, name == "gap+stream:1GiB" && blocks != 1, name == "gap+stream:60MiB" && blocks < 2:
			t.Errorf("%s: %d blocks", name, blocks)
		}
		for _, r := range rows {
			want := "| " + fmtSci(r.Gap) + " | " + fmtSci(r.GapEstimate) + " |"
			if !strings.Contains(md.String(), want) {
				t.Errorf("%s epoch %d: the estimate table lacks %q", name, r.Epoch, want)
			}
		}
	}
	mem, one, many := logs["gap+memory"], logs["gap+stream:1GiB"], logs["gap+stream:60MiB"]
	for i := range mem {
		if mem[i].Gap != one[i].Gap || mem[i].Primal != one[i].Primal || mem[i].GapEstimate != one[i].GapEstimate {
			t.Errorf("epoch %d: one streamed block %+v, memory %+v: want the same run", i, one[i], mem[i])
		}
	}
	if many[0].Gap != mem[0].Gap {
		t.Errorf("streamed in blocks, the initial gap is %v, in memory %v", many[0].Gap, mem[0].Gap)
	}
	for _, want := range []string{"## UD English EWT XPOS (ewt-xpos)", "| SDCA-GAP, memory |", "| SDCA-GAP, streamed 1GiB (1 block) |",
		"SDCA-GAP, streamed 60MiB: certified | estimate |", "--duals stream --memory-budget 60MiB"} {
		if !strings.Contains(md.String()+progress.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, md.String())
		}
	}
}
