//go:build !amd64 || purego

package duals

// encode32Kernel is encode32Go: there is no vector kernel for this
// architecture.
func encode32Kernel(q []float32, mu []float64, K int) { encode32Go(q, mu, K) }

// decode32Kernel is decode32Go: there is no vector kernel for this
// architecture.
func decode32Kernel(mu []float64, q []float32, K int) { decode32Go(mu, q, K) }

// decode32MarginalsKernel is decode32MarginalsGo: there is no vector
// kernel for this architecture.
func decode32MarginalsKernel(mu []float64, q []float32, T, K int, node, sum []float64) {
	decode32MarginalsGo(mu, q, T, K, node, sum)
}
