// Command memprofile trains like `dualcrf train` (SDCA or L-BFGS) and writes
// a heap profile taken when the Go heap in use was largest, with the peak
// figures of runtime.MemStats: what holds a training run's memory. From
// experiments/:
//
//	go run ./memprofile -o heap.pprof [-lbfgs -observed] [-max-epochs N] FEATURES
//	go run ./memprofile -estimate [-lbfgs -observed] FEATURES
//	go tool pprof -top -sample_index=inuse_space heap.pprof
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/dualcrf/dualcrf/stage"
	"github.com/dualcrf/dualcrf/train"
)

func main() {
	out := flag.String("o", "heap.pprof", "heap profile to write")
	lbfgs := flag.Bool("lbfgs", false, "L-BFGS with --no-bias --lambda 2/n")
	observed := flag.Bool("observed", false, "observed feature space and transitions")
	epochs := flag.Int("max-epochs", 3, "epochs")
	estimate := flag.Bool("estimate", false, "print train.EstimateMemory for the run and exit")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: memprofile [flags] FEATURES")
		os.Exit(2)
	}
	if *estimate {
		if err := printEstimate(flag.Arg(0), *lbfgs, *observed); err != nil {
			fmt.Fprintln(os.Stderr, "memprofile:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(flag.Arg(0), *out, *lbfgs, *observed, *epochs); err != nil {
		fmt.Fprintln(os.Stderr, "memprofile:", err)
		os.Exit(1)
	}
}

// printEstimate prints the up-front estimate of the run, as the train
// stage makes it (duals in memory).
func printEstimate(path string, lbfgs, observed bool) error {
	t, err := stage.ReadFeatureTable(context.Background(), stage.File(path), true)
	if err != nil {
		return err
	}
	p, err := train.NewProblem(t.Data, 1, lbfgs)
	if err != nil {
		return err
	}
	if observed {
		p.ObserveFeatures() // as the train stage holds them: sparse where fewer than half the pairs are free
		p.TransMask = train.ObservedTransitions(t.Data)
	}
	o := train.MemoryOptions{Method: &train.SDCA{}, DualsInMemory: true}
	if lbfgs {
		o = train.MemoryOptions{Method: &train.LBFGS{}}
	}
	e := train.EstimateMemory(p, o)
	fmt.Printf("estimate %d KiB (%.3g GiB): %s\n", e.Total()>>10, float64(e.Total())/(1<<30), e)
	return nil
}

func run(path, out string, lbfgs, observed bool, epochs int) error {
	runtime.MemProfileRate = 64 << 10
	var (
		mu   sync.Mutex
		peak runtime.MemStats
		prof []byte
	)
	sample := func() {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		mu.Lock()
		defer mu.Unlock()
		if ms.HeapInuse > peak.HeapInuse {
			peak = ms
			f, err := os.CreateTemp("", "memprofile")
			if err == nil {
				pprof.Lookup("heap").WriteTo(f, 0)
				f.Close()
				prof, _ = os.ReadFile(f.Name())
				os.Remove(f.Name())
			}
		}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				sample()
			}
		}
	}()
	t, err := stage.ReadFeatureTable(context.Background(), stage.File(path), true)
	if err != nil {
		return err
	}
	o := stage.TrainOptions{MaxEpochs: epochs, GapEvery: 1, Quiet: true, Log: os.Stderr}
	if lbfgs {
		o.Method, o.NoBias, o.Lambda = &train.LBFGS{}, true, stage.LambdaPerSentence(2)
	}
	if observed {
		o.FeatureSpace, o.Transitions = stage.ObservedPairs, stage.ObservedPairs
	}
	if _, err := stage.Train(context.Background(), t, path, o); err != nil {
		return err
	}
	close(done)
	sample()
	fmt.Fprintf(os.Stderr, "peak: HeapInuse %d MB, HeapSys %d MB, Sys %d MB\n", peak.HeapInuse>>20, peak.HeapSys>>20, peak.Sys>>20)
	return os.WriteFile(out, prof, 0o644)
}
