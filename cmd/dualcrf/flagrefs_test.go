package main

// Every flag a message names exists: the strings of the command and of
// the packages whose errors it prints are searched for --flag, and each
// must be a flag (or alias) of some command.

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// flagRef is a --flag in a string literal.
var flagRef = regexp.MustCompile(`(^|[^A-Za-z0-9_-])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)`)

// TestMessagesNameRealFlags: every --flag in a string of cmd/dualcrf,
// stage, train, featurize, decode, pipeline and job (messages, usage, help)
// is a flag of some dualcrf command (formerly: --duals-blocks, which does
// not exist, among others).
func TestMessagesNameRealFlags(t *testing.T) {
	flags := map[string]bool{"help": true, "version": true}
	var walk func(cmds []*cli.Command)
	add := func(fs []cli.Flag) {
		for _, f := range fs {
			for _, n := range f.Names() {
				flags[n] = true
			}
		}
	}
	walk = func(cmds []*cli.Command) {
		for _, c := range cmds {
			add(c.Flags)
			walk(c.Subcommands)
		}
	}
	app := newApp(strings.NewReader(""), io.Discard, io.Discard)
	add(app.Flags)
	walk(app.Commands)

	var bad []string
	for _, dir := range []string{".", "../../stage", "../../train", "../../featurize", "../../decode", "../../pipeline", "../../job"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, src, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					return true
				}
				for _, m := range flagRef.FindAllStringSubmatch(s, -1) {
					if !flags[m[2]] {
						bad = append(bad, fmt.Sprintf("%s: --%s", fset.Position(lit.Pos()), m[2]))
					}
				}
				return true
			})
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		t.Errorf("messages name flags no command has:\n%s", strings.Join(bad, "\n"))
	}
}
