package arch

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// mapDoc is the document whose "Package map" table must match the tree.
const mapDoc = "../../docs/architecture.md"

// mapRow is one row of the package map: the packages it names (module
// paths without the module prefix, "internal/fake/" for "internal/fake/…")
// and the module packages its imports column names.
type mapRow struct {
	line     int
	pkgs     []string
	prefixes []string // "internal/fake/": every package below
	imports  []string // short names: "engine/outbox", "forge", "cmd/bot"
}

var backticked = regexp.MustCompile("`([^`]+)`")

// parsePackageMap reads the rows of the table under "## Package map".
func parsePackageMap(doc string) ([]mapRow, error) {
	lines := strings.Split(doc, "\n")
	var rows []mapRow
	in := false
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "## "):
			in = strings.TrimSpace(l) == "## Package map"
			continue
		case !in || !strings.HasPrefix(l, "| `"):
			continue
		}
		cells := strings.Split(strings.Trim(l, "|"), " | ")
		if len(cells) != 3 {
			return nil, fmt.Errorf("%s:%d: a package map row has %d cells, want 3 (package | what it is | imports)", mapDoc, i+1, len(cells))
		}
		r := mapRow{line: i + 1}
		prev := ""
		for _, m := range backticked.FindAllStringSubmatch(cells[0], -1) {
			name := m[1]
			if rest, ok := strings.CutPrefix(name, "…/"); ok && prev != "" {
				name = prev[:strings.LastIndex(prev, "/")+1] + rest
			}
			if base, ok := strings.CutSuffix(name, "/…"); ok {
				r.prefixes = append(r.prefixes, base+"/")
				continue
			}
			r.pkgs = append(r.pkgs, name)
			prev = name
		}
		for _, m := range backticked.FindAllStringSubmatch(cells[2], -1) {
			if isStandard(m[1]) { // golang.org/x/…, go.yaml.in/… are third-party
				r.imports = append(r.imports, m[1])
			}
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s has no package map rows under \"## Package map\"", mapDoc)
	}
	return rows, nil
}

// short is a module package as the map names it: "internal/x/y" → "x/y"
// in the imports column; the first column keeps "internal/".
func short(importPath string) string {
	p := strings.TrimPrefix(importPath, module+"/")
	return strings.TrimPrefix(p, "internal/")
}

// mapProblems compares the rows with the module's packages: every package
// has a row, every row names a package that exists, and the imports column
// of a package with code names exactly the module packages it imports
// (third-party ones are not checked). A package whose only file is doc.go
// (tests only, such as arch and reliability) describes its tests' imports
// and is not compared.
func mapProblems(rows []mapRow, pkgs []pkg) []string {
	byPath := map[string]pkg{}
	for _, p := range pkgs {
		byPath[strings.TrimPrefix(p.ImportPath, module+"/")] = p
	}
	var bad []string
	covered := map[string]bool{}
	for _, r := range rows {
		for _, pre := range r.prefixes {
			n := 0
			for path := range byPath {
				if strings.HasPrefix(path, pre) {
					covered[path] = true
					n++
				}
			}
			if n == 0 {
				bad = append(bad, fmt.Sprintf("%s:%d: `%s…` names no package", mapDoc, r.line, pre))
			}
		}
		var want []string
		compare := false
		for _, name := range r.pkgs {
			p, ok := byPath[name]
			if !ok {
				bad = append(bad, fmt.Sprintf("%s:%d: `%s` is not a package of the module (renamed or removed?)", mapDoc, r.line, name))
				continue
			}
			covered[name] = true
			if len(p.GoFiles) == 1 && p.GoFiles[0] == "doc.go" && len(p.Imports) == 0 {
				continue
			}
			compare = true
			for _, imp := range p.Imports {
				if strings.HasPrefix(imp, module+"/") {
					want = append(want, short(imp))
				}
			}
		}
		if !compare || len(r.prefixes) > 0 {
			continue
		}
		own := map[string]bool{}
		for _, name := range r.pkgs {
			own[short(module+"/"+name)] = true
		}
		want = slices.DeleteFunc(want, func(s string) bool { return own[s] })
		missing, extra := diffSets(want, r.imports)
		if len(missing) > 0 {
			bad = append(bad, fmt.Sprintf("%s:%d: %s imports %s, which the row does not name", mapDoc, r.line, strings.Join(r.pkgs, ", "), strings.Join(missing, ", ")))
		}
		if len(extra) > 0 {
			bad = append(bad, fmt.Sprintf("%s:%d: the row of %s names %s, which it does not import", mapDoc, r.line, strings.Join(r.pkgs, ", "), strings.Join(extra, ", ")))
		}
	}
	var uncovered []string
	for path := range byPath {
		if !covered[path] {
			uncovered = append(uncovered, path)
		}
	}
	sort.Strings(uncovered)
	for _, path := range uncovered {
		bad = append(bad, fmt.Sprintf("%s: package %s has no row in the package map", mapDoc, path))
	}
	return bad
}

// diffSets returns what want has that got lacks, and the reverse (each
// sorted, duplicates ignored).
func diffSets(want, got []string) (missing, extra []string) {
	w, g := map[string]bool{}, map[string]bool{}
	for _, s := range want {
		w[s] = true
	}
	for _, s := range got {
		g[s] = true
	}
	for s := range w {
		if !g[s] {
			missing = append(missing, s)
		}
	}
	for s := range g {
		if !w[s] {
			extra = append(extra, s)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	return missing, extra
}

// TestPackageMapMatchesTheTree keeps docs/architecture.md's package map
// true: a package moved, renamed or added without its row, or an import
// added or dropped without the row saying so, fails here.
func TestPackageMapMatchesTheTree(t *testing.T) {
	b, err := os.ReadFile(filepath.FromSlash(mapDoc))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := parsePackageMap(string(b))
	if err != nil {
		t.Fatal(err)
	}
	touchTree(t, "../..")
	for _, p := range mapProblems(rows, goList(t, "../..", "./...")) {
		t.Error(p)
	}
	if t.Failed() {
		t.Log("update the package map of docs/architecture.md in the same commit as the move or the import")
	}
}

// touchTree reads every directory and non-test Go file under root through
// os, so go test's cache key covers them: go list runs in a child process
// the cache cannot see, and a new package or import must fail the test.
func touchTree(t *testing.T, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata"):
			return filepath.SkipDir
		case !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go"):
			_, err = os.ReadFile(path)
		}
		return err
	})
	if err != nil {
		t.Fatalf("read the tree: %v", err)
	}
}

// TestPackageMapCheckCanFail proves the comparison reports a missing row,
// a stale row, and an imports column that says too much or too little.
func TestPackageMapCheckCanFail(t *testing.T) {
	doc := "## Package map\n\n| package | what | imports |\n|---|---|---|\n" +
		"| `internal/a` | a | `b`, `c`, golang.org/x |\n" +
		"| `internal/gone` | renamed away | standard library only |\n" +
		"| `internal/fake/…` | fakes | (never linked) |\n" +
		"| `internal/s/one`, `…/two` | two | `a` |\n" +
		"## Next\n| `internal/ignored` | x | y |\n"
	rows, err := parsePackageMap(doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || len(rows[3].pkgs) != 2 || rows[3].pkgs[1] != "internal/s/two" || rows[2].prefixes[0] != "internal/fake/" {
		t.Fatalf("rows = %+v", rows)
	}
	m := func(p string) string { return module + "/" + p }
	pkgs := []pkg{
		{ImportPath: m("internal/a"), GoFiles: []string{"a.go"}, Imports: []string{"fmt", m("internal/b"), m("internal/d")}},
		{ImportPath: m("internal/b"), GoFiles: []string{"b.go"}},
		{ImportPath: m("internal/fake/x"), GoFiles: []string{"x.go"}, Imports: []string{m("internal/zzz")}},
		{ImportPath: m("internal/s/one"), GoFiles: []string{"one.go"}, Imports: []string{m("internal/a"), m("internal/s/two")}},
		{ImportPath: m("internal/s/two"), GoFiles: []string{"two.go"}},
	}
	got := strings.Join(mapProblems(rows, pkgs), "\n")
	for _, want := range []string{
		"internal/a imports d, which the row does not name",
		"the row of internal/a names c, which it does not import",
		"`internal/gone` is not a package",
		"package internal/b has no row",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems do not say %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "zzz") || strings.Contains(got, "internal/s/") {
		t.Errorf("a prefix row or a true row was reported:\n%s", got)
	}
}
