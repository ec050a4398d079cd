// Package crfsuite writes a model in the binary format of CRFsuite 0.12
// (its "crf1d" model: file magic "lCRF", type "FOMC"), so that CRFsuite's
// tagger and its bindings (python-crfsuite, sklearn-crfsuite, crfsuite-rs and
// others) serve a model dualcrf trained.
//
// CRFsuite scores a sentence of T tokens by its state features, one weight
// per (attribute, label) pair multiplied by the attribute's value at the
// token, and its transition features, one weight per (label, next label)
// pair. A dualcrf model without bias, start and end weights
// (train --no-bias) has exactly these two blocks, U and B, so the export
// is exact: every non-zero weight becomes one feature, whether the model
// was trained on the observed feature space (CRFsuite's own, which makes
// the file hold the same features CRFsuite would learn) or the full one.
// The label bias and the start and end weights have no place in CRFsuite's
// model and cannot be folded into it: a weight on the first or last label,
// or on every label, is not a sum of transition weights (a chain of T
// tokens has T−1 transitions and T labels), and no state feature is known to
// fire at every token or only at the first and last. WriteModel therefore
// refuses a model whose bias, start or end weights are not all zero.
//
// The file layout follows CRFsuite's reader (lib/crf/src/crf1d_model.c and
// lib/cqdb): a 48-byte header, the feature chunk (20 bytes a feature), the
// label and attribute string databases (CQDB, hashed with lookup3's
// hashlittle), then the per-label and per-attribute lists of feature ids.
// Integers and doubles are little-endian.
package crfsuite
