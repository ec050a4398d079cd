package decode

import (
	"fmt"
	"io"
	"math"
)

// CalibrationBins is the number of equal-width confidence bins of a
// reliability table.
const CalibrationBins = 10

// CalibrationBin is one row of a reliability table: the predicted chunks
// whose confidence falls in [Lo, Hi) (the last bin includes 1).
type CalibrationBin struct {
	Lo       float64 `json:"lo"`
	Hi       float64 `json:"hi"`
	Chunks   int     `json:"chunks"`    // predicted chunks in the bin
	Correct  int     `json:"correct"`   // of them, chunks of the gold labelling (span and type)
	MeanConf float64 `json:"mean_conf"` // their mean confidence; 0 when empty
}

// Precision is the fraction of the bin's chunks that are correct; NaN when
// the bin is empty.
func (b CalibrationBin) Precision() float64 {
	if b.Chunks == 0 {
		return math.NaN()
	}
	return float64(b.Correct) / float64(b.Chunks)
}

// Calibration is a reliability table of predicted chunk confidence: how
// often the chunks predicted with a confidence near c are right, for c in
// bins of width 1/CalibrationBins. A well-calibrated decoder has
// precision ≈ confidence in every bin; ECE (expected calibration error) is
// Σ_bins (chunks/total)·|precision − mean confidence|.
type Calibration struct {
	Bins     []CalibrationBin `json:"bins"`
	Chunks   int              `json:"chunks"`    // predicted chunks
	Correct  int              `json:"correct"`   // of them, correct
	MeanConf float64          `json:"mean_conf"` // mean confidence of all predicted chunks
	ECE      float64          `json:"ece"`
	sum      []float64        // per bin, the sum of confidences
}

// calibrator accumulates a Calibration.
type calibrator struct {
	scheme Scheme
	c      Calibration
	gold   map[span]bool
}

// span is a chunk: first and last token and type.
type span struct {
	s, e int
	typ  string
}

func newCalibrator(s Scheme) *calibrator {
	k := &calibrator{scheme: s, gold: map[span]bool{}}
	k.c.sum = make([]float64, CalibrationBins)
	k.c.Bins = make([]CalibrationBin, CalibrationBins)
	for i := range k.c.Bins {
		k.c.Bins[i].Lo, k.c.Bins[i].Hi = float64(i)/CalibrationBins, float64(i+1)/CalibrationBins
	}
	return k
}

// spans returns the chunks of a tag sequence read by scheme s's rules, as
// eval's chunker reads them: a chunk starts where the start rule holds and
// goes on while the tags keep its type and neither a chunk ends nor a new
// one starts; the sentence's end ends it.
func spans(labels []string, s Scheme) []span {
	start, end := startOfChunk, endOfChunk
	if s != SchemeConlleval {
		start, end = startOfChunkIOBES, endOfChunkIOBES
	}
	var out []span
	prev := outside
	var open *span
	for i, l := range labels {
		cur := splitTag(l)
		if open != nil && (cur.typ != open.typ || end(prev, cur) || start(prev, cur)) {
			out = append(out, *open)
			open = nil
		}
		if start(prev, cur) {
			open = &span{s: i, e: i, typ: cur.typ}
		} else if open != nil {
			open.e = i
		}
		prev = cur
	}
	if open != nil {
		out = append(out, *open)
	}
	return out
}

// check reports a predicted chunk of sentence n without a confidence.
func (k *calibrator) check(n int, pred []string, conf []float64) error {
	for _, c := range spans(pred, k.scheme) {
		if math.IsNaN(conf[c.s]) {
			return fmt.Errorf("sentence %d, token %d: predicted chunk %s has no chunk confidence (decode it with --chunk-confidence and the same --scheme)", n, c.s+1, c.typ)
		}
	}
	return nil
}

// add counts the predicted chunks of one sentence, conf[t] being the
// confidence of the chunk token t is in (checked by check).
func (k *calibrator) add(gold, pred []string, conf []float64) {
	clear(k.gold)
	for _, c := range spans(gold, k.scheme) {
		k.gold[c] = true
	}
	for _, c := range spans(pred, k.scheme) {
		p := conf[c.s]
		b := min(int(p*CalibrationBins), CalibrationBins-1)
		k.c.Bins[b].Chunks++
		k.c.sum[b] += p
		k.c.Chunks++
		k.c.MeanConf += p
		if k.gold[c] {
			k.c.Bins[b].Correct++
			k.c.Correct++
		}
	}
}

// result returns the table with its means and ECE.
func (k *calibrator) result() *Calibration {
	c := k.c
	c.Bins = append([]CalibrationBin(nil), c.Bins...)
	c.ECE = 0
	for i := range c.Bins {
		b := &c.Bins[i]
		if b.Chunks > 0 {
			b.MeanConf = c.sum[i] / float64(b.Chunks)
			c.ECE += float64(b.Chunks) / float64(c.Chunks) * math.Abs(b.Precision()-b.MeanConf)
		}
	}
	if c.Chunks > 0 {
		c.MeanConf /= float64(c.Chunks)
	}
	return &c
}

// Write prints the reliability table; without predicted chunks, a line
// saying there are none to calibrate.
func (c *Calibration) Write(w io.Writer) error {
	if c.Chunks == 0 {
		_, err := fmt.Fprintln(w, "chunk confidence calibration: no predicted chunks to calibrate")
		return err
	}
	fmt.Fprintf(w, "chunk confidence calibration: %d predicted chunks, %d correct (precision %.2f%%), mean confidence %.2f%%, ECE %.4f\n",
		c.Chunks, c.Correct, 100*frac(c.Correct, c.Chunks), 100*c.MeanConf, c.ECE)
	fmt.Fprintf(w, "%13s %8s %8s %10s %10s\n", "confidence", "chunks", "correct", "mean conf", "precision")
	for _, b := range c.Bins {
		fmt.Fprintf(w, "  [%.1f, %.1f%s %8d %8d", b.Lo, b.Hi, map[bool]string{true: "]", false: ")"}[b.Hi == 1], b.Chunks, b.Correct)
		if b.Chunks == 0 {
			fmt.Fprintf(w, " %10s %10s\n", "-", "-")
			continue
		}
		if _, err := fmt.Fprintf(w, " %9.2f%% %9.2f%%\n", 100*b.MeanConf, 100*b.Precision()); err != nil {
			return err
		}
	}
	return nil
}

func frac(a, b int) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}
