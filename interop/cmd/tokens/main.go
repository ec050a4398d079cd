// Command tokens writes a CoNLL-2000 corpus as a token table, for the lake
// round trip and the featurize measurements in docs/lake.md:
//
//	go run ./cmd/tokens -repeat 20 -o train20.parquet train.txt.gz
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/interop"
)

func main() {
	out := flag.String("o", "", "output file (.parquet: Parquet, else an Arrow IPC stream)")
	repeat := flag.Int("repeat", 1, "write the corpus this many times over")
	flag.Parse()
	if flag.NArg() != 1 || *out == "" || *repeat < 1 {
		fmt.Fprintln(os.Stderr, "usage: tokens [-repeat N] -o OUT CONLL")
		os.Exit(2)
	}
	format := arrowio.FormatStream
	if len(*out) > 8 && (*out)[len(*out)-8:] == ".parquet" {
		format = arrowio.FormatParquet
	}
	f, err := os.Create(*out)
	if err == nil {
		var n int
		n, err = interop.WriteTokens(flag.Arg(0), f, format, *repeat)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		fmt.Fprintf(os.Stderr, "tokens: %d tokens -> %s\n", n, *out)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tokens:", err)
		os.Exit(1)
	}
}
