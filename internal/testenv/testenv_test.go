package testenv

import (
	"fmt"
	"net"
	"os"
	"os/exec"
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

// Another program's listener on the port is not taken for the server's.
func TestGroupListensOnTellsListenersApart(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	if groupListensOn(syscall.Getpgrp(), port) != true {
		t.Fatal("this test's own listener is not seen as its group's")
	}
	script := filepath.Join(t.TempDir(), "idle.js")
	os.WriteFile(script, []byte(`setInterval(()=>{}, 1000)`), 0o644)
	cmd := exec.Command(RequireNode(t), script)
	proc.Prepare(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { proc.Kill(cmd); cmd.Wait() }()
	if groupListensOn(cmd.Process.Pid, port) {
		t.Fatal("another group's listener was taken for the node process's")
	}
}
