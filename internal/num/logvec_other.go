//go:build !amd64 || purego

package num

// LogVec sets dst[i] = log src[i] for every src[i] that is a positive,
// finite, normal number, entry by entry with Log (there is no vector
// kernel for this architecture); for other entries dst[i] is unspecified.
func LogVec(dst, src []float64) { logVecGo(dst, src) }
