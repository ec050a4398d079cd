package stage_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/stage"
)

// TestTrainRefusesLosingFiles: Train itself refuses options whose files
// would lose one another, by the files they are (a program that calls it
// has no command to check them first): kept duals over the training table
// however it is named, over the held-out table, over the duals file, or
// inside a checkpoint directory; a duals file over the warm start's.
func TestTrainRefusesLosingFiles(t *testing.T) {
	ctx := context.Background()
	tab, _, err := stage.FeaturizeTable(ctx, stage.File("../cmd/dualcrf/testdata/test50.txt"), stage.FeaturizeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range []string{"t.arrow", "v.arrow", "k.duals"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("precious"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	for _, c := range []struct {
		name string
		o    stage.TrainOptions
		want string
	}{
		{"kept duals over the table, by its absolute path", stage.TrainOptions{KeepDuals: filepath.Join(dir, "t.arrow")},
			"output KeepDuals " + filepath.Join(dir, "t.arrow") + " is the same file as input t.arrow"},
		{"kept duals over the held-out table", stage.TrainOptions{ValidName: "v.arrow", KeepDuals: "./v.arrow"},
			"output KeepDuals ./v.arrow is the same file as input Valid v.arrow"},
		{"kept duals over the duals file", stage.TrainOptions{Duals: stage.Duals{Place: stage.DualsFile, Path: "d"}, KeepDuals: "sub/../d"},
			"outputs KeepDuals sub/../d and Duals d are the same file"},
		{"a duals file over the warm start", stage.TrainOptions{Duals: stage.Duals{Place: stage.DualsFile, Path: "k.duals"}, WarmStart: "k.duals"},
			"output Duals k.duals is the same file as input WarmStart k.duals"},
		{"kept duals in the checkpoints", stage.TrainOptions{Checkpoint: "ck", KeepDuals: "ck/k.duals"},
			"output KeepDuals ck/k.duals is inside Checkpoint ck"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := os.MkdirAll("sub", 0o755); err != nil {
				t.Fatal(err)
			}
			c.o.Quiet = true
			_, err := stage.Train(ctx, tab, "t.arrow", c.o)
			if !errors.Is(err, stage.ErrFiles) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
			for _, name := range []string{"t.arrow", "v.arrow", "k.duals"} {
				if b, _ := os.ReadFile(name); string(b) != "precious" {
					t.Errorf("%s changed", name)
				}
			}
		})
	}
}
