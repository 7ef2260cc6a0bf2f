package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/internal/testenv"
)

const module = "github.com/hubgate/hubgate/"

// allowed says, for each package (the entry of the longest matching
// prefix of its module-relative path wins), which of the module's packages
// its non-test files may import. An entry ending in "/" matches every
// package below it. The arrows are explicit: a package may import its own
// subpackages only when they are listed.
//
// The table mirrors docs/architecture.md ("Dependencies point one way"):
// cmd -> {bridge/daemon, deviceapi/pairing} -> bridge -> {hub, automate};
// configs is imported by cmd (and by the demo, bridge/daemon/demo, for
// its in-memory secret store) and passes plain values down; bridge owns its
// event types, so bridge/control, bridge/notify and bridge/statuspage
// import bridge, never the reverse. Change both together.
var allowed = map[string][]string{
	// cmd wires: besides the two facades, the commands that talk to a
	// running daemon or read its journal, serve the Automate contract
	// alone, test rules or install the service. The command tree is all
	// under cmd/hubgate: the command families with a package of their own
	// are cmd/hubgate/internal/... (the mock's mockcli, the control
	// socket's controlcli, the rules' rulescli, automate serve's
	// servecli, and cliout, their shared output); only cmd imports cmd.
	"cmd/hubgate": {"cmd/hubgate/internal/", "bridge/daemon", "deviceapi/pairing", "configs", "configs/service", "bridge/daemon/demo",
		"bridge", "bridge/control", "bridge/journal", "bridge/rules", "automate/server", "automate/engine",
		"deviceapi", "hub", "oauth", "internal/"},
	// The rules' command line (config check, rules test). It takes the
	// configuration loaded and the macro as `mock send` builds it.
	"cmd/hubgate/internal/rulescli": {"bridge/rules", "configs", "deviceapi", "cmd/hubgate/internal/mockcli", "cmd/hubgate/internal/cliout", "internal/"},
	// The control socket's command line.
	"cmd/hubgate/internal/controlcli": {"bridge", "bridge/control", "bridge/journal", "automate", "hub", "oauth", "cmd/hubgate/internal/cliout", "internal/"},
	// The mock's command line.
	"cmd/hubgate/internal/mockcli": {"hub/mockhub", "deviceapi", "cmd/hubgate/internal/cliout", "internal/"},
	// `automate serve`'s command line and the engine the configuration
	// names.
	"cmd/hubgate/internal/servecli": {"automate", "automate/server", "automate/engine", "automate/llm", "automate/scripted", "automate/toolkit", "configs", "internal/"},
	// The commands' shared output (JSON, tables, suggestions).
	"cmd/hubgate/internal/cliout": {"internal/"},

	"bridge/daemon": {"bridge", "bridge/", "hub", "automate", "automate/", "deviceapi", "internal/"},
	// The demo is the daemon's assembly with demo options (DESIGN.md's
	// row of the demo): the daemon, around it the mock (hub/mockhub: "cmd
	// and the demo"), the pairing ("shared by pair and the demo") and
	// configs' memory store ("for unit tests and for the one-process
	// demo") with the access key as run gets it. Only cmd imports it
	// (deps_test.go's linkedOnlyBy).
	"bridge/daemon/demo": {"bridge/daemon", "deviceapi/pairing", "hub/mockhub", "configs", "bridge", "bridge/journal", "bridge/rules",
		"automate", "automate/scripted", "deviceapi", "oauth", "internal/"},
	"deviceapi/pairing": {"deviceapi", "oauth", "internal/"},

	// The bridge owns its event types: control, notify and statuspage
	// import bridge, never the reverse.
	"bridge":                 {"bridge/rules", "bridge/journal", "hub", "automate", "deviceapi", "internal/"},
	"bridge/rules":           {"automate", "deviceapi", "internal/"},
	"bridge/rules/rulestest": {"bridge/rules", "internal/"},
	"bridge/journal":         {"automate", "internal/"},
	"bridge/control":         {"bridge", "bridge/journal", "bridge/rules", "automate", "internal/"},
	"bridge/notify":          {"bridge", "bridge/journal", "bridge/rules", "automate", "internal/"},
	"bridge/statuspage":      {"bridge", "bridge/journal", "bridge/rules", "automate", "internal/"},

	"hub":                     {"deviceapi", "internal/"},
	"hub/mockhub":             {"deviceapi", "internal/"},
	"hub/mockhub/mockhubtest": {"hub/mockhub", "internal/"},
	"deviceapi":               {"internal/"},
	"oauth":                   {"internal/"},

	// automate must not depend on the server; the engines sit behind the
	// server's Assistant interface and know nothing of it.
	"automate":           {"internal/"},
	"automate/assistant": {"automate", "automate/toolkit", "internal/"},
	"automate/toolkit":   {"automate", "internal/"},
	"automate/server":    {"automate", "automate/assistant", "internal/"},
	"automate/scripted":  {"automate", "automate/assistant", "automate/toolkit", "internal/"},
	"automate/llm":       {"automate", "automate/assistant", "automate/toolkit", "internal/"},
	// engine chooses between the engines; nothing but cmd imports it.
	"automate/engine": {"automate", "automate/assistant", "automate/scripted", "automate/llm", "internal/"},

	// configs is configuration: it holds the rules' schema (bridge/rules'
	// Spec types) and validates against the Automate contract's vocabulary
	// (automate: product names, MCP server names), and compiles nothing
	// (TestConfigsCompilesNothing).
	"configs":         {"bridge/rules", "automate", "internal/"},
	"configs/service": {"internal/"},

	// internal/ holds shared mechanisms below every component: nothing
	// there imports a package above it (TestInternalImportsOnlyInternal
	// holds this whatever the table says).
	"internal/": {"internal/"},
}

// testHelpers are packages for tests only (they import testing): no
// other package's non-test files may import them.
var testHelpers = []string{"internal/testutil", "internal/testenv", "hub/mockhub/mockhubtest", "bridge/rules/rulestest"}

// configsMustNotUse are the names of bridge/rules that configs must not
// use: configs holds the rules' schema; its caller compiles them.
var configsMustNotUse = []string{"Compile", "Set"}

// rulesFor returns the allowed list of pkg (module-relative): the entry of
// the longest prefix (a prefix ends at a path separator or is the whole
// path; an entry ending in "/" matches every package below it).
func rulesFor(pkg string) (string, []string, bool) {
	best := ""
	for k := range allowed {
		if matches(k, pkg) && len(k) > len(best) {
			best = k
		}
	}
	r, ok := allowed[best]
	return best, r, ok
}

func matches(pattern, pkg string) bool {
	if strings.HasSuffix(pattern, "/") {
		return strings.HasPrefix(pkg, pattern)
	}
	return pkg == pattern || strings.HasPrefix(pkg, pattern+"/")
}

func permitted(rules []string, imp string) bool {
	return slices.ContainsFunc(rules, func(r string) bool {
		if strings.HasSuffix(r, "/") {
			return strings.HasPrefix(imp, r)
		}
		return imp == r
	})
}

// packageImports parses every non-test Go file below root (whatever its
// build constraints: an arrow broken on one OS is broken) and returns each
// package's imports (module-relative package paths, full import paths),
// each once, in the order first seen.
func packageImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	fset := token.NewFileSet()
	out := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch name := d.Name(); {
			case path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules"):
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(rel)
		for _, is := range f.Imports {
			imp, err := strconv.Unquote(is.Path.Value)
			if err != nil {
				return err
			}
			if !slices.Contains(out[pkg], imp) {
				out[pkg] = append(out[pkg], imp)
			}
		}
		if _, ok := out[pkg]; !ok {
			out[pkg] = nil
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// moduleImports is packageImports restricted to the module's own
// packages, module-relative.
func moduleImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for pkg, imps := range packageImports(t, root) {
		out[pkg] = nil
		for _, imp := range imps {
			if dep, ok := strings.CutPrefix(imp, module); ok {
				out[pkg] = append(out[pkg], dep)
			}
		}
	}
	return out
}

func TestArrows(t *testing.T) {
	root := testenv.ModuleRoot(t)
	pkgs := moduleImports(t, root)
	if len(pkgs) < 20 {
		t.Fatalf("found only %d packages below %s: the walk is broken", len(pkgs), root)
	}
	for _, pkg := range slices.Sorted(maps.Keys(pkgs)) {
		entry, rules, ok := rulesFor(pkg)
		if !ok {
			t.Errorf("package %s has no entry in the arrows table: place it as docs/architecture.md does, then add it here", pkg)
			continue
		}
		for _, imp := range pkgs[pkg] {
			switch {
			case strings.HasPrefix(imp, "cmd/") && !strings.HasPrefix(pkg, "cmd/"):
				t.Errorf("%s imports %s: no package outside cmd imports cmd", pkg, imp)
			case slices.Contains(testHelpers, imp) && !slices.Contains(testHelpers, pkg):
				t.Errorf("%s imports the test helper %s outside a test", pkg, imp)
			case !permitted(rules, imp):
				t.Errorf("%s imports %s: the arrows of docs/architecture.md (entry %q of this test's table) do not allow it", pkg, imp, entry)
			}
		}
	}
}

// TestInternalImportsOnlyInternal: internal/ holds the mechanisms shared
// below every component, so no package under internal/ imports a package
// of the module outside internal/ (the demo, which did, is
// bridge/daemon/demo now). The rule holds whatever the arrows table says:
// an entry under internal/ that allows more fails here too.
func TestInternalImportsOnlyInternal(t *testing.T) {
	pkgs := moduleImports(t, testenv.ModuleRoot(t))
	checked := 0
	for _, pkg := range slices.Sorted(maps.Keys(pkgs)) {
		if !strings.HasPrefix(pkg, "internal/") {
			continue
		}
		checked++
		for _, p := range internalProblems(pkg, pkgs[pkg]) {
			t.Error(p)
		}
	}
	if checked < 5 {
		t.Fatalf("found only %d packages under internal/: the walk is broken", checked)
	}
	for entry, rules := range allowed {
		if !strings.HasPrefix(entry, "internal/") {
			continue
		}
		for _, r := range rules {
			if !strings.HasPrefix(r, "internal/") {
				t.Errorf("the arrows table lets %s import %s: nothing under internal/ imports a package above it", entry, r)
			}
		}
	}
}

// internalProblems are the imports of pkg (module-relative, under
// internal/) that leave internal/.
func internalProblems(pkg string, imports []string) []string {
	var out []string
	for _, imp := range imports {
		if !strings.HasPrefix(imp, "internal/") {
			out = append(out, fmt.Sprintf("%s imports %s: a package under internal/ imports only internal/ (it holds shared mechanisms below every component; move the code that needs %s out of internal/, as the demo moved to bridge/daemon/demo)", pkg, imp, imp))
		}
	}
	return out
}

// TestConfigsCompilesNothing: configs may import bridge/rules for the
// rules' schema only; compiling them (rules.Compile) and holding the
// compiled set (rules.Set) belong to its caller.
func TestConfigsCompilesNothing(t *testing.T) {
	dir := filepath.Join(testenv.ModuleRoot(t), "configs")
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, name := range usedNames(f, module+"bridge/rules") {
			if slices.Contains(configsMustNotUse, name.Sel) {
				t.Errorf("%s: configs uses rules.%s: configs holds the rules' schema; its caller compiles them", fset.Position(name.Pos), name.Sel)
			}
		}
	}
	if checked == 0 {
		t.Fatalf("no Go file in %s", dir)
	}
}

// selector is one use of an imported package's name.
type selector struct {
	Sel string
	Pos token.Pos
}

// usedNames returns every pkg.Name that f uses of the package imported
// from importPath (under whatever name f imports it).
func usedNames(f *ast.File, importPath string) []selector {
	local := ""
	for _, is := range f.Imports {
		if p, _ := strconv.Unquote(is.Path.Value); p == importPath {
			local = path.Base(p)
			if is.Name != nil {
				local = is.Name.Name
			}
		}
	}
	if local == "" || local == "_" {
		return nil
	}
	var out []selector
	ast.Inspect(f, func(n ast.Node) bool {
		if se, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := se.X.(*ast.Ident); ok && id.Name == local {
				out = append(out, selector{Sel: se.Sel.Name, Pos: se.Pos()})
			}
		}
		return true
	})
	return out
}

// TestTableCatchesABrokenArrow proves the table can fail: reverse arrows,
// a component importing what sits above it, and a package under internal/
// importing anything outside internal/ are refused.
func TestTableCatchesABrokenArrow(t *testing.T) {
	for _, c := range []struct{ pkg, imp string }{
		{"bridge", "bridge/control"},
		{"bridge", "bridge/notify"},
		{"bridge", "bridge/statuspage"},
		{"bridge/notify", "bridge/control"},
		{"bridge/statuspage", "bridge/control"},
		{"hub", "automate"},
		{"automate", "automate/server"},
		{"configs", "bridge"},
		{"bridge", "configs"},
		{"bridge/daemon", "configs"},
		{"deviceapi", "hub"},
		{"hub", "hub/mockhub"},
		{"bridge/daemon", "hub/mockhub"},
		{"bridge/daemon", "deviceapi/pairing"},
		{"bridge/daemon", "configs"},
		{"bridge", "bridge/daemon/demo"},
		{"deviceapi/pairing", "bridge/daemon/demo"},
		{"hub/mockhub", "bridge/daemon/demo"},
		{"internal/proc", "bridge"},
		{"internal/localhttp", "hub/mockhub"},
		{"internal/testutil", "configs"},
		{"internal/demo", "bridge/daemon"},
	} {
		_, rules, ok := rulesFor(c.pkg)
		if !ok || permitted(rules, c.imp) {
			t.Errorf("%s -> %s is allowed by the table; docs/architecture.md forbids it", c.pkg, c.imp)
		}
	}
	if got := internalProblems("internal/proc", []string{"internal/atomicfile", "bridge/daemon"}); len(got) != 1 || !strings.Contains(got[0], "internal/proc imports bridge/daemon") {
		t.Errorf("internalProblems(internal/proc -> internal/atomicfile, bridge/daemon) = %q, want one problem naming bridge/daemon", got)
	}
}

// TestUsedNamesSeesRenamedImports: the configs check finds a use of
// rules.Compile under another import name, and nothing in a file that
// does not import bridge/rules.
func TestUsedNamesSeesRenamedImports(t *testing.T) {
	src := `package configs
import r "` + module + `bridge/rules"
var _ = r.Compile
type x struct{ s []r.Spec }
`
	f, err := parser.ParseFile(token.NewFileSet(), "x.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range usedNames(f, module+"bridge/rules") {
		names = append(names, n.Sel)
	}
	if !slices.Equal(names, []string{"Compile", "Spec"}) {
		t.Fatalf("usedNames = %v, want [Compile Spec]", names)
	}
	if got := usedNames(f, module+"bridge"); got != nil {
		t.Fatalf("usedNames of a package not imported = %v", got)
	}
}
