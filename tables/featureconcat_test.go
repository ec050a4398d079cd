package tables

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestReadTableConcatenated: a feature table read from concatenated
// tables holds every sentence of each, in order, though each part numbers
// its sentences from 0 (formerly only the first part was read).
func TestReadTableConcatenated(t *testing.T) {
	stream, err := os.ReadFile(filepath.Join("testdata", "feature", "small.stream.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(filepath.Join("testdata", "feature", "small.file.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	one, err := ReadFeatureTable(bytes.NewReader(stream), "one", FeatureReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n, tokens := one.Data.Len(), one.Data.NumTokens()
	for name, data := range map[string][]byte{
		"stream+stream": append(append([]byte{}, stream...), stream...),
		"file+stream":   append(append([]byte{}, file...), stream...),
	} {
		two, err := ReadFeatureTable(bytes.NewReader(data), name, FeatureReadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		d := two.Data
		if d.Len() != 2*n || d.NumTokens() != 2*tokens {
			t.Fatalf("%s: %d sentences, %d tokens; want %d, %d", name, d.Len(), d.NumTokens(), 2*n, 2*tokens)
		}
		if !reflect.DeepEqual(d.Labels[:tokens], d.Labels[tokens:]) || d.SentStart[n] != tokens {
			t.Fatalf("%s: the second part differs from the first", name)
		}
	}
}
