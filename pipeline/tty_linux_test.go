package pipeline

import (
	"os"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/internal/platform"
	"github.com/dualcrf/dualcrf/internal/ptytest"
)

// TestBinaryToTerminal: binary output to a terminal is refused unless "-"
// was given explicitly; text is not (formerly 7.4 MB of Arrow went to the
// terminal without a word).
func TestBinaryToTerminal(t *testing.T) {
	_, tty := ptytest.Open(t)
	if !platform.IsTerminal(tty) {
		t.Fatal("a pseudo-terminal is not a terminal")
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if platform.IsTerminal(null) {
		t.Fatal("/dev/null is a terminal")
	}
	old := os.Stdout
	os.Stdout = tty
	defer func() { os.Stdout = old }()
	kinds := []Kind{KindArrow, KindCoNLL, KindParquet}
	_, err = ResolveOutput(OutputRequest{Flag: "-o", Path: "-", Kinds: kinds})
	if err == nil || !strings.Contains(err.Error(), "refusing to write binary Arrow IPC to a terminal") {
		t.Errorf("default output on a terminal: %v", err)
	}
	if _, err := ResolveOutput(OutputRequest{Flag: "-o", Path: "-", Kinds: kinds, Kind: KindParquet, KindFlag: "--format"}); err == nil {
		t.Error("Parquet to a terminal accepted")
	}
	if _, err := ResolveOutput(OutputRequest{Flag: "-o", Path: "-", PathGiven: true, Kinds: kinds}); err != nil {
		t.Errorf("explicit -o -: %v", err)
	}
	if _, err := ResolveOutput(OutputRequest{Flag: "-o", Path: "-", Kinds: kinds, Kind: KindCoNLL, KindFlag: "--format"}); err != nil {
		t.Errorf("text to a terminal: %v", err)
	}
	if _, err := ResolveOutput(OutputRequest{Flag: "-o", Path: "x.arrow", Kinds: kinds}); err != nil {
		t.Errorf("file output while stdout is a terminal: %v", err)
	}
	os.Stdout = null
	if _, err := ResolveOutput(OutputRequest{Flag: "-o", Path: "-", Kinds: kinds}); err != nil {
		t.Errorf("binary to /dev/null: %v", err)
	}
}
