// Package testenv owns small helpers for tests that need things outside Go:
// node and the npm packages pinned in testdata/npm (MCP servers, the openai
// and SignalR clients), free loopback ports, process-group checks, pid
// files written by children, and finding processes by an environment
// marker.
//
// A missing prerequisite skips the test, except when the environment
// variable CI is "true": then it fails loudly, so that CI never passes by
// skipping. Install the npm packages with `npm ci` in testdata/npm.
package testenv

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// StartNodeServer starts `node script args...` in its own process group
// with PORT set to a free port and extra environment entries, waits until a
// process of that group listens on the port, and kills the group at
// cleanup. It returns the port and the process group id. A port taken by
// another program between choosing and binding (the server then fails to
// listen) is retried with another: the listener must be the server's own,
// not whatever answers on the port.
func StartNodeServer(t testing.TB, env []string, script string, args ...string) (port, pgid int) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		port = FreePort(t)
		pgid, ok := startNodeOn(t, port, env, script, args...)
		if ok {
			return port, pgid
		}
		if attempt == 5 {
			t.Fatalf("testenv: the node server never listened on a port of its own (%d attempts)", attempt)
		}
	}
}

// startNodeOn starts the server on port and reports whether it listens there.
func startNodeOn(t testing.TB, port int, env []string, script string, args ...string) (int, bool) {
	t.Helper()
	node := RequireNode(t)
	cmd := exec.Command(node, append([]string{script}, args...)...)
	cmd.Env = append(append(os.Environ(), "PORT="+strconv.Itoa(port)), env...)
	proc.Prepare(cmd)
	if testing.Verbose() {
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("testenv: start node: %v", err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	pgid := cmd.Process.Pid
	stop := func() {
		proc.Kill(cmd)
		cmd.Process.Kill()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			t.Errorf("testenv: node server (pgid %d) did not exit", pgid)
		}
	}
	died := false
	listening := testutil.Eventually(30*time.Second, func() bool {
		select {
		case <-exited:
			died = true
			return true
		default:
			return groupListensOn(pgid, port)
		}
	})
	if died {
		return 0, false // it could not bind (the port was taken meanwhile)
	}
	if !listening {
		stop()
		t.Fatalf("testenv: the node server did not listen on 127.0.0.1:%d within 30s", port)
	}
	t.Cleanup(stop)
	return pgid, true
}

// WaitGroupGone polls until no process of the process group pgid exists
// (kill(-pgid, 0) fails with ESRCH), up to timeout.
func WaitGroupGone(pgid int, timeout time.Duration) error {
	if testutil.Eventually(timeout, func() bool { return !proc.GroupAlive(pgid) }) {
		return nil
	}
	return fmt.Errorf("pgid %d: the process group still has processes after %s", pgid, timeout)
}

// WaitPidGone polls until the process pid no longer exists, up to timeout.
func WaitPidGone(pid int, timeout time.Duration) error {
	if testutil.Eventually(timeout, func() bool { return !pidAlive(pid) }) {
		return nil
	}
	return fmt.Errorf("pid %d still exists after %s", pid, timeout)
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
