//go:build !purego

package duals

// prefetch asks the processor to bring b's cache lines into its cache.
func prefetch(b []byte) {
	if len(b) > 0 {
		prefetchAsm(&b[0], len(b))
	}
}

// prefetchAsm issues prefetch's prefetches, n > 0.
//
//go:noescape
func prefetchAsm(p *byte, n int)
