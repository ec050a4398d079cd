// Command dualcrf trains linear-chain CRFs with SDCA-GAP and runs as
// Unix-pipeline stages over Arrow tables: featurize, train, decode, eval.
// Run `dualcrf --help` for the stages.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/dualcrf/dualcrf/pipeline"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newApp(os.Stdout, os.Stderr).RunContext(ctx, os.Args)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// exitCode reports err on stderr and returns the process exit status: 0 on
// success or when a downstream reader closed the pipe, 130 on interrupt, 1
// otherwise.
func exitCode(err error, stderr io.Writer) int {
	switch {
	case err == nil:
		return 0
	case pipeline.IsBrokenPipe(err):
		return 0
	case err == context.Canceled:
		fmt.Fprintln(stderr, "dualcrf: interrupted")
		return 130
	}
	fmt.Fprintln(stderr, "dualcrf:", err)
	return 1
}
