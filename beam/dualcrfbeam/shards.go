package dualcrfbeam

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/sdf"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/rtrackers/offsetrange"

	"github.com/dualcrf/dualcrf/pipeline"
)

// Shard is one input file of a job. Index is its place in the job's order,
// which fixes the order of the vocabulary's ids and the output's name.
type Shard struct {
	Index int
	Path  string
}

// Shards expands the glob patterns into the job's shards: each pattern's
// matches in lexical order, the patterns in the order given, a path
// matched twice kept at its first place. A pattern that matches nothing
// (or is malformed) is an error, and so is a directory.
func Shards(patterns []string) ([]Shard, error) {
	if len(patterns) == 0 {
		return nil, errors.New("no input shards given")
	}
	var out []Shard
	seen := map[string]bool{}
	for _, pat := range patterns {
		m, err := filepath.Glob(pat)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", pat, err)
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("%s: no such file", pat)
		}
		slices.Sort(m)
		for _, p := range m {
			if seen[p] {
				continue
			}
			st, err := os.Stat(p)
			if err != nil {
				return nil, err
			}
			if st.IsDir() {
				return nil, fmt.Errorf("%s: is a directory", p)
			}
			seen[p] = true
			out = append(out, Shard{Index: len(out), Path: p})
		}
	}
	return out, nil
}

// OutputPath is the output of shard i in dir: part-NNNNN.ext.
func OutputPath(dir string, i int, ext string) string {
	return filepath.Join(dir, fmt.Sprintf("part-%05d.%s", i, ext))
}

// perShard makes a DoFn over shards splittable, each shard a restriction
// of one position: Prism then splits a bundle of shards that makes slow
// progress, and runs the parts in parallel.
type perShard struct{}

// CreateInitialRestriction gives a shard one position.
func (perShard) CreateInitialRestriction(Shard) offsetrange.Restriction {
	return offsetrange.Restriction{Start: 0, End: 1}
}

// SplitRestriction keeps the restriction whole.
func (perShard) SplitRestriction(_ Shard, r offsetrange.Restriction) []offsetrange.Restriction {
	return []offsetrange.Restriction{r}
}

// RestrictionSize is the restriction's size.
func (perShard) RestrictionSize(_ Shard, r offsetrange.Restriction) float64 { return r.Size() }

// CreateTracker tracks r.
func (perShard) CreateTracker(r offsetrange.Restriction) *sdf.LockRTracker {
	return sdf.NewLockRTracker(offsetrange.NewTracker(r))
}

// claim claims the shard's position; false: another bundle owns it.
func claim(rt *sdf.LockRTracker) bool {
	return rt.TryClaim(rt.GetRestriction().(offsetrange.Restriction).Start)
}

// writeAtomic writes path through fn: the file appears under its name only
// when fn succeeds.
func writeAtomic(ctx context.Context, path string, fn func(*pipeline.Output) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return err
	}
	out, err := pipeline.CreateOutput(path)
	if err != nil {
		return err
	}
	defer out.Close()
	if err := fn(out); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return out.Commit()
}
