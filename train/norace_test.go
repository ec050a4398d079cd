//go:build !race

package train

// raceDetector is set when the tests run under the race detector, which
// reports the asynchronous steps' reads and adds (they race by design).
const raceDetector = false
