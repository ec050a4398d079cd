package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// modulePath is the core module's import path.
const modulePath = "github.com/dualcrf/dualcrf"

// TestArchitectureImports holds docs/ARCHITECTURE.md's table of who imports
// whom to the code: every package of the core module has a row (alone or
// with others in one row), and each row names exactly the module's packages
// that the row's packages import (non-test files, any platform). Entries of
// a row that are not the module's packages (Arrow, gonum, the standard
// library) are read as prose and not checked.
func TestArchitectureImports(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	pkgs := corePackages(t, root)
	rows := importsTable(t, string(doc))
	documented := map[string]bool{}
	for _, row := range rows {
		var want []string
		for _, p := range row.imports {
			if slices.Contains(pkgs, p) {
				want = append(want, p)
			}
		}
		slices.Sort(want)
		for _, p := range row.packages {
			if !slices.Contains(pkgs, p) {
				t.Errorf("docs/ARCHITECTURE.md: row %q: no package %s in the module", row.line, p)
				continue
			}
			documented[p] = true
			got := projectImports(t, root, p)
			if len(row.packages) > 1 {
				// A shared row lists the union; each package imports a subset.
				for _, g := range got {
					if !slices.Contains(want, g) {
						t.Errorf("docs/ARCHITECTURE.md: %s imports %s, not in its row %q", p, g, row.line)
					}
				}
				continue
			}
			if !slices.Equal(got, want) {
				t.Errorf("docs/ARCHITECTURE.md: %s imports %v; its row says %v", p, got, want)
			}
		}
	}
	for _, p := range pkgs {
		if !documented[p] {
			t.Errorf("docs/ARCHITECTURE.md: package %s has no row in the imports table", p)
		}
	}
}

// importsRow is one row of the imports table: the packages of its first
// cell and the entries of its second.
type importsRow struct {
	line     string
	packages []string
	imports  []string
}

// importsTable reads the table whose header is "| package | imports |".
func importsTable(t *testing.T, doc string) []importsRow {
	var rows []importsRow
	in := false
	for _, l := range strings.Split(doc, "\n") {
		cells := strings.Split(strings.Trim(strings.TrimSpace(l), "|"), "|")
		switch {
		case !in && len(cells) == 2 && strings.TrimSpace(cells[0]) == "package" && strings.TrimSpace(cells[1]) == "imports":
			in = true
		case in && strings.HasPrefix(strings.TrimSpace(l), "|---"):
		case in && strings.HasPrefix(strings.TrimSpace(l), "|") && len(cells) == 2:
			row := importsRow{line: strings.TrimSpace(l)}
			for _, p := range strings.Split(cells[0], ",") {
				row.packages = append(row.packages, strings.Trim(strings.TrimSpace(p), "`"))
			}
			for _, p := range strings.Split(cells[1], ",") {
				p = strings.TrimSpace(p)
				if f := strings.Fields(p); len(f) > 0 {
					p = f[0] // "Arrow (IPC and Parquet)" → "Arrow"
				}
				row.imports = append(row.imports, strings.Trim(p, "`"))
			}
			rows = append(rows, row)
		case in:
			if len(rows) == 0 {
				t.Fatal("docs/ARCHITECTURE.md: the imports table has no rows")
			}
			return rows
		}
	}
	if len(rows) == 0 {
		t.Fatal(`docs/ARCHITECTURE.md: no table headed "| package | imports |"`)
	}
	return rows
}

// corePackages lists the directories (slash-separated, relative to the
// module root) that hold a non-test Go package of the core module: not
// testdata, not the modules of their own (a directory with a go.mod).
func corePackages(t *testing.T, root string) []string {
	var pkgs []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root {
			if name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir
			}
		}
		if hasPackage(path) {
			rel, _ := filepath.Rel(root, path)
			pkgs = append(pkgs, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// hasPackage reports whether dir holds a non-test Go file.
func hasPackage(dir string) bool {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if n := e.Name(); strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			return true
		}
	}
	return false
}

// projectImports lists the module's packages that the package in dir
// imports from its non-test files on any platform, sorted.
func projectImports(t *testing.T, root, dir string) []string {
	entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(dir)))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	fset := map[string]bool{}
	for _, e := range entries {
		n := e.Name()
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		// Every file, whatever its build constraints: every platform's imports.
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, filepath.FromSlash(dir), n), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatalf("%s/%s: %v", dir, n, err)
		}
		for _, spec := range f.Imports {
			imp, _ := strconv.Unquote(spec.Path.Value)
			if rel, ok := strings.CutPrefix(imp, modulePath+"/"); ok && !fset[rel] {
				fset[rel] = true
				got = append(got, rel)
			}
		}
	}
	slices.Sort(got)
	return got
}
