package main

import (
	"os"
	"testing"

	"github.com/dualcrf/dualcrf/internal/datatest"
)

// TestMain says, in one line, how many corpus tests were skipped for want
// of the corpora (see datatest.Main).
func TestMain(m *testing.M) { os.Exit(datatest.Main(m)) }
