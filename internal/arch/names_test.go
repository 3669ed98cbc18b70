package arch

import (
	"io/fs"
	"os"
	"path"
	"strings"
	"testing"
	"testing/fstest"
)

// filesBesideFolders lists each Go file x.go that sits beside a folder x/
// holding Go code: two homes with one name, where a reader cannot tell which
// one holds what (STYLE: "Leave no forwarding behind").
func filesBesideFolders(fsys fs.FS) ([]string, error) {
	var bad []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if p != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return fs.SkipDir
		}
		entries, err := fs.ReadDir(fsys, p)
		if err != nil {
			return err
		}
		files := map[string]bool{}
		for _, e := range entries {
			if !e.IsDir() {
				files[e.Name()] = true
			}
		}
		for _, e := range entries {
			if !e.IsDir() || !files[e.Name()+".go"] {
				continue
			}
			sub, err := fs.ReadDir(fsys, path.Join(p, e.Name()))
			if err != nil {
				return err
			}
			for _, f := range sub {
				if !f.IsDir() && strings.HasSuffix(f.Name(), ".go") {
					bad = append(bad, path.Join(p, e.Name()+".go")+" beside "+path.Join(p, e.Name())+"/")
					break
				}
			}
		}
		return nil
	})
	return bad, err
}

// TestNoGoFileBesideAFolderOfTheSameName keeps a package from holding a
// file x.go beside a folder x/ of another package (reconcile once had
// load.go, prcheck.go, route.go and thread.go beside load/, prcheck/,
// route/ and thread/).
func TestNoGoFileBesideAFolderOfTheSameName(t *testing.T) {
	bad, err := filesBesideFolders(os.DirFS("../.."))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Errorf("%s: name the file for what it holds, or fold it into the package it names", b)
	}
}

func TestFileBesideFolderCheckCanFail(t *testing.T) {
	fsys := fstest.MapFS{
		"internal/reconcile/load.go":         {},
		"internal/reconcile/load/load.go":    {},
		"internal/reconcile/recovery.go":     {},
		"internal/reconcile/docs.go":         {},
		"internal/reconcile/docs/README.md":  {}, // no Go code below: not a package
		"internal/x/testdata/y.go":           {},
		"internal/x/testdata/y/y.go":         {},
		"internal/server/metrics.go":         {},
		"internal/server/metrics/metrics.go": {},
	}
	bad, err := filesBesideFolders(fsys)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"internal/reconcile/load.go beside internal/reconcile/load/", "internal/server/metrics.go beside internal/server/metrics/"}
	if strings.Join(bad, "\n") != strings.Join(want, "\n") {
		t.Errorf("found %q, want %q", bad, want)
	}
}
