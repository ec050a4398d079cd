package stage

import (
	"bytes"
	"context"
	"errors"
	"math"
	"reflect"
	"runtime/debug"
	"testing"

	"github.com/dualcrf/dualcrf/train"
)

// TestPlanTrainIsTrainsPlan checks the dry run against the run: for every
// solver, feature space, placement of the duals and the options that write
// files, PlanTrain's plan — made from a pass over the table that keeps no
// row — is the plan Train makes from the loaded table, part for part: the
// same sizes, the same layout, the same blocks, the same estimate, the
// same refusal.
func TestPlanTrainIsTrainsPlan(t *testing.T) {
	ctx := context.Background()
	var table bytes.Buffer
	if _, err := Featurize(ctx, File("../cmd/dualcrf/demodata/train.txt.gz"), &table, FeaturizeOptions{MinCount: 2}); err != nil {
		t.Fatal(err)
	}
	loaded, err := ReadFeatureTable(ctx, Reader(bytes.NewReader(table.Bytes()), "t"), true)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		o    TrainOptions
	}{
		{"sdca", TrainOptions{}},
		{"observed", TrainOptions{FeatureSpace: ObservedPairs}},
		{"crfsuite", TrainOptions{FeatureSpace: ObservedPairs, Transitions: ObservedPairs, NoBias: true}},
		{"stream", TrainOptions{Duals: Duals{Place: DualsStream}, MemoryBudget: 60 << 20, Checkpoint: "ck", KeepDuals: "kept"}},
		{"file", TrainOptions{Duals: Duals{Place: DualsFile, Path: "d.duals"}, FeatureSpace: ObservedPairs}},
		{"workers", TrainOptions{Method: &train.SDCA{Workers: 2}}},
		{"refused", TrainOptions{Duals: Duals{Place: DualsMemory}, MemoryBudget: 40 << 20}},
		{"lbfgs-observed", TrainOptions{Method: &train.LBFGS{}, FeatureSpace: ObservedPairs, NoBias: true}},
		{"lbfgs", TrainOptions{Method: &train.LBFGS{Store: 4}}},
		{"oeg", TrainOptions{Method: &train.OEG{}, FeatureSpace: ObservedPairs}},
		{"sag", TrainOptions{Method: &train.SAG{}}},
		{"bcfw", TrainOptions{Loss: LossHinge, Checkpoint: "ck"}},
	}
	sparse := false
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, gotErr := PlanTrain(ctx, Reader(bytes.NewReader(table.Bytes()), "t"), c.o)
			r := &trainer{o: c.o.withDefaults(), name: "t", t: loaded}
			r.solver = Solver(r.o.Method)
			wantErr := r.setup()
			want := r.plan
			var oe *OptionError
			if (gotErr == nil) != (wantErr == nil) || (wantErr != nil && (!errors.As(gotErr, &oe) || gotErr.Error() != wantErr.Error())) {
				t.Fatalf("dry run: %v; run: %v", gotErr, wantErr)
			}
			if want == nil || got == nil {
				t.Fatalf("plans: dry run %v, run %v", got, want)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("dry run's plan\n%+v\nthe run's\n%+v", got, want)
			}
			if got.Sparse {
				sparse = true
				if got.Dim >= got.DenseDim || got.Memory.Model != 8*got.DenseDim {
					t.Fatalf("sparse plan: d %d of %d, model %d", got.Dim, got.DenseDim, got.Memory.Model)
				}
			}
			var out bytes.Buffer
			if err := got.Write(&out); err != nil || out.Len() == 0 {
				t.Fatalf("Write: %v", err)
			}
		})
	}
	if !sparse {
		t.Fatal("no case held the weights sparse")
	}
}

// TestMemoryPolicy checks the Go runtime's settings a training run makes
// and puts back: the collector's target and the memory limit of the plan,
// unless the program set its own (which stay).
func TestMemoryPolicy(t *testing.T) {
	prevGC, prevLimit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	defer func() {
		debug.SetGCPercent(prevGC)
		debug.SetMemoryLimit(prevLimit)
	}()
	plan := &TrainPlan{GCPercent: 25, GoLimit: 3 << 30}
	restore := memoryPolicy(plan)
	if gc, limit := debug.SetGCPercent(-1), debug.SetMemoryLimit(-1); gc != 25 || limit != 3<<30 {
		t.Fatalf("during the run: GOGC %d, limit %d; want 25 and %d", gc, limit, int64(3<<30))
	}
	debug.SetGCPercent(25)
	restore()
	if gc, limit := debug.SetGCPercent(-1), debug.SetMemoryLimit(-1); gc != 100 || limit != math.MaxInt64 {
		t.Fatalf("after the run: GOGC %d, limit %d; want them back", gc, limit)
	}
	debug.SetGCPercent(100)
	// The program's own settings stay.
	debug.SetGCPercent(60)
	debug.SetMemoryLimit(1 << 40)
	restore = memoryPolicy(plan)
	gc, limit := debug.SetGCPercent(-1), debug.SetMemoryLimit(-1)
	debug.SetGCPercent(gc)
	restore()
	if gc != 60 || limit != 1<<40 {
		t.Fatalf("with the program's own settings: GOGC %d, limit %d; want 60 and %d", gc, limit, int64(1<<40))
	}
}
