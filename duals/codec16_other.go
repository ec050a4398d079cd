//go:build !amd64 || purego

package duals

// encode16Kernel is encode16Go: there is no vector kernel for this
// architecture.
func encode16Kernel(q []uint16, mu []float64, K int) { encode16Go(q, mu, K) }

// decode16Kernel is decode16Go: there is no vector kernel for this
// architecture.
func decode16Kernel(mu []float64, q []uint16, K int) { decode16Go(mu, q, K) }

// decode16MarginalsKernel is decode16MarginalsGo: there is no vector
// kernel for this architecture.
func decode16MarginalsKernel(mu []float64, q []uint16, T, K int, node, sum []float64) {
	decode16MarginalsGo(mu, q, T, K, node, sum)
}
