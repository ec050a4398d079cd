package stage

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/decode"
)

// TestDecodeMemoryBudget: decoding's memory budget is MemoryBudget when
// given, else the machine's memory, named as such in the messages; a model
// whose labels alone exceed it is refused before the input is opened.
func TestDecodeMemoryBudget(t *testing.T) {
	machine := func() (int64, error) { return 300 << 20, nil }
	o := DecodeOptions{physicalMemory: machine}
	if d := o.budget(); d.MemoryBudget != 300<<20 || !d.MachineMemory {
		t.Fatalf("unset: budget %d (machine %v), want the machine's 300 MiB", d.MemoryBudget, d.MachineMemory)
	}
	o.MemoryBudget = 1 << 30
	if d := o.budget(); d.MemoryBudget != 1<<30 || d.MachineMemory {
		t.Fatalf("given: budget %d (machine %v), want 1 GiB given", d.MemoryBudget, d.MachineMemory)
	}
	o = DecodeOptions{physicalMemory: func() (int64, error) { return 0, errors.New("unknown") }}
	if d := o.budget(); d.MemoryBudget != 0 {
		t.Fatalf("unknown machine memory: budget %d, want none", d.MemoryBudget)
	}
	if err := (DecodeOptions{MemoryBudget: -1}).Check(); err == nil {
		t.Fatal("a negative budget passed")
	}

	K := 4000
	m := &crf.Model{Layout: crf.Layout{NumLabels: K}, LabelNames: make([]string, K)}
	opened := false
	var out bytes.Buffer
	_, err := Decode(context.Background(), m, Reader(strings.NewReader("not read"), "in"), &out,
		DecodeOptions{physicalMemory: machine, Opened: func() error { opened = true; return nil }})
	if !errors.Is(err, decode.ErrMemory) || !strings.Contains(err.Error(), "of memory this machine has") || opened || out.Len() > 0 {
		t.Fatalf("a model of %d labels on a machine of 300 MiB: %v (output opened: %v)", K, err, opened)
	}
}
