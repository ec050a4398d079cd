// Package decode turns a model and a feature table into predictions
// (tables.Predictions, written by tables.PredictionWriter) and scores them.
package decode

// This file is the evaluation half of the package: an Evaluator that scores
// predicted tag sequences against gold ones the way the CoNLL shared tasks
// did, with the perl script conlleval (version 2004-01-26, Erik Tjong Kim
// Sang). Its chunk rules and its counting are reproduced line for line,
// quirks included, so that the figures and the text report are the ones
// conlleval would print for the same tags written as a CoNLL file (one token
// per line, a blank line after every sentence).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Sentinel errors of Evaluator.Add; the returned errors wrap them with the
// sentence and token at fault.
var (
	// ErrLength means the gold and predicted sequences differ in length.
	ErrLength = errors.New("decode: gold and predicted tag sequences differ in length")
	// ErrScheme means a tag is not written the way the chosen Scheme
	// writes tags.
	ErrScheme = errors.New("decode: tag does not fit the tagging scheme")
)

// Scheme says how chunk tags are read into chunks.
type Scheme uint8

const (
	// SchemeConlleval (the zero value, the default) applies conlleval's own
	// rules unchanged. conlleval is scheme-agnostic: a tag "P-TYPE" splits at
	// its first '-' into a prefix and a type ("O" has type ""), and chunk
	// starts and ends follow from the prefixes and types of two neighbouring
	// tags. Those rules read IOB1, IOB2, IOE1 and IOE2 and the bracket tags
	// "[" and "]" alike. They predate IOBES: "S-" is not a prefix they know,
	// so "S-X" next to "O" or to another type is a one-token chunk, but
	// "S-X S-X", "B-X S-X", "E-X B-X" and "S-X B-X" are each read as one
	// chunk. Use SchemeIOBES or SchemeAuto for IOBES tags.
	SchemeConlleval Scheme = iota
	// SchemeAuto adds to conlleval's rules those of IOBES: "S-" starts and
	// ends a chunk, "E-" always ends one, "B-" after "E-" or "S-" starts
	// one. On tags "O", "B-T", "I-T" and "E-T" the scores equal conlleval's
	// unless an "E-T" is directly followed by a "B-T"; IOB1, IOB2, IOE1,
	// IOE2 and IOBES are all read correctly.
	SchemeAuto
	// SchemeIOB1 reads tags with SchemeAuto's rules and rejects any tag that
	// is not "O", "B-TYPE" or "I-TYPE". IOB1 and IOB2 differ only in where
	// "B-" is written; the rules read both.
	SchemeIOB1
	// SchemeIOB2 is SchemeIOB1 under the other name.
	SchemeIOB2
	// SchemeIOBES reads tags with SchemeAuto's rules and rejects any tag
	// that is not "O" or one of "B-", "I-", "E-", "S-" followed by a type.
	SchemeIOBES
)

var schemeNames = [...]string{
	SchemeConlleval: "conlleval",
	SchemeAuto:      "auto",
	SchemeIOB1:      "iob1",
	SchemeIOB2:      "iob2",
	SchemeIOBES:     "iobes",
}

// String returns the scheme's name as ParseScheme accepts it.
func (s Scheme) String() string {
	if int(s) < len(schemeNames) {
		return schemeNames[s]
	}
	return fmt.Sprintf("Scheme(%d)", uint8(s))
}

// ParseScheme returns the scheme named name ("conlleval", "auto", "iob1",
// "iob2" or "iobes", in any letter case); "" is the default, conlleval.
func ParseScheme(name string) (Scheme, error) {
	if name == "" {
		return SchemeConlleval, nil
	}
	for s, n := range schemeNames {
		if strings.EqualFold(name, n) {
			return Scheme(s), nil
		}
	}
	return 0, fmt.Errorf("decode: unknown tagging scheme %q (want one of %s)",
		name, strings.Join(schemeNames[:], ", "))
}

// prefixes returns the tag prefixes a validating scheme allows, or nil when
// the scheme accepts every tag.
func (s Scheme) prefixes() string {
	switch s {
	case SchemeIOB1, SchemeIOB2:
		return "BI"
	case SchemeIOBES:
		return "BIES"
	}
	return ""
}

// EvalOptions configures an Evaluator. The zero value scores chunks with
// conlleval's rules.
type EvalOptions struct {
	// Scheme selects the chunk rules; the zero value is SchemeConlleval.
	Scheme Scheme
	// NoChunks scores tokens only (part-of-speech tagging, OCR): tags are
	// compared as whole strings, no chunk is looked for and Scheme is
	// ignored. Scores.Chunks is then nil.
	NoChunks bool
	// AutoNoChunks scores tokens only, as NoChunks, when no gold or
	// predicted label has a chunk prefix (no "O", no "B-", "I-", "E-",
	// "S-", "L-" or "U-" label): a tag set such as part-of-speech tags,
	// where chunk scores do not apply. Scores.Note then says so.
	AutoNoChunks bool
	// Calibration adds a reliability table of the predicted chunks'
	// confidence (Scores.Calibration): sentences are then added with
	// AddConfidence. Not with NoChunks.
	Calibration bool
}

// NoChunkPrefixNote is Scores.Note when AutoNoChunks found no chunk prefix.
const NoChunkPrefixNote = "labels have no chunk prefixes (B-, I-): reporting token accuracy; chunk scores do not apply (--no-chunks says so)"

// hasChunkPrefix reports whether label is a chunk tag: "O", or a prefix
// B, I, E, S, L or U followed by '-'.
func hasChunkPrefix(label string) bool {
	return label == "O" || len(label) >= 2 && label[1] == '-' && strings.IndexByte("BIESLU", label[0]) >= 0
}

// tag is a chunk tag split as conlleval splits it.
type tag struct {
	prefix string // "B", "I", "E", "S", "O", "[", "]", "." …
	typ    string // chunk type; "" for "O"
}

// outside is the tag conlleval gives a sentence boundary line (-X- O O).
var outside = tag{prefix: "O"}

// splitTag splits s as conlleval does: at the first '-' (its regular
// expression ^([^-]*)-(.*)$), the whole tag being the prefix when there is
// no '-'. A type "0" becomes "" because the script then writes
// `$type = $type ? $type : ""`, and "0" is false in perl.
func splitTag(s string) tag {
	i := strings.IndexByte(s, '-')
	if i < 0 {
		return tag{prefix: s}
	}
	t := tag{prefix: s[:i], typ: s[i+1:]}
	if t.typ == "0" {
		t.typ = ""
	}
	return t
}

// endOfChunk is conlleval's endOfChunk: whether a chunk ended between the
// previous tag and the current one. The pair "I","O" appears twice in the
// script; once is enough here.
func endOfChunk(prev, cur tag) bool {
	p, c := prev.prefix, cur.prefix
	switch {
	case p == "B" && (c == "B" || c == "O"),
		p == "I" && (c == "B" || c == "O"),
		p == "E" && (c == "E" || c == "I" || c == "O"),
		p != "O" && p != "." && prev.typ != cur.typ,
		p == "]" || p == "[": // brackets are chunks of length 1
		return true
	}
	return false
}

// startOfChunk is conlleval's startOfChunk: whether a chunk started between
// the previous tag and the current one.
func startOfChunk(prev, cur tag) bool {
	p, c := prev.prefix, cur.prefix
	switch {
	case c == "B" && (p == "B" || p == "I" || p == "O"),
		p == "O" && (c == "I" || c == "E"),
		p == "E" && (c == "E" || c == "I"),
		c != "O" && c != "." && prev.typ != cur.typ,
		c == "[" || c == "]":
		return true
	}
	return false
}

// endOfChunkIOBES extends endOfChunk with IOBES: "E-" and "S-" close their
// chunk whatever follows, and "S-" closes a chunk open before it.
func endOfChunkIOBES(prev, cur tag) bool {
	p, c := prev.prefix, cur.prefix
	return endOfChunk(prev, cur) || p == "E" || p == "S" ||
		(c == "S" && (p == "B" || p == "I"))
}

// startOfChunkIOBES extends startOfChunk with IOBES: "S-" always starts a
// chunk, "B-" does after "E-" or "S-", and so do "I-" and "E-" after "S-".
func startOfChunkIOBES(prev, cur tag) bool {
	p, c := prev.prefix, cur.prefix
	return startOfChunk(prev, cur) || c == "S" ||
		(c == "B" && (p == "E" || p == "S")) ||
		(p == "S" && (c == "I" || c == "E"))
}

// chunkCounts are conlleval's per-type hashes foundCorrect, foundGuessed and
// correctChunk for one type.
type chunkCounts struct{ gold, pred, correct int }

// chunker is conlleval's chunk state machine over a stream of tag pairs.
type chunker struct {
	start, end func(prev, cur tag) bool

	lastCorrect, lastGuessed tag
	inCorrect                bool // the chunk open in both is correct so far

	foundCorrect, foundGuessed, correctChunk int
	types                                    map[string]*chunkCounts
}

func newChunker(s Scheme) chunker {
	k := chunker{
		start: startOfChunk, end: endOfChunk,
		lastCorrect: outside, lastGuessed: outside,
		types: make(map[string]*chunkCounts),
	}
	if s != SchemeConlleval {
		k.start, k.end = startOfChunkIOBES, endOfChunkIOBES
	}
	return k
}

func (k *chunker) count(typ string) *chunkCounts {
	c := k.types[typ]
	if c == nil {
		c = new(chunkCounts)
		k.types[typ] = c
	}
	return c
}

// step is the body of conlleval's main loop for one line whose gold tag is
// cor and guessed tag is gue (a sentence boundary is outside, outside).
func (k *chunker) step(cor, gue tag) {
	if k.inCorrect {
		ce := k.end(k.lastCorrect, cor)
		ge := k.end(k.lastGuessed, gue)
		switch {
		case ce && ge && k.lastGuessed.typ == k.lastCorrect.typ:
			k.inCorrect = false
			k.correctChunk++
			k.count(k.lastCorrect.typ).correct++
		case ce != ge || gue.typ != cor.typ:
			k.inCorrect = false
		}
	}
	cs := k.start(k.lastCorrect, cor)
	gs := k.start(k.lastGuessed, gue)
	if cs && gs && gue.typ == cor.typ {
		k.inCorrect = true
	}
	if cs {
		k.foundCorrect++
		k.count(cor.typ).gold++
	}
	if gs {
		k.foundGuessed++
		k.count(gue.typ).pred++
	}
	k.lastCorrect, k.lastGuessed = cor, gue
}

// labelCounts are token-level counts for one label.
type labelCounts struct{ gold, pred, correct int }

// Evaluator accumulates scores sentence by sentence. The zero value is ready
// to use with the default EvalOptions; it is not safe for concurrent use.
type Evaluator struct {
	opts      EvalOptions
	sentences int
	tokens    int // conlleval's tokenCounter
	// correctTags is conlleval's correctTags: tokens whose gold and
	// guessed tags agree in prefix and type (whole strings with NoChunks).
	correctTags int
	labels      map[string]*labelCounts
	chunks      chunker
	calib       *calibrator
	ready       bool
}

// NewEvaluator returns an Evaluator with the given options.
func NewEvaluator(opts EvalOptions) *Evaluator {
	return &Evaluator{opts: opts}
}

func (e *Evaluator) init() {
	if e.ready {
		return
	}
	e.labels = make(map[string]*labelCounts)
	e.chunks = newChunker(e.opts.Scheme)
	if e.opts.Calibration {
		e.calib = newCalibrator(e.opts.Scheme)
	}
	e.ready = true
}

// Add scores one sentence: gold[i] and pred[i] are the gold and predicted
// tags of token i. A sentence boundary follows it, closing open chunks. On
// error (lengths differ, or a tag the scheme rejects) nothing is counted.
func (e *Evaluator) Add(gold, pred []string) error {
	e.init()
	n := e.sentences + 1
	if len(gold) != len(pred) {
		return fmt.Errorf("sentence %d: %d gold tags, %d predicted: %w", n, len(gold), len(pred), ErrLength)
	}
	if err := e.validate(n, gold, pred); err != nil {
		return err
	}
	for i := range gold {
		e.addToken(gold[i], pred[i])
	}
	if !e.opts.NoChunks {
		e.chunks.step(outside, outside)
	}
	e.sentences++
	return nil
}

// AddConfidence is Add for an evaluator with Calibration: chunkConf[i] is
// the confidence of the predicted chunk token i is in (NaN outside
// chunks), as decode's chunk confidence writes it. A predicted chunk
// without a confidence is an error, and so is an evaluator without
// Calibration; on error nothing is counted.
func (e *Evaluator) AddConfidence(gold, pred []string, chunkConf []float64) error {
	e.init()
	if e.calib == nil {
		return errors.New("decode: AddConfidence needs an evaluator with Calibration")
	}
	n := e.sentences + 1
	if len(chunkConf) != len(pred) {
		return fmt.Errorf("sentence %d: %d chunk confidences for %d tokens", n, len(chunkConf), len(pred))
	}
	if err := e.calib.check(n, pred, chunkConf); err != nil {
		return err
	}
	if err := e.Add(gold, pred); err != nil {
		return err
	}
	e.calib.add(gold, pred, chunkConf)
	return nil
}

// validate checks every tag against the prefixes the scheme allows.
func (e *Evaluator) validate(n int, gold, pred []string) error {
	allowed := e.opts.Scheme.prefixes()
	if e.opts.NoChunks || allowed == "" {
		return nil
	}
	for _, side := range []struct {
		name string
		tags []string
	}{{"gold", gold}, {"predicted", pred}} {
		for i, s := range side.tags {
			if !fitsScheme(s, allowed) {
				return fmt.Errorf("sentence %d token %d: %s tag %q is not %s (O or %s-TYPE): %w",
					n, i+1, side.name, s, e.opts.Scheme, strings.Join(strings.Split(allowed, ""), "-/"), ErrScheme)
			}
		}
	}
	return nil
}

// fitsScheme reports whether s is "O" or a one-letter prefix from allowed,
// a '-' and a non-empty type.
func fitsScheme(s, allowed string) bool {
	if s == "O" {
		return true
	}
	return len(s) >= 3 && s[1] == '-' && strings.IndexByte(allowed, s[0]) >= 0
}

func (e *Evaluator) addToken(g, p string) {
	lg := e.label(g)
	lg.gold++
	e.label(p).pred++
	if g == p {
		lg.correct++
	}
	e.tokens++
	if e.opts.NoChunks {
		if g == p {
			e.correctTags++
		}
		return
	}
	cor, gue := splitTag(g), splitTag(p)
	if cor == gue {
		e.correctTags++
	}
	e.chunks.step(cor, gue)
}

func (e *Evaluator) label(s string) *labelCounts {
	c := e.labels[s]
	if c == nil {
		c = new(labelCounts)
		e.labels[s] = c
	}
	return c
}

// Tally holds the counts of one score line and the precision, recall and
// F1 that follow from them, as fractions in [0, 1] (conlleval's text report,
// WriteConlleval, prints them as percentages): precision is 0 when nothing
// was predicted, recall 0 when there is no gold item, F1 0 when precision +
// recall is 0.
type Tally struct {
	Gold      int     `json:"gold"`      // gold items (conlleval: phrases)
	Predicted int     `json:"predicted"` // predicted items (conlleval: found)
	Correct   int     `json:"correct"`   // items both gold and predicted
	Precision float64 `json:"precision"` // Correct / Predicted, in [0, 1]
	Recall    float64 `json:"recall"`    // Correct / Gold, in [0, 1]
	F1        float64 `json:"f1"`        // harmonic mean of the two, in [0, 1] (conlleval: FB1)
}

// newTally computes the fractions of a score line.
func newTally(gold, pred, correct int) Tally {
	t := Tally{Gold: gold, Predicted: pred, Correct: correct}
	if pred > 0 {
		t.Precision = float64(correct) / float64(pred)
	}
	if gold > 0 {
		t.Recall = float64(correct) / float64(gold)
	}
	if t.Precision+t.Recall > 0 {
		t.F1 = 2 * t.Precision * t.Recall / (t.Precision + t.Recall)
	}
	return t
}

// percentages returns t's precision, recall and F1 in percent, computed
// from the counts in the order conlleval's perl does, so that the printed
// roundings are conlleval's own.
func (t Tally) percentages() (precision, recall, f1 float64) {
	if t.Predicted > 0 {
		precision = float64(100*t.Correct) / float64(t.Predicted)
	}
	if t.Gold > 0 {
		recall = float64(100*t.Correct) / float64(t.Gold)
	}
	if precision+recall > 0 {
		f1 = 2 * precision * recall / (precision + recall)
	}
	return precision, recall, f1
}

// LabelScore is the token-level score of one label.
type LabelScore struct {
	Label string `json:"label"`
	Tally
}

// TypeScore is the chunk-level score of one chunk type.
type TypeScore struct {
	Type string `json:"type"`
	Tally
}

// ChunkScores are conlleval's chunk scores: phrases overall and per type.
type ChunkScores struct {
	Tally
	// Types lists every chunk type seen, sorted by type (byte order).
	// Overall, Correct ≤ min(Gold, Predicted) always. Per type it holds for
	// well-formed tags only: with odd ones (".", bare "B", an empty
	// prefix…) conlleval may credit a correct chunk to the type of the tag
	// that closed it, even "" after a sentence boundary, so a type can have
	// more correct than found, percentages over 100, or Gold = Predicted =
	// 0 (such a type is left out of conlleval's table, not out of Types).
	Types []TypeScore `json:"types"`
}

// Scores is the result of an evaluation.
type Scores struct {
	Scheme        string  `json:"scheme"` // the Scheme's name, or "none" with NoChunks
	Sentences     int     `json:"sentences"`
	Tokens        int     `json:"tokens"`
	CorrectTokens int     `json:"correct_tokens"`
	Accuracy      float64 `json:"accuracy"` // CorrectTokens / Tokens, in [0, 1]; 0 without tokens
	// Labels are token-level scores per label (whole tag strings), sorted.
	Labels []LabelScore `json:"labels"`
	// Chunks is nil when the evaluator was built with NoChunks, or with
	// AutoNoChunks when no label has a chunk prefix.
	Chunks *ChunkScores `json:"chunks,omitempty"`
	// Note says why chunks were not scored when AutoNoChunks left them
	// out (NoChunkPrefixNote); "" otherwise.
	Note string `json:"note,omitempty"`
	// Calibration is the reliability table of the predicted chunks'
	// confidence, with EvalOptions.Calibration; nil otherwise.
	Calibration *Calibration `json:"calibration,omitempty"`
}

// Result returns the scores so far. It does not change the evaluator:
// sentences may still be added. Like conlleval at the end of its input, it
// credits a chunk left open and correct (possible only with odd tags, as
// every sentence ends with a boundary).
func (e *Evaluator) Result() Scores {
	e.init()
	s := Scores{
		Scheme:        e.opts.Scheme.String(),
		Sentences:     e.sentences,
		Tokens:        e.tokens,
		CorrectTokens: e.correctTags,
		Labels:        e.labelScores(),
	}
	if e.calib != nil {
		s.Calibration = e.calib.result()
	}
	if e.tokens > 0 {
		s.Accuracy = float64(e.correctTags) / float64(e.tokens)
	}
	if e.opts.NoChunks {
		s.Scheme = "none"
		return s
	}
	if e.opts.AutoNoChunks && e.tokens > 0 && !e.anyChunkPrefix() {
		s.Scheme, s.Note = "none", NoChunkPrefixNote
		return s
	}
	s.Chunks = e.chunkScores()
	return s
}

// anyChunkPrefix reports whether a gold or predicted label seen has a
// chunk prefix.
func (e *Evaluator) anyChunkPrefix() bool {
	for l := range e.labels {
		if hasChunkPrefix(l) {
			return true
		}
	}
	return false
}

func (e *Evaluator) labelScores() []LabelScore {
	out := make([]LabelScore, 0, len(e.labels))
	for l, c := range e.labels {
		out = append(out, LabelScore{Label: l, Tally: newTally(c.gold, c.pred, c.correct)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Label < out[j].Label })
	return out
}

func (e *Evaluator) chunkScores() *ChunkScores {
	k := &e.chunks
	correct := k.correctChunk
	// conlleval, after its input loop: if ($inCorrect) { $correctChunk++; … }
	eofType, eofCredit := k.lastCorrect.typ, k.inCorrect
	if eofCredit {
		correct++
	}
	c := &ChunkScores{
		Tally: newTally(k.foundCorrect, k.foundGuessed, correct),
		Types: make([]TypeScore, 0, len(k.types)+1),
	}
	seen := false
	for typ, n := range k.types {
		cc := n.correct
		if eofCredit && typ == eofType {
			cc++
			seen = true
		}
		c.Types = append(c.Types, TypeScore{Type: typ, Tally: newTally(n.gold, n.pred, cc)})
	}
	if eofCredit && !seen {
		c.Types = append(c.Types, TypeScore{Type: eofType, Tally: newTally(0, 0, 1)})
	}
	sort.Slice(c.Types, func(i, j int) bool { return c.Types[i].Type < c.Types[j].Type })
	return c
}

// WriteConlleval writes the scores so far as conlleval prints them.
func (e *Evaluator) WriteConlleval(w io.Writer) error {
	s := e.Result()
	return s.WriteConlleval(w)
}

// WriteJSON writes the scores so far as indented JSON.
func (e *Evaluator) WriteJSON(w io.Writer) error {
	s := e.Result()
	return s.WriteJSON(w)
}

// WriteJSON writes s as indented JSON followed by a newline.
func (s *Scores) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return fmt.Errorf("write scores as JSON: %w", err)
	}
	return nil
}

// WriteConlleval writes s byte for byte as conlleval (without -l or -r)
// prints it:
//
//	processed 47377 tokens with 23852 phrases; found: 23766 phrases; correct: 22243.
//	accuracy:  96.05%; precision:  93.59%; recall:  93.25%; FB1:  93.42
//	             ADJP: precision:  79.06%; recall:  71.46%; FB1:  75.07  395
//
// The accuracy line is left out when there are no tokens, like conlleval
// does; a type line ends with the number of phrases found of that type.
// Types are padded to 17 bytes, as perl pads byte strings. Two conlleval
// quirks are kept: the empty type (tags without '-', such as "B") is listed
// twice when it is both in the gold and in the predictions, and a type
// credited but neither gold nor found is not listed. Without chunks
// (NoChunks) the report, which conlleval has no equivalent for, is
//
//	processed 47377 tokens.
//	accuracy:  96.05%
//
// followed, when AutoNoChunks left the chunks out, by "note: " and Note.
// With Calibration the reliability table follows (Calibration.Write).
func (s *Scores) WriteConlleval(w io.Writer) error {
	var b bytes.Buffer
	if s.Chunks == nil {
		fmt.Fprintf(&b, "processed %d tokens.\n", s.Tokens)
		if s.Tokens > 0 {
			fmt.Fprintf(&b, "accuracy: %6.2f%%\n", float64(100*s.CorrectTokens)/float64(s.Tokens))
		}
		if s.Note != "" {
			fmt.Fprintf(&b, "note: %s\n", s.Note)
		}
	} else {
		writeChunkReport(&b, s)
	}
	if s.Calibration != nil {
		s.Calibration.Write(&b)
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("write conlleval report: %w", err)
	}
	return nil
}

func writeChunkReport(b *bytes.Buffer, s *Scores) {
	c := s.Chunks
	fmt.Fprintf(b, "processed %d tokens with %d phrases; found: %d phrases; correct: %d.\n",
		s.Tokens, c.Gold, c.Predicted, c.Correct)
	if s.Tokens > 0 {
		p, r, f := c.percentages()
		fmt.Fprintf(b, "accuracy: %6.2f%%; precision: %6.2f%%; recall: %6.2f%%; FB1: %6.2f\n",
			float64(100*s.CorrectTokens)/float64(s.Tokens), p, r, f)
	}
	for _, t := range c.Types {
		if t.Gold == 0 && t.Predicted == 0 {
			continue // not a key of %foundCorrect or %foundGuessed
		}
		lines := 1
		if t.Type == "" && t.Gold > 0 && t.Predicted > 0 {
			// The script's de-duplication `not($lastType) or $lastType ne $i`
			// lets "" through twice, "" being false in perl.
			lines = 2
		}
		p, r, f := t.percentages()
		for range lines {
			pad := ""
			if len(t.Type) < 17 {
				pad = strings.Repeat(" ", 17-len(t.Type))
			}
			fmt.Fprintf(b, "%s%s: precision: %6.2f%%; recall: %6.2f%%; FB1: %6.2f  %d\n",
				pad, t.Type, p, r, f, t.Predicted)
		}
	}
}
