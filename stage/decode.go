package stage

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/decode"
	"github.com/dualcrf/dualcrf/featurize"
	"github.com/dualcrf/dualcrf/internal/platform"
	"github.com/dualcrf/dualcrf/progress"
	"github.com/dualcrf/dualcrf/schemas"
	"github.com/dualcrf/dualcrf/tables"
)

// DecodeOptions configure Decode. The zero value reads a feature table and
// writes an Arrow IPC stream of predictions, without marginals, on one
// goroutine per core.
type DecodeOptions struct {
	// Format is the output: tables.PredictionArrow (""), PredictionCoNLL or
	// PredictionParquet; IPC is the Arrow output's IPC format and
	// compression.
	Format string
	IPC    arrowio.WriterOptions
	// Marginals adds each predicted label's marginal probability and the
	// sentence's log-probability (not with CoNLL output).
	Marginals bool
	// Constraints allow only the label sequences well-formed in a chunk
	// tagging scheme (decode.Constraints), in the best path, the n best
	// paths and the marginals.
	Constraints decode.Constraints
	// ForceColumn names a text column of the input whose non-empty cells
	// ("_" is empty) fix their tokens' labels (decode.Options.ForceColumn).
	ForceColumn string
	// NBest, when positive, writes the NBest best labellings of each
	// sentence with their log-probabilities: a rank column, and in CoNLL
	// text a block per labelling.
	NBest int
	// ChunkConfidence adds the marginal probability of each predicted
	// chunk (not with CoNLL output), chunks read by Scheme's rules.
	ChunkConfidence bool
	Scheme          decode.Scheme
	// Workers is the number of decoding goroutines; 0: one per core.
	Workers int
	// MemoryBudget bounds the memory of the decoding process, in bytes
	// (decode.Options.MemoryBudget: what each chunk needs is estimated
	// first; a chunk over the budget is decoded on fewer goroutines, or
	// refused saying what it needs and what would fit); 0: the machine's
	// physical memory, or its cgroup's limit when lower.
	MemoryBudget int64
	// ChunkTokens is the number of tokens read, decoded and written at a
	// time; 0: tables.DefaultChunkTokens.
	ChunkTokens int
	// Text reads the input as a raw corpus, featurized with the model's
	// own templates, vocabulary and input settings; InputFormat ("": the
	// model's) and NoLabels override those.
	Text        bool
	InputFormat string
	NoLabels    bool
	// Input, when set with Text, says how to read the corpus instead of
	// the model's input settings (InputFormat and NoLabels still apply).
	Input *featurize.InputOptions
	// ModelName names the model in messages and in the predictions'
	// source metadata; "": "model".
	ModelName string
	// Log receives warnings (the input fits the model poorly); nil:
	// discarded.
	Log io.Writer
	// OptionName, when set, names an option (by its Go field, as
	// OptionError does) in the warnings; nil: its Go name. The command
	// passes its flags' names.
	OptionName func(field string) string
	// Progress, when set, shows the sentences and tokens decoded; nil:
	// nothing.
	Progress *progress.Reporter
	// physicalMemory returns the machine's memory (platform.PhysicalMemory
	// when nil); tests replace it.
	physicalMemory func() (int64, error)
	// Opened, when set, is called once the input is open and fits the
	// model, before anything is decoded or written to out: the command
	// creates its output file there, so that an input it cannot read
	// leaves no file. If it fails, Decode returns its error.
	Opened func() error
}

// TemplatesError refuses a feature table made with other templates than
// the model's: featurize the text like the model (featurize.FromModel).
type TemplatesError struct {
	Table, Model string // their names
}

func (e *TemplatesError) Error() string {
	return fmt.Sprintf("decode: the feature table %s was made with other templates than model %s; featurize it like the model", e.Table, e.Model)
}

// decodeInput is an opened input of Decode.
type decodeInput struct {
	src   decode.Source
	name  string
	close func()
}

// Close closes the input.
func (in *decodeInput) Close() { in.close() }

// Check reports an invalid option, or options that do not go together,
// as an *OptionError.
func (o DecodeOptions) Check() error {
	if err := o.options().Check(); err != nil {
		return err
	}
	if o.Format == tables.PredictionCoNLL {
		for _, f := range []struct {
			field string
			set   bool
		}{{"DecodeOptions.Marginals", o.Marginals}, {"DecodeOptions.ChunkConfidence", o.ChunkConfidence}} {
			if f.set {
				return optionError(f.field, nil, "applies to {DecodeOptions.Format} arrow or parquet, not conll (CoNLL text has no column for it)")
			}
		}
	}
	return nil
}

// options are the decoder's options; the memory budget is MemoryBudget,
// which the decoder's check refuses when negative (see budget).
func (o DecodeOptions) options() decode.Options {
	return decode.Options{Marginals: o.Marginals, Workers: o.Workers, Constraints: o.Constraints, ForceColumn: o.ForceColumn,
		NBest: o.NBest, ChunkConfidence: o.ChunkConfidence, Scheme: o.Scheme, MemoryBudget: o.MemoryBudget,
		ChunkTokens: cmp.Or(o.ChunkTokens, tables.DefaultChunkTokens)}
}

// budget is the decoder's options with the memory budget resolved:
// MemoryBudget, else the machine's memory (none when it cannot be read).
func (o DecodeOptions) budget() decode.Options {
	d := o.options()
	if d.MemoryBudget > 0 {
		return d
	}
	phys := o.physicalMemory
	if phys == nil {
		phys = platform.PhysicalMemory
	}
	if b, err := phys(); err == nil && b > 0 {
		d.MemoryBudget, d.MachineMemory = b, true
	}
	return d
}

// modelName is o.ModelName or "model".
func (o DecodeOptions) modelName() string {
	if o.ModelName == "" {
		return "model"
	}
	return o.ModelName
}

// openDecodeInput opens in for decoding with model m: a raw corpus with
// o.Text, featurized with the model's templates, vocabulary and input
// settings; else a feature table, which must have been made with the
// model's templates. Close it after use.
func openDecodeInput(ctx context.Context, m *crf.Model, input Input, o DecodeOptions) (*decodeInput, error) {
	if input.Records != nil && !o.Text {
		rr, name, done, err := input.records(ctx)
		if err != nil {
			return nil, err
		}
		return featureInput(m, rr, name, done, o)
	}
	in, err := input.source(ctx)
	if err != nil {
		return nil, err
	}
	if o.Text {
		opts, err := textOptions(m, o)
		if err != nil {
			return nil, err
		}
		tr, err := featurize.NewTextReader(in, opts, o.ChunkTokens)
		if err != nil {
			return nil, err
		}
		return &decodeInput{tr, tr.Metadata()[schemas.KeySource], func() { tr.Close() }}, nil
	}
	r, name, err := in.Open()
	if err != nil {
		return nil, err
	}
	rr, err := tables.OpenRecordReader(r, name, arrowio.ReaderOptions{})
	if err != nil {
		r.Close()
		if errors.Is(err, arrowio.ErrNotArrow) {
			err = fmt.Errorf("decode: %w; decode reads a feature table (or, with Text, a corpus)", err)
		}
		return nil, err
	}
	return featureInput(m, rr, name, func() {
		rr.Release()
		r.Close()
	}, o)
}

// featureInput reads the feature table of rr for decoding with model m,
// which must have been made with the table's templates; closeAll ends the
// reading.
func featureInput(m *crf.Model, rr array.RecordReader, name string, closeAll func(), o DecodeOptions) (*decodeInput, error) {
	tr, err := tables.NewFeatureReader(rr, name, tables.FeatureReadOptions{ChunkTokens: o.ChunkTokens})
	if err != nil {
		closeAll()
		return nil, err
	}
	mt, tt := m.Meta[schemas.KeyTemplates], tr.Metadata()[schemas.KeyTemplates]
	if mt != "" && tt != "" && mt != tt {
		closeAll()
		return nil, &TemplatesError{Table: name, Model: o.modelName()}
	}
	return &decodeInput{tr, name, closeAll}, nil
}

// textOptions are the featurization settings model m records, with
// o.InputFormat and o.NoLabels applied.
func textOptions(m *crf.Model, o DecodeOptions) (featurize.RunOptions, error) {
	f, err := featurize.FromModel(m, o.modelName())
	if err != nil {
		return featurize.RunOptions{}, err
	}
	r := f.RunOptions()
	in := r.Input
	if o.Input != nil {
		in = *o.Input
	}
	if o.InputFormat != "" && o.InputFormat != in.Format {
		// The model's layout (columns, label column) is that of its own
		// format; another format starts from none.
		in = featurize.InputOptions{Format: o.InputFormat, MaxLineBytes: in.MaxLineBytes, MaxSentenceTokens: in.MaxSentenceTokens,
			ColumnMap: in.ColumnMap}
	}
	if o.InputFormat != "" {
		in.FormatGiven = true
	}
	if o.NoLabels {
		in.LabelColumn = -1
	}
	r.Input = in
	if o.Log != nil {
		r.Warn = func(msg string) { fmt.Fprintf(o.Log, "decode: warning: %s\n", msg) }
		r.Note = func(msg string) { fmt.Fprintf(o.Log, "decode: %s\n", msg) }
		r.OptionName = o.OptionName
	}
	return r, nil
}

// Decode labels the input in with model m (Viterbi, in chunks of whole
// sentences, reading, decoding and writing at once) and writes the
// predictions to out. The input is a feature table made with the model's
// templates or, with o.Text, a raw corpus featurized with the model's
// templates, vocabulary and input settings. An input that shares no
// attribute or no gold label with the model is an error; one that fits it
// poorly gets warnings on o.Log. It returns what the model covered of the
// input.
func Decode(ctx context.Context, m *crf.Model, in Input, out io.Writer, o DecodeOptions) (tables.Coverage, error) {
	if err := o.Check(); err != nil {
		return tables.Coverage{}, fmt.Errorf("decode: %w", err)
	}
	if err := o.budget().CheckModel(m); err != nil {
		return tables.Coverage{}, fmt.Errorf("decode: %w", err)
	}
	input, err := openDecodeInput(ctx, m, in, o)
	if err != nil {
		return tables.Coverage{}, err
	}
	defer input.Close()
	if o.Opened != nil {
		if err := o.Opened(); err != nil {
			return tables.Coverage{}, err
		}
	}
	return decodeFrom(ctx, m, input, out, o)
}

// decodeFrom is Decode on an opened input.
func decodeFrom(ctx context.Context, m *crf.Model, in *decodeInput, out io.Writer, o DecodeOptions) (tables.Coverage, error) {
	format := o.Format
	if format == "" {
		format = tables.PredictionArrow
	}
	md := map[string]string{schemas.KeySource: o.modelName()}
	pw, err := tables.NewPredictionWriter(out, m, tables.PredictionOptions{Format: format, IPC: o.IPC, Metadata: md})
	if err != nil {
		return tables.Coverage{}, err
	}
	write, endProgress := decodeProgress(o.Progress, pw.Write)
	cov, err := decode.Stream(ctx, m, in.src, o.budget(), write)
	endProgress()
	err = nameInput(err, "decode", in.name)
	var fe *decode.ForcedLabelError
	var ie *decode.InfeasibleError
	if errors.As(err, &fe) || errors.As(err, &ie) {
		err = fmt.Errorf("decode: %s: %w", in.name, err)
	}
	if err == nil {
		if err = cov.Mismatch(in.name, o.modelName()); err != nil {
			err = fmt.Errorf("decode: %w", err)
		}
	}
	if err != nil {
		pw.Abort()
		return cov, err
	}
	if err := pw.Close(); err != nil {
		return cov, err
	}
	if o.Log != nil {
		for _, msg := range cov.Warnings(o.modelName()) {
			fmt.Fprintf(o.Log, "decode: warning: %s\n", msg)
		}
	}
	return cov, nil
}
