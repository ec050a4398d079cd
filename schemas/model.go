package schemas

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"math"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
)

// The model file: an Arrow IPC file (or Parquet) with one row per parameter
// group, so any Arrow tool can read a model as a plain table:
//
//	kind     utf8            "attr", "trans", "bias", "start" or "end"
//	name     utf8            the attribute name (attr), the previous label (trans), "" otherwise
//	labels   list<int32>     the labels of the weights the row stores, increasing, or null: all K
//	weights  list<float64>   the row's stored weights, one per label of labels (all K in label order when labels is null)
//
// A weight the row does not store is zero: the file holds the non-zero
// weights only (a row stores all K, labels null, when that takes fewer
// bytes: 3·(non-zero) ≥ 2·K). Rows come in weight-vector order: the
// attributes that have a non-zero weight, then K transition rows (named by
// the labels, in label order), then bias, start and end unless the model
// has none. Every weight is a finite number. Label names, λ, the training
// statistics and the featurization settings are in the schema metadata,
// with a checksum over all of it (KeyChecksum, see ModelHash).
//
// Version 3 stores the rows sparsely; version 2 (still read) had a column
// weights fixed_size_list<float64>[K] holding every row whole, and a row
// for every attribute. Version 2 added the checksum; version 1 models are
// refused.
const (
	ModelFormat  = "model"
	ModelVersion = "3"
	// ModelVersionDense is the earlier version with every weight stored,
	// which readers still accept.
	ModelVersionDense = "2"

	ModelKind    = "kind"
	ModelName    = "name"
	ModelLabels  = "labels"
	ModelWeights = "weights"

	KindAttr  = "attr"
	KindTrans = "trans"
	KindBias  = "bias"
	KindStart = "start"
	KindEnd   = "end"

	// Model metadata keys.
	KeyLabels       = "dualcrf.labels"        // JSON array of label names
	KeyLambda       = "dualcrf.lambda"        // λ, decimal
	KeyL1           = "dualcrf.l1"            // the elastic net's λ₁, decimal (absent: 0)
	KeyN            = "dualcrf.n"             // training sentences
	KeySolver       = "dualcrf.solver"        // sdca or lbfgs
	KeyFeatureSpace = "dualcrf.feature_space" // full or observed
	KeyTransitions  = "dualcrf.transitions"   // all or observed
	KeyBias         = "dualcrf.bias"          // "true" or "false"
	KeyTraining     = "dualcrf.training"      // JSON object of training statistics
	KeyChecksum     = "dualcrf.checksum"      // "sha256:" and 64 hex digits, see ModelHash
)

// ModelSchema returns the model schema (this version's) with the free
// metadata md added to the identifying keys.
func ModelSchema(md map[string]string) (*arrow.Schema, error) {
	m, err := buildMetadata(ModelFormat, ModelVersion, md)
	if err != nil {
		return nil, err
	}
	return arrow.NewSchema([]arrow.Field{
		{Name: ModelKind, Type: arrow.BinaryTypes.String},
		{Name: ModelName, Type: arrow.BinaryTypes.String},
		{Name: ModelLabels, Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
		{Name: ModelWeights, Type: arrow.ListOf(arrow.PrimitiveTypes.Float64)},
	}, &m), nil
}

// ModelDenseSchema returns the schema of a version 2 model of K labels
// (every row's K weights in a fixed-size list) with the free metadata md:
// what earlier builds wrote, for the tests of the readers that still
// accept it.
func ModelDenseSchema(K int, md map[string]string) (*arrow.Schema, error) {
	m, err := buildMetadata(ModelFormat, ModelVersionDense, md)
	if err != nil {
		return nil, err
	}
	return arrow.NewSchema([]arrow.Field{
		{Name: ModelKind, Type: arrow.BinaryTypes.String},
		{Name: ModelName, Type: arrow.BinaryTypes.String},
		{Name: ModelWeights, Type: arrow.FixedSizeListOf(int32(K), arrow.PrimitiveTypes.Float64)},
	}, &m), nil
}

// ValidateModelSchema says precisely what is wrong with a model schema:
// another table or version (a version 1 model predates checksums and is
// refused with a message saying so), a missing or mistyped column, a
// missing label list or checksum. Versions 3 and 2 are accepted, each with
// its own columns.
func ValidateModelSchema(s *arrow.Schema) error {
	p := &problems{table: "model"}
	version := ModelVersion
	if f, _ := metaValue(s.Metadata(), KeyFormat); f == ModelFormat {
		switch v, _ := metaValue(s.Metadata(), KeyVersion); v {
		case "1":
			p.addf("model format version 1 carries no checksum and is no longer read (this build reads versions %s and %s): retrain the model with this build", ModelVersion, ModelVersionDense)
			return p.err()
		case ModelVersionDense:
			version = v
		}
	}
	if !checkFormat(p, s, ModelFormat, version) {
		return p.err()
	}
	checkColumn(p, s, ModelKind, isType(arrow.STRING, "utf8"))
	checkColumn(p, s, ModelName, isType(arrow.STRING, "utf8"))
	if version == ModelVersionDense {
		checkColumn(p, s, ModelWeights, typeCheck{want: "fixed_size_list<float64>[K]", ok: func(t arrow.DataType) bool {
			l, ok := t.(*arrow.FixedSizeListType)
			return ok && l.Len() > 0 && l.Elem().ID() == arrow.FLOAT64
		}})
	} else {
		checkColumn(p, s, ModelLabels, isListOf(isType(arrow.INT32, "int32")))
		checkColumn(p, s, ModelWeights, isListOf(isType(arrow.FLOAT64, "float64")))
	}
	for _, k := range []string{KeyLabels, KeyChecksum} {
		if s.Metadata().FindKey(k) < 0 {
			p.addf("schema metadata has no %s key", k)
		}
	}
	return p.err()
}

// ModelHash computes a model's checksum, stored in its schema metadata under
// KeyChecksum as "sha256:" followed by 64 lowercase hex digits. It is the
// SHA-256 of, in order:
//
//   - the number of schema-metadata entries other than KeyChecksum, then each
//     of them in byte order of their keys: the key, then the value (this
//     covers the format and version, the labels, the bias flag, λ, the
//     featurization settings and the training statistics);
//   - every row, in file order: its kind, its name, then its K weights as
//     IEEE 754 binary64 bit patterns (the weights a version 3 row leaves
//     out as +0).
//
// A number is 8 bytes little-endian; a string is its length as a number,
// then its UTF-8 bytes. A flipped bit anywhere in the model's contents thus
// changes the checksum; bytes that carry no model content (padding, the
// file's layout) are not covered, and damage there either leaves the model
// intact or makes the file unreadable.
type ModelHash struct {
	h   hash.Hash
	buf []byte
}

// NewModelHash starts the checksum of a model with schema metadata md
// (KeyChecksum, if present, is left out).
func NewModelHash(md map[string]string) *ModelHash {
	h := &ModelHash{h: sha256.New()}
	keys := make([]string, 0, len(md))
	for k := range md {
		if k != KeyChecksum {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	h.number(uint64(len(keys)))
	for _, k := range keys {
		h.str(k)
		h.str(md[k])
	}
	return h
}

// Row adds one row of the model, in file order.
func (h *ModelHash) Row(kind, name string, weights []float64) {
	h.str(kind)
	h.str(name)
	h.buf = h.buf[:0]
	for _, w := range weights {
		h.buf = binary.LittleEndian.AppendUint64(h.buf, math.Float64bits(w))
	}
	h.h.Write(h.buf)
}

// Sum returns the checksum of what was added, as stored under KeyChecksum.
func (h *ModelHash) Sum() string {
	return "sha256:" + hex.EncodeToString(h.h.Sum(nil))
}

func (h *ModelHash) number(n uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], n)
	h.h.Write(b[:])
}

func (h *ModelHash) str(s string) {
	h.number(uint64(len(s)))
	_, _ = io.WriteString(h.h, s)
}

// ParseLabels parses a model's label list (the KeyLabels metadata): a JSON
// array of at least one label name, each non-empty and distinct.
func ParseLabels(text string) ([]string, error) {
	var labels []string
	if err := json.Unmarshal([]byte(text), &labels); err != nil {
		return nil, fmt.Errorf("want a JSON array of label names: %w", err)
	}
	if len(labels) == 0 {
		return nil, fmt.Errorf("no labels")
	}
	seen := make(map[string]bool, len(labels))
	for i, l := range labels {
		switch {
		case l == "":
			return nil, fmt.Errorf("label %d is empty", i)
		case seen[l]:
			return nil, fmt.Errorf("label %q appears twice", l)
		}
		seen[l] = true
	}
	return labels, nil
}

// Fact is one entry of a model's training statistics (KeyTraining).
type Fact struct {
	Key   string
	Value string // the JSON value, compacted
}

// ParseTrainingFacts parses a model's training statistics (KeyTraining): a
// JSON object, returned in key order with each value as its compact JSON
// text.
func ParseTrainingFacts(text string) ([]Fact, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &obj); err != nil {
		return nil, fmt.Errorf("want a JSON object: %w", err)
	}
	if obj == nil {
		return nil, fmt.Errorf("want a JSON object, got null")
	}
	facts := make([]Fact, 0, len(obj))
	for k, v := range obj {
		var compact bytes.Buffer
		if err := json.Compact(&compact, v); err != nil {
			return nil, fmt.Errorf("key %q: %w", k, err)
		}
		facts = append(facts, Fact{Key: k, Value: compact.String()})
	}
	sort.Slice(facts, func(i, j int) bool { return facts[i].Key < facts[j].Key })
	return facts, nil
}
