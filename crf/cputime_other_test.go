//go:build !unix

package crf_test

import "time"

// cpuTime is not measured on this system: 0.
func cpuTime() time.Duration { return 0 }
