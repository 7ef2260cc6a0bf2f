package archtest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/internal/testenv"
)

// thirdParty says, per module outside the standard library and this
// module, which packages' non-test files may import it (an entry of by
// matches that package and every package below it; one ending in "/"
// matches every package below it), and why there. A package that imports a
// module not in the table, or a module outside its by, fails
// TestThirdPartyImports: a new library, or a library reaching a new
// package, is a decision written here, not an accident. Tests may import
// what they need. The table was derived from the code's imports (every
// non-test file, whatever its build constraints) and checked against
// DESIGN.md ("Libraries", the packages table).
var thirdParty = map[string]struct {
	by     []string
	reason string
}{
	// The design card's libraries (DESIGN.md "Libraries"), each in the
	// package that owns its job.
	"github.com/philippseith/signalr": {
		by:     []string{"hub", "hub/mockhub"},
		reason: "the SignalR device hub: hub's client and the mock's server (upstream, no fork)",
	},
	"golang.org/x/oauth2": {
		by:     []string{"oauth", "deviceapi", "automate/toolkit"},
		reason: "OAuth: the remote service's sign-in and refresh (oauth), the bearer token of its REST calls (deviceapi), remote MCP servers' sign-in (automate/toolkit)",
	},
	"github.com/go-resty/resty/v2": {
		by:     []string{"deviceapi"},
		reason: "deviceapi owns the REST client of the remote service (DESIGN.md: \"the REST client (resty)\")",
	},
	"github.com/go-chi/chi/v5": {
		by:     []string{"automate/server", "hub/mockhub"},
		reason: "the router of the loopback Automate server (DESIGN.md: \"the loopback HTTP server (chi)\") and of the mock",
	},
	"github.com/zalando/go-keyring": {
		by:     []string{"configs"},
		reason: "configs owns the secret store over the OS keyring (DESIGN.md \"Secrets\")",
	},
	"github.com/modelcontextprotocol/go-sdk": {
		by:     []string{"automate/toolkit", "internal/testutil/mcpauthfake"},
		reason: "the official MCP SDK is the MCP client (automate/toolkit, shared by the engines); mcpauthfake is a test helper's OAuth-protected MCP server",
	},

	// Libraries the design card leaves to us, one job each.
	"github.com/cenkalti/backoff/v4": {
		by:     []string{"hub", "automate/llm"},
		reason: "the one backoff (deps_test.go): the hub's reconnects and the upstream engine's retries",
	},
	"github.com/coder/websocket": {
		by:     []string{"hub"},
		reason: "the WebSocket under the hub's SignalR connection (the one WebSocket library, deps_test.go)",
	},
	"modernc.org/sqlite": {
		by:     []string{"bridge/journal"},
		reason: "the journal's SQLite (pure Go, for the static build); bridge/journal owns the journal",
	},
	"go.yaml.in/yaml/v3": {
		by:     []string{"configs", "bridge/rules", "automate/llm", "hub/mockhub"},
		reason: "YAML files: the configuration (configs), rule files and the demo rules (bridge/rules), skills' front matter (automate/llm), the mock's scenarios",
	},
	"github.com/godbus/dbus/v5": {
		by:     []string{"bridge/notify", "configs"},
		reason: "D-Bus: desktop notifications (bridge/notify); telling the Secret Service's D-Bus errors apart in the secret store (configs)",
	},
	"github.com/google/uuid": {
		by:     []string{"automate/server", "hub/mockhub", "cmd/hubgate/internal/mockcli"},
		reason: "ids: the Automate server's request ids, the mock's resource ids and the ids `mock send` puts in a macro",
	},
	"github.com/google/jsonschema-go": {
		by:     []string{"automate/llm"},
		reason: "the JSON Schema of tools' parameters (the MCP SDK's schema library), validated by the upstream engine's tool loop",
	},
	"github.com/swaggest/swgui/v5": {
		by:     []string{"hub/mockhub"},
		reason: "the mock's explorer: Swagger UI's static files",
	},
	"github.com/vearutop/statigz": {
		by:     []string{"hub/mockhub"},
		reason: "the mock's explorer: serving Swagger UI's precompressed files",
	},
	"golang.org/x/sys": {
		by:     []string{"internal/proc", "internal/loopbackpeer", "cmd/hubgate"},
		reason: "system calls the standard library lacks: process groups and non-dumpable processes (internal/proc), the user id behind a loopback connection (internal/loopbackpeer), the pairing prompt's echo off on a terminal (cmd/hubgate)",
	},
	"github.com/spf13/cobra": {
		by:     []string{"cmd/"},
		reason: "the CLI library: the command tree is all under cmd/hubgate; domain packages import no CLI library (issue 27)",
	},
	"github.com/spf13/pflag": {
		by:     []string{"cmd/"},
		reason: "the CLI library's flags: only the command tree under cmd/hubgate",
	},
}

// isStandard says whether an import path is the standard library's: its
// first element has no dot. "C" (cgo) is not.
func isStandard(imp string) bool {
	first, _, _ := strings.Cut(imp, "/")
	return imp != "C" && !strings.Contains(first, ".")
}

// moduleOf is the entry of thirdParty whose module path is imp or a
// prefix of it, and whether there is one.
func moduleOf(imp string) (string, bool) {
	best := ""
	for m := range thirdParty {
		if (imp == m || strings.HasPrefix(imp, m+"/")) && len(m) > len(best) {
			best = m
		}
	}
	return best, best != ""
}

// thirdPartyProblems checks each package's imports (module-relative
// package path: full import paths) against thirdParty and returns one
// line per import that breaks it, naming the package, the import and the
// rule, sorted.
func thirdPartyProblems(pkgs map[string][]string) []string {
	var problems []string
	for pkg, imps := range pkgs {
		for _, imp := range imps {
			if isStandard(imp) || strings.HasPrefix(imp, module) {
				continue
			}
			mod, ok := moduleOf(imp)
			if !ok {
				problems = append(problems, fmt.Sprintf("%s imports %s: no entry of thirdParty (internal/archtest/thirdparty_test.go) names its module; add one with the packages that may import it and why, as DESIGN.md \"Libraries\" allows", pkg, imp))
				continue
			}
			if rule := thirdParty[mod]; !mayLink(rule.by, pkg) {
				problems = append(problems, fmt.Sprintf("%s imports %s: the rule of %s allows it only in %s (%s)", pkg, imp, mod, strings.Join(rule.by, ", "), rule.reason))
			}
		}
	}
	slices.Sort(problems)
	return problems
}

// TestThirdPartyImports checks every package's non-test imports against
// thirdParty, and that each entry is still used (a permission nobody uses
// is stale: remove it with the import).
func TestThirdPartyImports(t *testing.T) {
	pkgs := packageImports(t, testenv.ModuleRoot(t))
	if len(pkgs) < 20 {
		t.Fatalf("found only %d packages: the walk is broken", len(pkgs))
	}
	for _, p := range thirdPartyProblems(pkgs) {
		t.Error(p)
	}
	for _, mod := range slices.Sorted(maps.Keys(thirdParty)) {
		for _, by := range thirdParty[mod].by {
			used := false
			for pkg, imps := range pkgs {
				if mayLink([]string{by}, pkg) && slices.ContainsFunc(imps, func(imp string) bool { return imp == mod || strings.HasPrefix(imp, mod+"/") }) {
					used = true
					break
				}
			}
			if !used {
				t.Errorf("thirdParty lets %s import %s, but no package there does: remove the stale permission", by, mod)
			}
		}
	}
}

// TestThirdPartyCatchesABrokenRule feeds the checker imports that break
// the table: resty outside deviceapi, cobra in a domain package, a module
// with no entry; and ones that keep it: a subpackage of a module, the
// standard library, the module's own packages.
func TestThirdPartyCatchesABrokenRule(t *testing.T) {
	got := thirdPartyProblems(map[string][]string{
		"hub":                             {"github.com/go-resty/resty/v2", "github.com/philippseith/signalr", "context"},
		"bridge/daemon":                   {"github.com/spf13/cobra", module + "bridge"},
		"bridge":                          {"github.com/gorilla/websocket"},
		"hub/mockhub":                     {"github.com/go-chi/chi/v5/middleware", "github.com/swaggest/swgui/v5/static"},
		"cmd/hubgate/internal/controlcli": {"github.com/spf13/cobra"},
		"internal/proc":                   {"golang.org/x/sys/unix", "C"},
	})
	want := []string{
		"bridge imports github.com/gorilla/websocket: no entry of thirdParty",
		"bridge/daemon imports github.com/spf13/cobra: the rule of github.com/spf13/cobra allows it only in cmd/ (" + thirdParty["github.com/spf13/cobra"].reason + ")",
		"hub imports github.com/go-resty/resty/v2: the rule of github.com/go-resty/resty/v2 allows it only in deviceapi (" + thirdParty["github.com/go-resty/resty/v2"].reason + ")",
		"internal/proc imports C: no entry of thirdParty",
	}
	if len(got) != len(want) {
		t.Fatalf("thirdPartyProblems found %d problems, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("problem %d:\n got %s\nwant %s...", i, got[i], want[i])
		}
	}
}
