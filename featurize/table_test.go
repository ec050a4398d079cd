package featurize_test

import (
	"bytes"
	"context"
	"os"
	"reflect"
	"testing"

	"github.com/dualcrf/dualcrf/featurize"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/schemas"
	"github.com/dualcrf/dualcrf/tables"
)

// TestTableIsRunReadBack: featurize.Table builds in memory the table
// tables.ReadFeatureTable reads from Run's output: the same dataset, text,
// metadata (but the codec's own keys) and summary, coverage included, for
// a learnt vocabulary, a fixed one, and standard input read once; and the
// same error for an empty input.
func TestTableIsRunReadBack(t *testing.T) {
	ctx := context.Background()
	train := "../cmd/dualcrf/demodata/train.txt.gz"
	chunking, err := featurize.LoadTemplates("chunking")
	if err != nil {
		t.Fatal(err)
	}
	learnt := featurize.RunOptions{Templates: chunking, MinCount: 3}
	ref, _ := viaArrow(t, pipeline.Source{Path: train}, learnt)
	vocab, err := featurize.NewVocabulary(ref.Data.AttrNames)
	if err != nil {
		t.Fatal(err)
	}
	fixed := featurize.RunOptions{Templates: chunking, MinCount: 3, Vocab: vocab, Labels: ref.Data.LabelNames[:5]}
	test50, err := os.ReadFile("../cmd/dualcrf/testdata/test50.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		in   func() pipeline.Source
		opts featurize.RunOptions
	}{
		{"learnt", func() pipeline.Source { return pipeline.Source{Path: train} }, learnt},
		{"fixed", func() pipeline.Source { return pipeline.Source{Path: "../cmd/dualcrf/demodata/test.txt.gz"} }, fixed},
		{"stdin-learnt", func() pipeline.Source { return pipeline.Source{Stdin: bytes.NewReader(test50)} }, learnt},
		{"stdin-fixed", func() pipeline.Source { return pipeline.Source{Stdin: bytes.NewReader(test50)} }, fixed},
	} {
		t.Run(c.name, func(t *testing.T) {
			want, wantSum := viaArrow(t, c.in(), c.opts)
			got, gotSum, err := featurize.Table(ctx, c.in(), c.opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{schemas.KeyFormat, schemas.KeyVersion} {
				delete(want.Metadata, k)
				delete(wantSum.Metadata, k)
			}
			wantSum.Version, wantSum.Metadata, gotSum.Metadata = "", nil, nil
			if !reflect.DeepEqual(got.Data, want.Data) {
				t.Errorf("dataset differs:\n got %d tokens, %d attrs, values %v, labels %v\nwant %d tokens, %d attrs, values %v, labels %v",
					got.Data.NumTokens(), len(got.Data.Attrs), got.Data.Values != nil, got.Data.LabelNames,
					want.Data.NumTokens(), len(want.Data.Attrs), want.Data.Values != nil, want.Data.LabelNames)
			}
			if !reflect.DeepEqual(got.Columns, want.Columns) || !reflect.DeepEqual(got.Text, want.Text) {
				t.Errorf("text differs: columns %v, want %v", got.Columns, want.Columns)
			}
			if !reflect.DeepEqual(got.Metadata, want.Metadata) {
				t.Errorf("metadata %v, want %v", got.Metadata, want.Metadata)
			}
			if !reflect.DeepEqual(gotSum, wantSum) {
				t.Errorf("summary\n %+v\nwant\n %+v", gotSum, wantSum)
			}
		})
	}
	for _, opts := range []featurize.RunOptions{learnt, fixed} {
		empty := pipeline.Source{Stdin: bytes.NewReader(nil)}
		_, err := featurize.Run(ctx, empty, &bytes.Buffer{}, opts)
		_, _, terr := featurize.Table(ctx, pipeline.Source{Stdin: bytes.NewReader(nil)}, opts)
		if err == nil || terr == nil || err.Error() != terr.Error() {
			t.Errorf("empty input: Table's error %v, Run's %v", terr, err)
		}
	}
}

// viaArrow featurizes with Run and reads the table back.
func viaArrow(t *testing.T, in pipeline.Source, opts featurize.RunOptions) (*tables.FeatureTable, tables.FeatureSummary) {
	t.Helper()
	var buf bytes.Buffer
	sum, err := featurize.Run(context.Background(), in, &buf, opts)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := tables.ReadFeatureTable(&buf, in.Name(), tables.FeatureReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tab, sum
}
