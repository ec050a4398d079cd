package crftest

import (
	"fmt"
	"reflect"

	"github.com/dualcrf/dualcrf/crf"
)

// CompareDatasets reports the first difference between two datasets, field
// by field, or nil when they hold the same data. A nil Values equals all
// ones only when both are nil; empty slices equal nil ones.
func CompareDatasets(got, want *crf.Dataset) error {
	gv, wv := got.Values, want.Values
	if (gv == nil) != (wv == nil) {
		return fmt.Errorf("Values nil: got %v, want %v", gv == nil, wv == nil)
	}
	for _, f := range []struct {
		name      string
		got, want any
	}{
		{"NumAttrs", got.NumAttrs, want.NumAttrs},
		{"NumLabels", got.NumLabels, want.NumLabels},
		{"AttrNames", got.AttrNames, want.AttrNames},
		{"LabelNames", got.LabelNames, want.LabelNames},
		{"SentStart", got.SentStart, want.SentStart},
		{"AttrStart", got.AttrStart, want.AttrStart},
		{"Attrs", got.Attrs, want.Attrs},
		{"Labels", got.Labels, want.Labels},
		{"Values", gv, wv},
	} {
		if g, w := reflect.ValueOf(f.got), reflect.ValueOf(f.want); g.Kind() == reflect.Slice && g.Len() == 0 && w.Len() == 0 {
			continue
		}
		if !reflect.DeepEqual(f.got, f.want) {
			return fmt.Errorf("%s differ:\n got %v\nwant %v", f.name, f.got, f.want)
		}
	}
	return nil
}
