// Package crfsuite writes a model in the binary format of CRFsuite 0.12
// (its "crf1d" model: file magic "lCRF", type "FOMC"), so that CRFsuite's
// tagger and its bindings (python-crfsuite, sklearn-crfsuite, crfsuite-rs and
// others) serve a model dualcrf trained.
//
// CRFsuite scores a sentence of T tokens by its state features, one weight
// per (attribute, label) pair multiplied by the attribute's value at the
// token, and its transition features, one weight per (label, next label)
// pair. A dualcrf model's U and B blocks are exactly these: every non-zero
// weight becomes one feature, whether the model was trained on the observed
// feature space (CRFsuite's own, which makes the file hold the same features
// CRFsuite would learn) or the full one.
//
// CRFsuite has no label bias and no start or end weights, and they cannot
// be folded into its transition weights (a chain of T tokens has T labels
// and T−1 transitions). They become state features of three marker
// attributes instead (Markers): one present at every token, like the "bias"
// feature of sklearn-crfsuite's examples, one present only at the first
// token and one only at the last, each with value 1. A token's state score
// is then Σ_a v_a U[a,y] + bias[y] + [first]·start[y] + [last]·end[y], the
// node score of package crf, so the export is exact — provided the tagger
// is given the marker attributes with the others: `dualcrf featurize
// --model M --output-format crfsuite` writes them, and so does the Python
// feature module `dualcrf export` writes beside the model.
//
// The file layout follows CRFsuite's reader (lib/crf/src/crf1d_model.c and
// lib/cqdb): a 48-byte header, the feature chunk (20 bytes a feature), the
// label and attribute string databases (CQDB, hashed with lookup3's
// hashlittle), then the per-label and per-attribute lists of feature ids.
// Integers and doubles are little-endian.
package crfsuite
