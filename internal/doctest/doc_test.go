package doctest

import (
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/internal/testenv"
)

// maxDocLines bounds a package comment: what a package owns fits in a few
// lines; the rest goes to docs/.
const maxDocLines = 25

// longDocs lists the packages whose comment may still exceed maxDocLines,
// each with its length today. An entry whose package is back within the
// limit fails the test, so the list only shrinks.
var longDocs = map[string]int{}

// pkgDoc is what the test reads of one package: its directory (slash
// separated, relative to the module root), its name and the files that
// carry a package comment.
type pkgDoc struct {
	Dir  string
	Name string
	Docs []docFile
}

type docFile struct {
	File        string // base name
	Text        string // the comment's text, as go/ast gives it
	Constrained bool   // the file has a //go:build line
}

var docsRef = regexp.MustCompile(`\bdocs/[A-Za-z0-9_./-]+\.md\b`)

// check returns what is wrong with p's package comment. exists reports
// whether a path relative to the module root exists.
func check(p pkgDoc, allowed bool, exists func(string) bool) []string {
	var bad []string
	if len(p.Docs) == 0 {
		return []string{"no package comment"}
	}
	if len(p.Docs) > 1 {
		var files []string
		for _, d := range p.Docs {
			files = append(files, d.File)
		}
		bad = append(bad, fmt.Sprintf("package comment in %d files (%s): godoc joins them; keep one", len(files), strings.Join(files, ", ")))
	}
	d := p.Docs[0]
	want := "Package " + p.Name + " "
	if p.Name == "main" {
		want = "Command " + path.Base(p.Dir) + " "
	}
	if !strings.HasPrefix(d.Text, want) {
		first, _, _ := strings.Cut(d.Text, "\n")
		bad = append(bad, fmt.Sprintf("%s: package comment starts %q, want %q", d.File, first, strings.TrimSpace(want)))
	}
	if d.Constrained {
		bad = append(bad, fmt.Sprintf("%s: the package comment is in a file with a build constraint (godoc misses it elsewhere)", d.File))
	}
	if n := docLines(d.Text); n > maxDocLines && !allowed {
		bad = append(bad, fmt.Sprintf("%s: package comment is %d lines (limit %d): keep what the package owns, move the design notes to docs/", d.File, n, maxDocLines))
	}
	for _, ref := range docsRef.FindAllString(d.Text, -1) {
		if !exists(ref) {
			bad = append(bad, fmt.Sprintf("%s: package comment points at %s, which does not exist", d.File, ref))
		}
	}
	return bad
}

func docLines(text string) int {
	return strings.Count(strings.TrimRight(text, "\n"), "\n") + 1
}

// loadPackages reads the package comments of every package under root
// (non-test files only; testdata, hidden folders, node_modules and nested
// modules left out).
func loadPackages(root string) ([]pkgDoc, error) {
	byDir := map[string]*pkgDoc{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if p != root {
				if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules" || name == "vendor" {
					return filepath.SkipDir
				}
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		pd := byDir[rel]
		if pd == nil {
			pd = &pkgDoc{Dir: rel, Name: f.Name.Name}
			byDir[rel] = pd
		}
		if pd.Name != f.Name.Name {
			return fmt.Errorf("%s: package %s, but %s holds package %s", p, f.Name.Name, rel, pd.Name)
		}
		if f.Doc != nil {
			constrained := false
			for _, cg := range f.Comments {
				if cg.Pos() >= f.Package {
					break
				}
				for _, c := range cg.List {
					if strings.HasPrefix(c.Text, "//go:build ") {
						constrained = true
					}
				}
			}
			pd.Docs = append(pd.Docs, docFile{File: filepath.Base(p), Text: f.Doc.Text(), Constrained: constrained})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []pkgDoc
	for _, pd := range byDir {
		out = append(out, *pd)
	}
	slices.SortFunc(out, func(a, b pkgDoc) int { return strings.Compare(a.Dir, b.Dir) })
	return out, nil
}

func TestPackageComments(t *testing.T) {
	root := testenv.ModuleRoot(t)
	pkgs, err := loadPackages(root)
	if err != nil {
		t.Fatal(err)
	}
	exists := func(rel string) bool {
		_, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel)))
		return !errors.Is(err, fs.ErrNotExist)
	}
	seen := map[string]bool{}
	for _, p := range pkgs {
		seen[p.Dir] = true
		_, allowed := longDocs[p.Dir]
		for _, problem := range check(p, allowed, exists) {
			t.Errorf("%s: %s", p.Dir, problem)
		}
		if allowed && len(p.Docs) > 0 && docLines(p.Docs[0].Text) <= maxDocLines {
			t.Errorf("%s: package comment is within %d lines now: remove it from longDocs", p.Dir, maxDocLines)
		}
	}
	for dir := range longDocs {
		if !seen[dir] {
			t.Errorf("longDocs names %s, which is not a package of the module", dir)
		}
	}
	// The walk found the module's packages, not an empty or wrong folder.
	for _, dir := range []string{"cmd/hubgate", "hub", "automate/llm", "internal/doctest"} {
		if !seen[dir] {
			t.Errorf("package %s not found under %s", dir, root)
		}
	}
}

// TestCheck shows that check catches each fault it names.
func TestCheck(t *testing.T) {
	exists := func(rel string) bool { return rel == "docs/hub.md" }
	long := "Package hub owns a lot.\n" + strings.Repeat("More.\n", maxDocLines)
	tests := []struct {
		name    string
		p       pkgDoc
		allowed bool
		want    []string // substrings, one per problem, in order
	}{
		{"fine", pkgDoc{Dir: "hub", Name: "hub", Docs: []docFile{{File: "hub.go", Text: "Package hub owns the client.\n\nDesign notes: docs/hub.md.\n"}}}, false, nil},
		{"main", pkgDoc{Dir: "cmd/hubgate", Name: "main", Docs: []docFile{{File: "main.go", Text: "Command hubgate is the gateway.\n"}}}, false, nil},
		{"missing", pkgDoc{Dir: "hub", Name: "hub"}, false, []string{"no package comment"}},
		{"wrong start", pkgDoc{Dir: "hub", Name: "hub", Docs: []docFile{{File: "hub.go", Text: "This package owns the client.\n"}}}, false, []string{`want "Package hub"`}},
		{"other name", pkgDoc{Dir: "hub", Name: "hub", Docs: []docFile{{File: "hub.go", Text: "Package hubs owns the client.\n"}}}, false, []string{`want "Package hub"`}},
		{"main wrong start", pkgDoc{Dir: "cmd/hubgate", Name: "main", Docs: []docFile{{File: "main.go", Text: "Package main is the gateway.\n"}}}, false, []string{`want "Command hubgate"`}},
		{"two files", pkgDoc{Dir: "hub", Name: "hub", Docs: []docFile{{File: "a.go", Text: "Package hub a.\n"}, {File: "b.go", Text: "Package hub b.\n"}}}, false, []string{"in 2 files (a.go, b.go)"}},
		{"constrained", pkgDoc{Dir: "hub", Name: "hub", Docs: []docFile{{File: "hub_linux.go", Text: "Package hub owns it.\n", Constrained: true}}}, false, []string{"build constraint"}},
		{"too long", pkgDoc{Dir: "hub", Name: "hub", Docs: []docFile{{File: "hub.go", Text: long}}}, false, []string{fmt.Sprintf("is %d lines (limit %d)", maxDocLines+1, maxDocLines)}},
		{"too long, allowed", pkgDoc{Dir: "hub", Name: "hub", Docs: []docFile{{File: "hub.go", Text: long}}}, true, nil},
		{"dangling docs link", pkgDoc{Dir: "hub", Name: "hub", Docs: []docFile{{File: "hub.go", Text: "Package hub owns it.\nDesign notes: docs/hubb.md.\n"}}}, false, []string{"docs/hubb.md, which does not exist"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := check(tt.p, tt.allowed, exists)
			if len(got) != len(tt.want) {
				t.Fatalf("check = %q, want %d problems matching %q", got, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
}

// TestLoadPackages reads a small module: the comment, its file, the build
// constraint, test files and testdata left out.
func TestLoadPackages(t *testing.T) {
	root := t.TempDir()
	write := func(rel, src string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n")
	write("a/doc.go", "// Package a owns A.\npackage a\n")
	write("a/a_test.go", "// Package a_test is a test.\npackage a_test\n")
	write("b/b_linux.go", "//go:build linux\n\n// Package b owns B.\npackage b\n")
	write("b/b.go", "package b\n")
	write("c/c.go", "package c\n")
	write("c/testdata/x.go", "package broken(\n")
	write("nested/go.mod", "module example.com/nested\n")
	write("nested/n.go", "package n\n")

	got, err := loadPackages(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []pkgDoc{
		{Dir: "a", Name: "a", Docs: []docFile{{File: "doc.go", Text: "Package a owns A.\n"}}},
		{Dir: "b", Name: "b", Docs: []docFile{{File: "b_linux.go", Text: "Package b owns B.\n", Constrained: true}}},
		{Dir: "c", Name: "c"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("loadPackages =\n%+v\nwant\n%+v", got, want)
	}
}
