package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/stage"
	"github.com/dualcrf/dualcrf/tables"
)

// TestGoTrainedModel: a model trained from Go (stage.Train) is complete,
// so the command takes it as it takes its own: featurize --model, decode
// of that table and of --text, eval. (A model trained from Go lacked the
// metadata the command assembled, and featurize --model refused it: it
// "records no feature templates".)
func TestGoTrainedModel(t *testing.T) {
	ctx := context.Background()
	tab, _, err := stage.FeaturizeTable(ctx, stage.File(abs(t, "demodata/train.txt.gz")), stage.FeaturizeOptions{MinCount: 3})
	if err != nil {
		t.Fatal(err)
	}
	res, err := stage.Train(ctx, tab, "train", stage.TrainOptions{MaxEpochs: 3})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	model := filepath.Join(dir, "model.arrow")
	f, err := os.Create(model)
	if err != nil {
		t.Fatal(err)
	}
	if err := tables.WriteModel(f, res.Model, arrowio.WriterOptions{Format: arrowio.FormatFile}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	test := abs(t, "demodata/test.txt.gz")
	for _, args := range [][]string{
		{"featurize", "--model", model, "-o", filepath.Join(dir, "test.arrow"), test},
		{"decode", "-m", model, "-o", filepath.Join(dir, "pred.arrow"), filepath.Join(dir, "test.arrow")},
		{"decode", "-m", model, "--text", test, "-o", filepath.Join(dir, "pred2.arrow")},
		{"eval", filepath.Join(dir, "pred2.arrow")},
	} {
		var out, errb bytes.Buffer
		if code := run(ctx, append([]string{"dualcrf"}, args...), strings.NewReader(""), &out, &errb); code != 0 {
			t.Fatalf("dualcrf %s: exit %d\n%s", strings.Join(args, " "), code, errb.String())
		}
	}
}
