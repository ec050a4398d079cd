// Command crfsuite-objective evaluates dualcrf's elastic-net objective at
// the weights of a CRFsuite model, so that a CRFsuite run and a dualcrf run
// on the same attribute file can be compared on one objective (from
// experiments/):
//
//	crfsuite dump cs.model > cs.dump
//	go run ./crfsuite-objective -lambda 0.2/n -l1 0.1/n train.arrow cs.dump
//
// train.arrow is the attribute file read by dualcrf featurize --input-format
// crfsuite; cs.dump is `crfsuite dump` of a model CRFsuite trained on that
// file (its weights are printed to six decimals). It prints
//
//	P = (1/n) Σ_i −log p(y_i | x_i; w) + (λ/2)‖w‖² + λ₁‖w‖₁
//
// at those weights, n·P (CRFsuite's own objective, its "Loss" with c1 =
// n·λ₁ and c2 = n·λ/2), the number of non-zero weights, and the labels and
// attributes of the dump it could not find in the table (which must be
// none for the two objectives to be one). CRFsuite has no bias, start or
// end weights: the weights are dualcrf's layout without them.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/tables"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "crfsuite-objective:", err)
		os.Exit(1)
	}
}

// run parses the arguments and prints the objective.
func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("crfsuite-objective", flag.ContinueOnError)
	lambdaArg := fs.String("lambda", "1/n", "λ: a number or c/n")
	l1Arg := fs.String("l1", "0", "λ₁: a number or c/n")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return fmt.Errorf("want a feature table and a crfsuite dump, got %d arguments", fs.NArg())
	}
	rc, name, err := pipeline.OpenInput(fs.Arg(0))
	if err != nil {
		return err
	}
	t, err := tables.ReadFeatureTable(rc, name, tables.FeatureReadOptions{SkipText: true})
	rc.Close()
	if err != nil {
		return err
	}
	d := t.Data
	n := d.Len()
	lambda, err := perN(*lambdaArg, n)
	if err != nil {
		return fmt.Errorf("-lambda: %w", err)
	}
	l1, err := perN(*l1Arg, n)
	if err != nil {
		return fmt.Errorf("-l1: %w", err)
	}
	lay := crf.Layout{NumAttrs: d.NumAttrs, NumLabels: d.NumLabels, NoBias: true}
	f, err := os.Open(fs.Arg(1))
	if err != nil {
		return err
	}
	defer f.Close()
	w, missing, err := readDump(f, fs.Arg(1), d, lay)
	if err != nil {
		return err
	}
	lat := crf.NewLattice(lay.NumLabels)
	loss := 0.0
	for i := range n {
		s := d.Sentence(i)
		lat.SetScores(lay, w, s)
		loss += lat.ForwardBackward() - lat.Score(s.Labels)
	}
	sq, abs, nnz := 0.0, 0.0, 0
	for _, x := range w {
		sq += x * x
		abs += math.Abs(x)
		if x != 0 {
			nnz++
		}
	}
	p := loss/float64(n) + lambda/2*sq + l1*abs
	fmt.Fprintf(stdout, "P %.15g\nnP %.6f\nnonzero %d\nunknown %d\n", p, float64(n)*p, nnz, len(missing))
	for _, m := range missing[:min(len(missing), 10)] {
		fmt.Fprintf(stdout, "  %s\n", m)
	}
	return nil
}

// perN reads a number or c/n for n sentences.
func perN(s string, n int) (float64, error) {
	c, isPerN := strings.CutSuffix(s, "/n")
	v, err := strconv.ParseFloat(c, 64)
	if err != nil {
		return 0, fmt.Errorf("%q: want a number or c/n", s)
	}
	if isPerN {
		v /= float64(n)
	}
	return v, nil
}

// readDump reads the TRANSITIONS and STATE_FEATURES of a crfsuite dump into
// a weight vector of layout lay over d's attributes and labels; it returns
// the features whose attribute or labels d lacks.
func readDump(r io.Reader, name string, d *crf.Dataset, lay crf.Layout) ([]float64, []string, error) {
	K := lay.NumLabels
	label := make(map[string]int, K)
	for y, l := range d.LabelNames {
		label[l] = y
	}
	attr := make(map[string]int, d.NumAttrs)
	for a, s := range d.AttrNames {
		attr[s] = a
	}
	w := make([]float64, lay.Dim())
	var missing []string
	section := ""
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if strings.HasSuffix(text, " = {") {
			section = strings.TrimSuffix(text, " = {")
			continue
		}
		if section != "TRANSITIONS" && section != "STATE_FEATURES" || !strings.HasPrefix(text, "  (") {
			continue
		}
		// "  (type) FROM --> TO: weight"; FROM may hold ": " and " --> ".
		_, rest, _ := strings.Cut(text, ") ")
		arrow := strings.LastIndex(rest, " --> ")
		colon := strings.LastIndex(rest, ": ")
		if arrow < 0 || colon < arrow {
			return nil, nil, fmt.Errorf("%s:%d: want (type) from --> to: weight", name, line)
		}
		from, to := rest[:arrow], rest[arrow+5:colon]
		v, err := strconv.ParseFloat(rest[colon+2:], 64)
		if err != nil {
			return nil, nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		y, ok := label[to]
		var j int
		if section == "TRANSITIONS" {
			y0, ok0 := label[from]
			ok = ok && ok0
			j = lay.Trans() + y0*K + y
		} else {
			a, okA := attr[from]
			ok = ok && okA
			j = lay.Row(int32(a)) + y
		}
		if !ok {
			missing = append(missing, from+" --> "+to)
			continue
		}
		w[j] = v
	}
	return w, missing, sc.Err()
}
