// Package testenv owns small helpers for tests that need things outside Go:
// node and the npm packages pinned in testdata/npm (MCP servers, the openai
// and SignalR clients), node servers on the port they bound themselves,
// an address that refuses connections, process-group checks, pid files
// written by children, and finding processes by an environment marker.
// Its waits are testutil's.
//
// A missing prerequisite skips the test, except when the environment
// variable CI is "true": then it fails loudly, so that CI never passes by
// skipping. Install the npm packages with `npm ci` in testdata/npm.
package testenv

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/hubgate/hubgate/internal/proc"
	"github.com/hubgate/hubgate/internal/testutil"
)

// ModuleRoot returns the directory holding go.mod, found upwards from the
// test's working directory.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("testenv: no go.mod above the working directory")
		}
		dir = parent
	}
}

// missing skips the test, or fails it when CI=true.
func missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("testenv: %s (CI=true: prerequisites are mandatory)", msg)
	}
	t.Skipf("testenv: %s", msg)
}

// NpmDir is the folder of the pinned npm packages, relative to the module
// root.
const NpmDir = "testdata/npm"

// NpmBin returns the absolute path of a file of an installed npm package
// of testdata/npm, for example
// "@modelcontextprotocol/server-everything/dist/index.js". It skips the
// test when the file is missing (fails under CI=true).
func NpmBin(t testing.TB, pkgPath string) string {
	t.Helper()
	p := filepath.Join(ModuleRoot(t), NpmDir, "node_modules", filepath.FromSlash(pkgPath))
	if _, err := os.Stat(p); err != nil {
		missing(t, "%s is not installed: run npm ci in %s", pkgPath, NpmDir)
	}
	return p
}

// RequireNode returns the path of the node executable; it skips the test
// when node is not on PATH (fails under CI=true).
func RequireNode(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("node")
	if err != nil {
		missing(t, "node is not on PATH")
	}
	return p
}

// listenReporter is preloaded into a node server (node --require): when
// the server's first TCP listener is bound it writes one JSON line,
// {"listening":<port>,"address":"..."}, to fd 3, the pipe StartNodeServer
// reads. A structured report of the port the server bound itself, not a
// log line's text nor a port chosen for it beforehand.
const listenReporter = `"use strict";
const net = require("net");
const fs = require("fs");
let told = false;
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  this.once("listening", () => {
    const a = this.address();
    if (told || !a || typeof a !== "object") return;
    told = true;
    try { fs.writeSync(3, JSON.stringify({ listening: a.port, address: a.address }) + "\n"); fs.closeSync(3); } catch (e) {}
  });
  return listen.apply(this, args);
};
`

// StartNodeServer starts `node script args...` in its own process group
// with PORT=0 and extra environment entries, waits until the server has
// bound its first TCP listener, and kills the group at cleanup. It returns
// the port the server bound (reported by a preloaded script on a pipe, see
// listenReporter) and the process group id. The script must listen on
// PORT (0: a port the kernel picks), as the MCP reference servers do.
func StartNodeServer(t testing.TB, env []string, script string, args ...string) (port, pgid int) {
	t.Helper()
	node := RequireNode(t)
	pre := filepath.Join(t.TempDir(), "report-listen.cjs")
	if err := os.WriteFile(pre, []byte(listenReporter), 0o644); err != nil {
		t.Fatalf("testenv: %v", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	defer r.Close()
	cmd := exec.Command(node, append([]string{"--require", pre, script}, args...)...)
	cmd.Env = append(append(os.Environ(), "PORT=0"), env...)
	cmd.ExtraFiles = []*os.File{w} // fd 3 in the child
	proc.Prepare(cmd)
	var stderr testutil.SyncBuffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if testing.Verbose() {
		cmd.Stdout, cmd.Stderr = io.MultiWriter(&stderr, os.Stderr), io.MultiWriter(&stderr, os.Stderr)
	}
	err = cmd.Start()
	w.Close() // the child holds the write end now
	if err != nil {
		t.Fatalf("testenv: start node: %v", err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	pgid = cmd.Process.Pid
	t.Cleanup(func() {
		proc.Kill(cmd)
		cmd.Process.Kill()
		select {
		case <-exited:
		case <-time.After(testutil.DefaultTimeout):
			t.Errorf("testenv: node server (pgid %d) did not exit", pgid)
		}
	})
	type report struct {
		Listening int    `json:"listening"`
		Address   string `json:"address"`
	}
	got := make(chan report, 1)
	go func() {
		var rep report
		line, _ := bufio.NewReader(r).ReadBytes('\n')
		json.Unmarshal(line, &rep) // none or a bad line: Listening stays 0
		got <- rep
	}()
	select {
	case rep := <-got:
		if rep.Listening <= 0 {
			t.Fatalf("testenv: the node server %s ended without listening; its output:\n%s", filepath.Base(script), stderr.String())
		}
		return rep.Listening, pgid
	case <-time.After(testutil.DefaultTimeout):
		t.Fatalf("testenv: the node server %s did not listen within %s; its output:\n%s", filepath.Base(script), testutil.DefaultTimeout, stderr.String())
		return 0, 0
	}
}

// WaitGroupGone waits until no process of the process group pgid exists
// (kill(-pgid, 0) fails with ESRCH), up to timeout. No event announces a
// group's end to a process that is not its parent: a bounded poll
// (testutil.NoEvent).
func WaitGroupGone(pgid int, timeout time.Duration) error {
	return waitGone(fmt.Sprintf("the process group %d to end", pgid), timeout, func() bool { return !proc.GroupAlive(pgid) })
}

// WaitPidGone waits until the process pid no longer exists, up to
// timeout: a bounded poll, as WaitGroupGone (a grandchild's exit reaches
// no event of ours).
func WaitPidGone(pid int, timeout time.Duration) error {
	return waitGone(fmt.Sprintf("the process %d to end", pid), timeout, func() bool { return !pidAlive(pid) })
}

func waitGone(what string, timeout time.Duration, gone func() bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return testutil.Wait(ctx, what, testutil.NoEvent, gone)
}

// RequireProgram returns the path of a program on PATH (chromium, sox,
// espeak-ng, ...); it skips the test when it is missing (fails under
// CI=true).
func RequireProgram(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		missing(t, "%s is not on PATH (scripts/test installs it)", name)
	}
	return p
}

// ArtifactPath is where a test writes a file for people to look at (a
// browser test's screenshot): a path of the test's own, which its checks
// read. When the test ends, the file is copied to
// $HUBGATE_TEST_ARTIFACTS/name, else <tmp>/hubgate-test-artifacts/name,
// replacing an older one in one rename, and the test's log says where:
// two test runs at once on one machine never see each other's file.
func ArtifactPath(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	t.Cleanup(func() {
		b, err := os.ReadFile(p)
		if err != nil {
			return // the test wrote none
		}
		dir := os.Getenv("HUBGATE_TEST_ARTIFACTS")
		if dir == "" {
			dir = filepath.Join(os.TempDir(), "hubgate-test-artifacts")
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Logf("artifact %s not kept: %v", name, err)
			return
		}
		tmp, err := os.CreateTemp(dir, name+".*")
		if err == nil {
			_, err = tmp.Write(b)
			if err == nil {
				err = tmp.Chmod(0o644) // for people to look at, as before
			}
			if cerr := tmp.Close(); err == nil {
				err = cerr
			}
			if err == nil {
				err = os.Rename(tmp.Name(), filepath.Join(dir, name))
			}
			if err != nil {
				os.Remove(tmp.Name())
			}
		}
		if err != nil {
			t.Logf("artifact %s not kept: %v", name, err)
			return
		}
		t.Logf("artifact kept at %s", filepath.Join(dir, name))
	})
	return p
}

// GoBuild builds the main package at pkg (a path under the module root,
// such as "./automate/toolkit/testdata/mcpasker") into the test's temporary
// directory and returns the binary's path.
func GoBuild(t testing.TB, pkg string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Dir = ModuleRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("testenv: go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}
