package stage

// Kept duals and warm starts: a run keeps its final duals with a key per
// sentence (TrainOptions.KeepDuals); a later run on a grown table starts
// from them (TrainOptions.WarmStart), matching sentences by key.

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dualcrf/dualcrf/duals"
	"github.com/dualcrf/dualcrf/option"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/schemas"
	"github.com/dualcrf/dualcrf/tables"
	"github.com/dualcrf/dualcrf/train"
)

// WarmFacts is what a warm start did, as the model's training facts record
// it under "warm_start".
type WarmFacts struct {
	From string `json:"from"` // the kept-duals file
	// Cold, when not empty, says why the run started cold instead.
	Cold      string   `json:"cold,omitempty"`
	Kept      int      `json:"kept"`                 // sentences started from their kept duals
	Added     int      `json:"added"`                // sentences without kept duals (eq. 21)
	Dropped   int      `json:"dropped"`              // kept sentences no longer in the table
	NewLabels []string `json:"new_labels,omitempty"` // labels the kept duals did not have
	// RefreshEvery is the period in epochs at which the warm run
	// recomputes its gap estimates: RefreshEvery when given, else
	// train.WarmRefreshEvery, with a sampler of gap estimates
	// (train.WarmRefreshes); 0 (absent) otherwise.
	RefreshEvery int `json:"refresh_every,omitempty"`
}

// sentenceKeys returns a key per sentence of t: a hash of its tokens' text
// in the columns cols (all of t's text columns when cols is nil and t has
// its text) or else of their attribute names and values, and of their
// gold label names, with the occurrence number of a sentence seen before
// in t. It returns the columns it hashed.
func sentenceKeys(t *tables.FeatureTable, cols []string, useCols bool) ([]duals.SentenceKey, []string, error) {
	d := t.Data
	var idx []int
	if !useCols && t.Text != nil {
		cols = t.Columns
	}
	for _, c := range cols {
		j := slices.Index(t.Columns, c)
		if j < 0 || t.Text == nil {
			return nil, nil, fmt.Errorf("the keys hash the text column %q, which the table does not have", c)
		}
		idx = append(idx, j)
	}
	keys := make([]duals.SentenceKey, d.Len())
	seen := map[[32]byte]uint32{}
	var u8 [8]byte
	for i := range d.Len() {
		h := sha256.New()
		str := func(s string) {
			binary.LittleEndian.PutUint64(u8[:], uint64(len(s)))
			h.Write(u8[:])
			h.Write([]byte(s))
		}
		for tok := d.SentStart[i]; tok < d.SentStart[i+1]; tok++ {
			if len(idx) > 0 {
				for _, j := range idx {
					str(t.Text[j][tok])
				}
			} else {
				for a := d.AttrStart[tok]; a < d.AttrStart[tok+1]; a++ {
					str(d.AttrNames[d.Attrs[a]])
					v := 1.0
					if d.Values != nil {
						v = d.Values[a]
					}
					str(fmt.Sprint(v))
				}
			}
			if y := d.Labels[tok]; y >= 0 {
				str(d.LabelNames[y])
			} else {
				str("\x00")
			}
			str("\n") // token boundary
		}
		var sum [32]byte
		h.Sum(sum[:0])
		occ := seen[sum]
		seen[sum] = occ + 1
		binary.LittleEndian.PutUint32(u8[:4], occ)
		k := sha256.Sum256(append(sum[:], u8[:4]...))
		copy(keys[i][:], k[:])
	}
	return keys, slices.Clone(cols), nil
}

// templatesFingerprint identifies the feature templates a table was made
// with: SHA-256 of their recorded text, hex; "" when it records none.
func templatesFingerprint(md map[string]string) string {
	s, ok := md[schemas.KeyTemplates]
	if !ok {
		return ""
	}
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// openWarm opens the kept duals of WarmStart and plans the warm start on
// the run's table: r.warm gets the facts, and the SDCA's Warm the plan
// unless the run must start cold (another template set, λ setting or
// label set), which the facts and the log say.
func (r *trainer) openWarm() error {
	path := r.o.WarmStart
	k, err := duals.OpenKept(path)
	if err != nil {
		return err
	}
	r.kept = k
	f := &WarmFacts{From: path}
	r.warm = f
	info := k.Info
	d := r.t.Data
	cold := func(format string, args ...any) error {
		f.Cold = fmt.Sprintf(format, args...)
		f.Added = d.Len()
		r.logf("train: warning: starting cold, not from %s: %s", path, f.Cold)
		return nil
	}
	if fp := templatesFingerprint(r.t.Metadata); fp != info.Templates {
		return cold("its duals were trained on a table of other feature templates")
	}
	if l := r.o.Lambda.String(); l != info.LambdaSetting {
		return cold("its duals were trained with λ = %s, this run has λ = %s", info.LambdaSetting, l)
	}
	if l := r.o.l1Setting(); l != info.L1Setting {
		return cold("its duals were trained with λ₁ = %s, this run has λ₁ = %s", cmp.Or(info.L1Setting, "0"), cmp.Or(l, "0"))
	}
	labels := make([]int, len(info.Labels))
	var missing []string
	for a, name := range info.Labels {
		labels[a] = slices.Index(d.LabelNames, name)
		if labels[a] < 0 {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return cold("its label%s %s %s not in %s (another label scheme?)", plural(len(missing)), strings.Join(missing, ", "), isAre(len(missing)), r.name)
	}
	keys, _, err := sentenceKeys(r.t, info.KeyColumns, true)
	if err != nil {
		return cold("%v", err)
	}
	at := make(map[duals.SentenceKey]int, len(k.Keys))
	for j, key := range k.Keys {
		at[key] = j
	}
	from := make([]int, d.Len())
	for i, key := range keys {
		from[i] = -1
		if j, ok := at[key]; ok && k.Lens[j] == d.SentStart[i+1]-d.SentStart[i] {
			from[i] = j
			f.Kept++
		}
	}
	if f.Kept == 0 {
		return cold("none of its %d sentences is in %s", len(k.Keys), r.name)
	}
	f.Added, f.Dropped = d.Len()-f.Kept, len(k.Keys)-f.Kept
	for y, name := range d.LabelNames {
		if !slices.Contains(labels, y) {
			f.NewLabels = append(f.NewLabels, name)
		}
	}
	train.SetMade(r.m, train.RunWarmStart, &train.WarmStart{From: from, Labels: labels, Blocks: k.Each})
	if train.WarmRefreshes(r.m) {
		f.RefreshEvery = train.WarmRefreshEvery
		if r.o.RefreshEvery > 0 {
			f.RefreshEvery = r.o.RefreshEvery
		}
	}
	line := fmt.Sprintf("train: warm start from %s: %d sentences kept, %d added, %d dropped", path, f.Kept, f.Added, f.Dropped)
	if len(f.NewLabels) > 0 {
		line += fmt.Sprintf("; new label%s %s (zero mass, mixed with ε of the uniform marginals)", plural(len(f.NewLabels)), strings.Join(f.NewLabels, ", "))
	}
	switch {
	case f.RefreshEvery == 1:
		line += "; gap estimates recomputed every epoch"
	case f.RefreshEvery > 1:
		line += fmt.Sprintf("; gap estimates recomputed every %d epochs", f.RefreshEvery)
	}
	r.logf("%s (kept: λ = %g, %s feature space, certified gap %.4g)", line, info.Lambda, info.FeatureSpace, info.Gap)
	return nil
}

// keepDuals writes the run's final duals to KeepDuals, as an output is
// written (pipeline.Output): to a temporary file renamed over it, keeping
// an existing file's mode, or in place to a FIFO or a device.
func (r *trainer) keepDuals(res *TrainResult) error {
	keys, cols, err := sentenceKeys(r.t, nil, false)
	if err != nil {
		return err
	}
	info := duals.KeptInfo{Lambda: r.p.Lambda, LambdaSetting: r.o.Lambda.String(), L1Setting: r.o.l1Setting(), Templates: templatesFingerprint(r.t.Metadata),
		KeyColumns: cols, FeatureSpace: r.p.FeatureSpace(), Transitions: r.p.TransitionSpace(), Bias: !r.p.Layout.NoBias,
		Source: r.name, Primal: res.Train.Last.Primal, Gap: res.Train.Last.Gap}
	out, err := pipeline.CreateOutput(r.o.KeepDuals)
	if err != nil {
		return fmt.Errorf("write kept duals: %w", err)
	}
	defer out.Close()
	if err := duals.WriteKept(out, r.o.KeepDuals, info, keys, r.t.Data, r.m.(train.DualsHolder).Store()); err != nil {
		return err
	}
	if err := out.Commit(); err != nil {
		return fmt.Errorf("write kept duals: %w", err)
	}
	how := "attribute names"
	if len(cols) > 0 {
		how = "columns " + strings.Join(cols, ", ")
	}
	r.logf("train: kept the duals of %d sentences in %s (keyed by %s and labels)", r.t.Data.Len(), r.o.KeepDuals, how)
	return nil
}

// checkFiles refuses options whose files would lose one another
// (pipeline.CheckFiles: by the files' identity, not their names): the kept
// duals, the duals file and the checkpoint directories against the
// training table read from name, the held-out table and the warm start's
// duals. The command checks these files, and its own, before it reads
// anything; this is the library's guard for programs that call Train.
func (o TrainOptions) checkFiles(name string) error {
	if name == "-" || name == pipeline.StdinName {
		name = "" // read from a stream: no file to compare
	}
	paths := []pipeline.Path{
		{Name: name, Role: pipeline.RoleInput},
		{Flag: "{Valid}", Name: o.ValidName, Role: pipeline.RoleInput},
		{Flag: "{WarmStart}", Name: o.WarmStart, Role: pipeline.RoleStateRead},
		{Flag: "{KeepDuals}", Name: o.KeepDuals, Role: pipeline.RoleStateWritten},
		{Flag: "{Duals}", Name: o.Duals.Path, Role: pipeline.RoleState},
		{Flag: "{Checkpoint}", Name: o.Checkpoint, Role: pipeline.RoleDir},
		{Flag: "{Resume}", Name: o.Resume, Role: pipeline.RoleDir},
	}
	if o.ValidName == "-" || o.ValidName == pipeline.StdinName {
		paths[1].Name = ""
	}
	if err := pipeline.CheckFiles(paths); err != nil {
		return &option.Error{Msg: "train: " + err.Error(), Err: ErrFiles}
	}
	return nil
}

// ErrFiles is the kind of error (errors.Is) of a run refused because its
// files would lose one another.
var ErrFiles = errors.New("files of the run would overwrite each other")

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}
