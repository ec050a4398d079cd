package pipeline

import (
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/arrowio"
)

// TestResolveOutput: the extension decides the kind when no flag does, and
// a flag that contradicts the extension is refused (formerly, -o x.parquet
// without --format parquet wrote an Arrow stream under a .parquet name).
func TestResolveOutput(t *testing.T) {
	decode := []Kind{KindArrow, KindCoNLL, KindParquet}
	arrowOnly := []Kind{KindArrow}
	cases := []struct {
		name string
		req  OutputRequest
		want OutputFormat
		err  string
	}{
		{"parquet by extension", OutputRequest{Path: "p.parquet", Kinds: decode}, OutputFormat{Kind: KindParquet}, ""},
		{"PQ upper case", OutputRequest{Path: "p.PQ", Kinds: decode}, OutputFormat{Kind: KindParquet}, ""},
		{"conll by extension", OutputRequest{Path: "p.txt", Kinds: decode}, OutputFormat{Kind: KindCoNLL}, ""},
		{"arrow by extension", OutputRequest{Path: "p.arrow", Kinds: decode}, OutputFormat{Kind: KindArrow, IPC: arrowio.FormatStream}, ""},
		{"feather is a file", OutputRequest{Path: "p.feather", Kinds: arrowOnly}, OutputFormat{Kind: KindArrow, IPC: arrowio.FormatFile}, ""},
		{"arrows is a stream", OutputRequest{Path: "p.arrows", Kinds: arrowOnly}, OutputFormat{Kind: KindArrow, IPC: arrowio.FormatStream}, ""},
		{"unknown extension: default", OutputRequest{Path: "p.out", Kinds: decode}, OutputFormat{Kind: KindArrow, IPC: arrowio.FormatStream}, ""},
		{"standard output: default", OutputRequest{Path: "-", Kinds: decode}, OutputFormat{Kind: KindArrow, IPC: arrowio.FormatStream}, ""},
		{"flag agrees", OutputRequest{Path: "p.parquet", Kinds: decode, Kind: KindParquet, KindFlag: "--format"}, OutputFormat{Kind: KindParquet}, ""},
		{"flag on unknown extension", OutputRequest{Path: "p.bin", Kinds: decode, Kind: KindCoNLL, KindFlag: "--format"}, OutputFormat{Kind: KindCoNLL}, ""},
		{"ipc flag", OutputRequest{Path: "p.arrow", Kinds: arrowOnly, IPC: arrowio.FormatFile, IPCFlag: "--ipc"}, OutputFormat{Kind: KindArrow, IPC: arrowio.FormatFile}, ""},
		{"fixed ipc", OutputRequest{Path: "m.bin", Kinds: arrowOnly, IPC: arrowio.FormatFile}, OutputFormat{Kind: KindArrow, IPC: arrowio.FormatFile}, ""},
		{"flag contradicts extension", OutputRequest{Flag: "-o", Path: "p.parquet", Kinds: decode, Kind: KindArrow, KindFlag: "--format"}, OutputFormat{},
			"-o p.parquet names Parquet by its extension, but --format arrow asks for Arrow IPC: drop --format or rename the file"},
		{"text named by the stage", OutputRequest{Flag: "-o", Path: "x.parquet", Kinds: decode, Kind: KindCoNLL, KindFlag: "--format", TextName: "text"}, OutputFormat{},
			"-o x.parquet names Parquet by its extension, but --format text asks for text: drop --format or rename the file"},
		{"text by its extension", OutputRequest{Flag: "-o", Path: "x.txt", Kinds: decode, Kind: KindParquet, KindFlag: "--format", TextName: "text"}, OutputFormat{},
			"-o x.txt names text by its extension, but --format parquet asks for Parquet: drop --format or rename the file"},
		{"text is no CoNLL", OutputRequest{Flag: "-o", Path: "x.conll", Kinds: decode, TextName: "text"}, OutputFormat{},
			"-o x.conll names CoNLL text by its extension, but this stage writes text there, not CoNLL columns: name it .txt"},
		{"text to a .txt", OutputRequest{Flag: "-o", Path: "x.txt", Kinds: decode, TextName: "text"}, OutputFormat{Kind: KindCoNLL}, ""},
		{"stage cannot write it", OutputRequest{Flag: "-o", Path: "t.parquet", Kinds: arrowOnly}, OutputFormat{},
			"-o t.parquet names Parquet by its extension, but this stage writes Arrow IPC there"},
		{"text for an arrow-only stage", OutputRequest{Flag: "--log", Path: "log.txt", Kinds: arrowOnly}, OutputFormat{}, "writes Arrow IPC there"},
		{"ipc flag contradicts extension", OutputRequest{Flag: "-o", Path: "t.feather", Kinds: arrowOnly, IPC: arrowio.FormatStream, IPCFlag: "--ipc"}, OutputFormat{},
			"-o t.feather names an Arrow IPC file by its extension, but --ipc stream asks for an IPC stream"},
		{"fixed ipc contradicts extension", OutputRequest{Flag: "-o", Path: "m.arrows", Kinds: arrowOnly, IPC: arrowio.FormatFile}, OutputFormat{},
			"-o m.arrows names an Arrow IPC stream by its extension, but this stage writes an IPC file there"},
	}
	for _, c := range cases {
		got, err := ResolveOutput(c.req)
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("%s: %+v, %v; want %+v", c.name, got, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want %q", c.name, err, c.err)
		}
	}
}
