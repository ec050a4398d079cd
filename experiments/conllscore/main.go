// Command conllscore scores labelled text the way `dualcrf eval` scores a
// prediction table: the same evaluator (conlleval's chunk rules by default),
// the same report. It reads whitespace-separated columns, one token a line and
// a blank line between sentences, and takes the gold label from the
// second-to-last column and the prediction from the last — the layout of
// conlleval's input, of CRF++'s crf_test and of Wapiti's label --check output.
// It lets other CRF tools' outputs be scored exactly as dualcrf's are (from
// experiments/, or build it once: go build -o conllscore ./conllscore):
//
//	crf_test -m model test.txt | go run ./conllscore
//	go run ./conllscore -json predictions.txt
//
// With no argument or "-" it reads standard input; gzip or zstd is read
// transparently.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/dualcrf/dualcrf/decode"
	"github.com/dualcrf/dualcrf/pipeline"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "conllscore:", err)
		os.Exit(1)
	}
}

// run parses the arguments, scores the input and writes the report.
func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("conllscore", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "write the scores as JSON, as dualcrf eval --json does")
	scheme := fs.String("scheme", "conlleval", "chunk rules: conlleval, auto, iob1, iob2, iobes")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return fmt.Errorf("want one file (or -), got %d", fs.NArg())
	}
	sch, err := decode.ParseScheme(*scheme)
	if err != nil {
		return err
	}
	rc, name, err := pipeline.OpenInput(fs.Arg(0))
	if err != nil {
		return err
	}
	defer rc.Close()
	ev := decode.NewEvaluator(decode.EvalOptions{Scheme: sch})
	if err := score(rc, name, ev); err != nil {
		return err
	}
	if *asJSON {
		return ev.WriteJSON(stdout)
	}
	return ev.WriteConlleval(stdout)
}

// score adds every sentence of r to ev. A token line needs at least two
// columns; its errors name the file and line.
func score(r io.Reader, name string, ev *decode.Evaluator) error {
	var gold, pred []string
	flush := func(line int) error {
		if len(gold) == 0 {
			return nil
		}
		if err := ev.Add(gold, pred); err != nil {
			return fmt.Errorf("%s:%d: %w", name, line, err)
		}
		gold, pred = gold[:0], pred[:0]
		return nil
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<24)
	line := 0
	for sc.Scan() {
		line++
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			if err := flush(line); err != nil {
				return err
			}
			continue
		}
		if len(f) < 2 {
			return fmt.Errorf("%s:%d: want at least two columns (gold, predicted), got %d", name, line, len(f))
		}
		gold = append(gold, f[len(f)-2])
		pred = append(pred, f[len(f)-1])
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	if err := flush(line); err != nil {
		return err
	}
	if line == 0 {
		return fmt.Errorf("%s: empty input: nothing to score", name)
	}
	return nil
}
