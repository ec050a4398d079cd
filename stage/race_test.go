//go:build race

package stage_test

// raceDetector is set under the race detector, which reports asynchronous
// SDCA steps (they race by design).
const raceDetector = true
