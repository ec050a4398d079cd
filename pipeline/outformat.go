package pipeline

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dualcrf/dualcrf/arrowio"
)

// Kind is what an output file holds.
type Kind string

// The output kinds. Arrow and Parquet are binary.
const (
	KindArrow   Kind = "arrow"   // Arrow IPC, stream or file format
	KindParquet Kind = "parquet" // Parquet
	KindCoNLL   Kind = "conll"   // CoNLL columns (text)
	// KindCRFsuite is CRFsuite's attribute lines (text), the input of
	// crfsuite tag and learn.
	KindCRFsuite Kind = "crfsuite"
)

// binary reports whether k is unreadable on a terminal.
func (k Kind) binary() bool { return k == KindArrow || k == KindParquet }

// describe names k in messages.
func (k Kind) describe() string {
	switch k {
	case KindArrow:
		return "Arrow IPC"
	case KindParquet:
		return "Parquet"
	case KindCoNLL:
		return "CoNLL text"
	case KindCRFsuite:
		return "CRFsuite attribute text"
	}
	return string(k)
}

// kindOfName tells an output's kind, and for Arrow its IPC format when the
// name says it, from the file name's extension:
//
//	.parquet, .pq          Parquet
//	.arrow, .ipc           Arrow IPC (either format)
//	.arrows                Arrow IPC stream
//	.feather               Arrow IPC file (Feather version 2)
//	.conll, .txt           CoNLL text (.txt: any text kind asked for)
//
// Other names tell nothing ("", "").
func kindOfName(path string) (Kind, arrowio.Format) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".parquet", ".pq":
		return KindParquet, ""
	case ".arrow", ".ipc":
		return KindArrow, ""
	case ".arrows":
		return KindArrow, arrowio.FormatStream
	case ".feather":
		return KindArrow, arrowio.FormatFile
	case ".conll", ".txt":
		return KindCoNLL, ""
	}
	return "", ""
}

// OutputRequest describes an output a stage is about to write.
type OutputRequest struct {
	Flag      string // the flag naming the output, e.g. "-o"
	Path      string // "" or "-" = standard output
	PathGiven bool   // Path was given explicitly: "-o -" forces binary output to a terminal

	Kinds    []Kind // what the stage can write there; the first is its default
	Kind     Kind   // asked for with KindFlag; "" = from the extension, else Kinds[0]
	KindFlag string // e.g. "--format"
	// TextName, when set, is what the stage's text output (KindCoNLL) is,
	// as KindFlag's value and in messages: explain writes text for people
	// ("text"), not CoNLL columns, so -o x.txt names that text and
	// -o x.conll is refused. "": CoNLL text.
	TextName string

	IPC     arrowio.Format // Arrow IPC format asked for with IPCFlag, or fixed by the stage when IPCFlag is ""; "" = from the extension, else stream
	IPCFlag string         // e.g. "--ipc"
}

// OutputFormat is what ResolveOutput decides.
type OutputFormat struct {
	Kind Kind
	IPC  arrowio.Format // for KindArrow: arrowio.FormatStream or arrowio.FormatFile
}

// ResolveOutput decides what an output holds, so that a file's name never
// lies about its content: the kind and IPC format asked for, else those its
// extension names (see kindOfName), else the stage's default. It refuses an
// extension that contradicts the flags (-o x.parquet --format arrow), a kind
// the stage cannot write there, and binary output (Arrow, Parquet) to a
// terminal unless the path was given explicitly as "-".
func ResolveOutput(r OutputRequest) (OutputFormat, error) { return Std{}.ResolveOutput(r) }

// ResolveOutput is the package's ResolveOutput with s.Out as standard
// output.
func (s Std) ResolveOutput(r OutputRequest) (OutputFormat, error) {
	if len(r.Kinds) == 0 {
		return OutputFormat{}, fmt.Errorf("%s: no output kind", r.Flag)
	}
	extKind, extIPC := Kind(""), arrowio.Format("")
	if !isStd(r.Path) {
		extKind, extIPC = kindOfName(r.Path)
	}
	out := OutputFormat{Kind: r.Kinds[0]}
	describe := func(k Kind) string {
		if k == KindCoNLL && r.TextName != "" {
			return r.TextName
		}
		return k.describe()
	}
	if r.TextName != "" && !isStd(r.Path) && strings.EqualFold(filepath.Ext(r.Path), ".conll") {
		return out, fmt.Errorf("%s %s names CoNLL text by its extension, but this stage writes %s there, not CoNLL columns: name it .txt",
			r.Flag, r.Path, r.TextName)
	}
	switch {
	case r.Kind != "":
		if extKind != "" && extKind != r.Kind && !(strings.EqualFold(filepath.Ext(r.Path), ".txt") && !r.Kind.binary()) {
			asked := string(r.Kind)
			if r.Kind == KindCoNLL && r.TextName != "" {
				asked = r.TextName
			}
			return out, fmt.Errorf("%s %s names %s by its extension, but %s %s asks for %s: drop %s or rename the file",
				r.Flag, r.Path, describe(extKind), r.KindFlag, asked, describe(r.Kind), r.KindFlag)
		}
		out.Kind = r.Kind
	case extKind != "":
		out.Kind = extKind
	}
	if !slices.Contains(r.Kinds, out.Kind) {
		var can []string
		for _, k := range r.Kinds {
			can = append(can, describe(k))
		}
		return out, fmt.Errorf("%s %s names %s by its extension, but this stage writes %s there",
			r.Flag, r.Path, describe(out.Kind), strings.Join(can, " or "))
	}
	if out.Kind == KindArrow {
		var err error
		if out.IPC, err = resolveIPC(r, extIPC); err != nil {
			return out, err
		}
	}
	if out.Kind.binary() && isStd(r.Path) && !r.PathGiven && s.stdoutIsTerminal() {
		return out, fmt.Errorf("refusing to write binary %s to a terminal: redirect standard output (> FILE, | next stage), name a file with %s FILE, or give %s - to force it",
			out.Kind.describe(), r.Flag, r.Flag)
	}
	return out, nil
}

// resolveIPC decides the Arrow IPC format of an Arrow output.
func resolveIPC(r OutputRequest, extIPC arrowio.Format) (arrowio.Format, error) {
	if r.IPC == "" {
		if extIPC != "" {
			return extIPC, nil
		}
		return arrowio.FormatStream, nil
	}
	if extIPC != "" && extIPC != r.IPC {
		if r.IPCFlag == "" {
			return "", fmt.Errorf("%s %s names an Arrow IPC %s by its extension, but this stage writes an IPC %s there (name it .arrow)",
				r.Flag, r.Path, extIPC, r.IPC)
		}
		return "", fmt.Errorf("%s %s names an Arrow IPC %s by its extension, but %s %s asks for an IPC %s: drop %s or rename the file",
			r.Flag, r.Path, extIPC, r.IPCFlag, r.IPC, r.IPC, r.IPCFlag)
	}
	return r.IPC, nil
}
