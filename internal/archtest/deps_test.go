package archtest

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/internal/testenv"
)

// The dependency test of the daemon binary, in the manner of tailscale's
// tstest/deptest: `go list -deps ./cmd/hubgate` (the binary as README's
// install command builds it, CGO_ENABLED=0) must link the design card's
// libraries and must never link what badDeps lists, each with its reason.
// Where a rule holds for some packages only (the mock, the CLI library),
// it is checked per package over `go list -deps ./...`.

// wantDeps are the design card's libraries (DESIGN.md) and the MCP SDK:
// dropping one for a hand-written stand-in fails this test.
var wantDeps = map[string]string{
	"github.com/philippseith/signalr":                         "the hub's SignalR client (upstream, no fork)",
	"golang.org/x/oauth2":                                     "the remote service's OAuth (pairing, token refresh)",
	"github.com/go-resty/resty/v2":                            "deviceapi's REST client (retries, backoff, Retry-After, body limit)",
	"github.com/go-chi/chi/v5":                                "the router of the Automate server, the status page and the mock",
	"github.com/zalando/go-keyring":                           "the secret store (Secret Service, Keychain, Credential Manager)",
	"github.com/modelcontextprotocol/go-sdk/mcp":              "the product's MCP client (stdio, streamable HTTP, SSE)",
	"github.com/cenkalti/backoff/v4":                          "the one backoff",
	"modernc.org/sqlite":                                      "the journal's SQLite, pure Go for the static build",
	"github.com/hubgate/hubgate/bridge/daemon":                "the daemon itself",
	"github.com/hubgate/hubgate/deviceapi/pairing":            "`hubgate pair`",
	"github.com/hubgate/hubgate/cmd/hubgate/internal/mockcli": "`hubgate mock` (the binary ships the mock command)",
}

// badDeps must never be linked into the daemon binary.
var badDeps = map[string]string{
	"github.com/getkin/kin-openapi/openapi3":                "test-only: validates the mock's OpenAPI document in its tests",
	"github.com/getkin/kin-openapi/openapi3filter":          "test-only: validates the mock's answers in its tests",
	"github.com/swaggest/openapi-go":                        "a second OpenAPI library: the mock's explorer generates its document itself (issue 26 item 5)",
	"github.com/swaggest/openapi-go/openapi3":               "a second OpenAPI library (issue 26 item 5)",
	"github.com/mattn/go-sqlite3":                           "needs cgo; the static build (CGO_ENABLED=0) uses modernc.org/sqlite",
	"github.com/hubgate/hubgate/internal/backoff":           "a second backoff beside cenkalti/backoff (removed, issue 26 item 5)",
	"github.com/hubgate/hubgate/internal/tempfork":          "a fork of a library (removed: upstream signalr, issue 26 item 3)",
	"github.com/hubgate/hubgate/automate/toolkit/mcpclient": "a hand-written MCP client beside the official SDK (removed, issue 26 item 1)",
	"github.com/mark3labs/mcp-go":                           "a second MCP library beside the official SDK",
	"github.com/go-resty/resty/v3":                          "a second resty beside v2",
	"github.com/cenkalti/backoff/v5":                        "a second backoff version beside v4",
	"github.com/jpillora/backoff":                           "a second backoff",
	"github.com/gorilla/websocket":                          "a second WebSocket library: signalr and the mock use coder/websocket",
	"nhooyr.io/websocket":                                   "coder/websocket's old path: a second copy of the same library",
	"github.com/hubgate/hubgate/internal/testutil":          "test helpers are for tests (archtest's testHelpers)",
	"github.com/hubgate/hubgate/internal/testenv":           "test helpers are for tests",
	"github.com/hubgate/hubgate/hub/mockhub/mockhubtest":    "test helpers are for tests",
	"github.com/hubgate/hubgate/bridge/rules/rulestest":     "test helpers are for tests",
	"testing": "tests' package: its flags and globals do not belong in the daemon",
}

// linkedOnlyBy are libraries that only some packages may link, with the
// reason; a package outside the list that links one fails. Entries ending
// in "/" match every package below; entries starting with "*" match a
// path suffix.
var linkedOnlyBy = map[string]struct {
	by     []string
	reason string
}{
	"github.com/hubgate/hubgate/hub/mockhub": {
		by:     []string{"cmd/", "bridge/daemon/demo", "hub/mockhub/"},
		reason: "the mock is imported by no production path other than cmd and the demo (DESIGN.md)",
	},
	// The demo (the daemon's assembly with demo options) links the mock:
	// only cmd links the demo, so the daemon's own packages never do.
	"github.com/hubgate/hubgate/bridge/daemon/demo": {
		by:     []string{"cmd/", "bridge/daemon/demo"},
		reason: "the demo is `hubgate demo`'s: only cmd links it (it links the mock, DESIGN.md)",
	},
	// The command tree is all under cmd/hubgate (issue 27): no domain
	// package links a CLI library.
	"github.com/spf13/cobra": {
		by:     []string{"cmd/"},
		reason: "domain packages import no CLI library; the command tree is under cmd/hubgate",
	},
	"github.com/spf13/pflag": {
		by:     []string{"cmd/"},
		reason: "domain packages import no CLI library; the command tree is under cmd/hubgate",
	},
}

// goList runs `go list` in the module root with env added and returns its
// output lines.
func goList(t *testing.T, env []string, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = testenv.ModuleRoot(t)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = nil
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return strings.Fields(string(out))
}

// checkDeps returns one line per wanted package missing from deps and per
// bad package present in it, sorted.
func checkDeps(deps []string, want, bad map[string]string) []string {
	have := map[string]bool{}
	for _, d := range deps {
		have[d] = true
	}
	var problems []string
	for p, why := range want {
		if !have[p] {
			problems = append(problems, fmt.Sprintf("not linked, but must be: %s (%s)", p, why))
		}
	}
	for p, why := range bad {
		if have[p] {
			problems = append(problems, fmt.Sprintf("linked, but must never be: %s (%s)", p, why))
		}
	}
	slices.Sort(problems)
	return problems
}

func TestDaemonBinaryDeps(t *testing.T) {
	for _, goos := range []string{"linux", "windows", "darwin"} {
		t.Run(goos, func(t *testing.T) {
			deps := goList(t, []string{"GOOS=" + goos, "CGO_ENABLED=0"}, "-deps", "./cmd/hubgate")
			for _, p := range checkDeps(deps, wantDeps, badDeps) {
				t.Error(p)
			}
		})
	}
}

// TestDaemonBinaryNeedsNoCgo: besides the standard library's optional cgo
// (net's resolver, os/user), nothing the daemon links has cgo files, so
// the static build (CGO_ENABLED=0) loses nothing.
func TestDaemonBinaryNeedsNoCgo(t *testing.T) {
	withCgo := goList(t, []string{"CGO_ENABLED=1"}, "-deps", "-f", "{{if and .CgoFiles (not .Standard)}}{{.ImportPath}}{{end}}", "./cmd/hubgate")
	for _, p := range withCgo {
		t.Errorf("%s has cgo files: the static build (CGO_ENABLED=0) would drop or break it", p)
	}
}

// TestLinkedOnlyBy checks linkedOnlyBy over every package of the module.
func TestLinkedOnlyBy(t *testing.T) {
	lines := goList(t, nil, "-f", "{{.ImportPath}}={{join .Deps \",\"}}", "./...")
	for _, line := range lines {
		pkg, deps, _ := strings.Cut(line, "=")
		rel, ok := strings.CutPrefix(pkg, module)
		if !ok {
			continue
		}
		for _, dep := range strings.Split(deps, ",") {
			rule, ok := linkedOnlyBy[dep]
			if !ok || mayLink(rule.by, rel) {
				continue
			}
			t.Errorf("%s links %s: %s", rel, dep, rule.reason)
		}
	}
}

func mayLink(by []string, pkg string) bool {
	return slices.ContainsFunc(by, func(p string) bool {
		if suffix, ok := strings.CutPrefix(p, "*"); ok {
			return strings.HasSuffix(pkg, suffix)
		}
		return matches(p, pkg)
	})
}

// TestCheckDepsCatchesADroppedLibrary: the check fails when a design-card
// library is dropped (resty replaced by a hand-written client) and when a
// never-linked package comes in.
func TestCheckDepsCatchesADroppedLibrary(t *testing.T) {
	var deps []string
	for p := range wantDeps {
		if p != "github.com/go-resty/resty/v2" {
			deps = append(deps, p)
		}
	}
	deps = append(deps, "github.com/hubgate/hubgate/internal/backoff")
	got := checkDeps(deps, wantDeps, badDeps)
	want := []string{
		"linked, but must never be: github.com/hubgate/hubgate/internal/backoff (" + badDeps["github.com/hubgate/hubgate/internal/backoff"] + ")",
		"not linked, but must be: github.com/go-resty/resty/v2 (" + wantDeps["github.com/go-resty/resty/v2"] + ")",
	}
	if !slices.Equal(got, want) {
		t.Errorf("checkDeps:\n got %q\nwant %q", got, want)
	}
	if !mayLink(linkedOnlyBy["github.com/spf13/cobra"].by, "cmd/hubgate/internal/controlcli") || mayLink(linkedOnlyBy["github.com/spf13/cobra"].by, "bridge/daemon") {
		t.Error("mayLink: controlcli may link cobra, bridge/daemon may not")
	}
}
