package featurize

import (
	"context"
	"reflect"
	"testing"

	"github.com/dualcrf/dualcrf/pipeline"
)

// TestScanFeaturesGivesRunsVocabulary: counting ScanFeatures' features
// with a VocabBuilder, and its labels in order of first appearance, gives
// the vocabulary and labels Table learns, with and without a cut-off.
func TestScanFeaturesGivesRunsVocabulary(t *testing.T) {
	ctx := context.Background()
	in := pipeline.Source{Path: "../cmd/dualcrf/testdata/test50.txt"}
	set, err := LoadTemplates("chunking")
	if err != nil {
		t.Fatal(err)
	}
	for _, minCount := range []int{1, 3} {
		vb := NewVocabBuilder()
		var labels []string
		seen := map[string]bool{}
		err := ScanFeatures(ctx, in, InputOptions{}, set, func(_ []string, s *Sentence, feats [][]Feature) error {
			vb.AddSentence(feats)
			for _, l := range s.Labels {
				if l != "" && !seen[l] {
					seen[l] = true
					labels = append(labels, l)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		tab, _, err := Table(ctx, in, RunOptions{Templates: set, MinCount: minCount})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := vb.Build(minCount).Names(), tab.Data.AttrNames; !reflect.DeepEqual(got, want) {
			t.Errorf("min-count %d: %d attributes, Table has %d (or another order)", minCount, len(got), len(want))
		}
		if !reflect.DeepEqual(labels, tab.Data.LabelNames) {
			t.Errorf("labels %v, Table's %v", labels, tab.Data.LabelNames)
		}
	}
	if err := ScanFeatures(ctx, pipeline.Source{Path: "no-such-file.txt"}, InputOptions{}, set, nil); err == nil {
		t.Error("a missing file: no error")
	}
}
