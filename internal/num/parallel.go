package num

import (
	"context"
	"runtime"
	"sync"
)

// parallelChunk is the number of consecutive indices a goroutine takes at a
// time: enough to amortise the hand-out, few enough to balance the load.
const parallelChunk = 64

// Parallel calls work(i) for every i in [0, n) on `workers` goroutines
// (GOMAXPROCS when workers ≤ 0). For each goroutine it first calls
// newWorker, on the caller's goroutine, and the goroutine then uses the
// function returned, so it keeps its own scratch space (a Lattice, buffers).
// Indices are handed out in chunks, in increasing order. Parallel returns
// ctx's error when ctx is cancelled before every index was done.
func Parallel(ctx context.Context, n, workers int, newWorker func() (work func(i int))) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, (n+parallelChunk-1)/parallelChunk))
	var mu sync.Mutex
	next := 0
	var wg sync.WaitGroup
	for k := 0; k < workers; k++ {
		work := newWorker()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				mu.Lock()
				lo := next
				next += parallelChunk
				mu.Unlock()
				if lo >= n {
					return
				}
				for i := lo; i < min(lo+parallelChunk, n); i++ {
					work(i)
				}
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}
