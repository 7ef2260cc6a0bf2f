package testenv

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hubgate/hubgate/internal/proc"
)

// recorder is a testing.TB that records Skipf and Fatalf instead of
// stopping the goroutine.
type recorder struct {
	testing.TB
	skipped, fatal string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Skipf(format string, args ...any)  { r.skipped = fmt.Sprintf(format, args...) }
func (r *recorder) Fatalf(format string, args ...any) { r.fatal = fmt.Sprintf(format, args...) }

func TestModuleRootHasGoMod(t *testing.T) {
	root := ModuleRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "module github.com/hubgate/hubgate") {
		t.Fatalf("go.mod at %s is not hubgate's", root)
	}
}

func TestNpmBinMissingSkipsOrFailsUnderCI(t *testing.T) {
	for _, ci := range []string{"", "true"} {
		t.Run("CI="+ci, func(t *testing.T) {
			t.Setenv("CI", ci)
			r := &recorder{TB: t}
			NpmBin(r, "no-such-package-for-hubgate/index.js")
			if ci == "true" {
				if r.fatal == "" || !strings.Contains(r.fatal, "run npm ci in testdata/npm") {
					t.Fatalf("under CI want a loud failure, got fatal=%q skipped=%q", r.fatal, r.skipped)
				}
			} else if r.skipped == "" || r.fatal != "" {
				t.Fatalf("want a skip, got fatal=%q skipped=%q", r.fatal, r.skipped)
			}
		})
	}
}

func TestNpmBinFindsInstalledPackage(t *testing.T) {
	p := NpmBin(t, "@modelcontextprotocol/server-everything/dist/index.js")
	if !filepath.IsAbs(p) {
		t.Fatalf("not absolute: %s", p)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
}

func TestStartNodeServerListensAndIsKilled(t *testing.T) {
	script := filepath.Join(t.TempDir(), "srv.js")
	os.WriteFile(script, []byte(`require("http").createServer((q,s)=>s.end("ok")).listen(+process.env.PORT,"127.0.0.1")`), 0o644)
	var pgid int
	t.Run("run", func(t *testing.T) {
		var port int
		port, pgid = StartNodeServer(t, nil, script)
		if !proc.GroupAlive(pgid) {
			t.Fatal("server group not alive while listening")
		}
		if !groupListensOn(pgid, port) {
			t.Fatalf("the group does not own the listener on %d", port)
		}
	})
	if err := WaitGroupGone(pgid, 10*time.Second); err != nil {
		t.Fatal(err)
	}
}

// A connection to RefusedAddr is refused for as long as the test runs.
func TestRefusedAddrRefuses(t *testing.T) {
	addr := RefusedAddr(t)
	for range 3 {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			t.Fatalf("a connection to %s was accepted", addr)
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("dial %s: %v, want ECONNREFUSED", addr, err)
		}
	}
}
