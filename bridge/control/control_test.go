//go:build unix

package control

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/internal/testutil"
)

type fakeBackend struct {
	mu      sync.Mutex
	status  bridge.Status
	entries []journal.Entry
	cancel  bridge.CancelResult
	err     error
	limits  []int
	forces  []bool
}

func (f *fakeBackend) Status(context.Context) (bridge.Status, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.status, f.err
}

func (f *fakeBackend) History(_ context.Context, limit int) ([]journal.Entry, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.limits = append(f.limits, limit)
	if f.err != nil {
		return nil, f.err
	}
	n := min(limit, len(f.entries))
	return f.entries[:n], nil
}

func (f *fakeBackend) Cancel(_ context.Context, force bool) (bridge.CancelResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forces = append(f.forces, force)
	return f.cancel, f.err
}

func (f *fakeBackend) setErr(err error) {
	f.mu.Lock()
	f.err = err
	f.mu.Unlock()
}

// socketDir returns a short private directory (socket paths are limited to
// about 100 bytes, and t.TempDir can be long).
func socketDir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("", "hgctl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// startServer listens on path and serves until the test ends; it returns
// the server and a function that stops it and waits for Serve to return.
func startServer(t testing.TB, path string, b Backend, log *slog.Logger) (*Server, func()) {
	t.Helper()
	s, err := Listen(Config{Path: path, Handler: b, Logger: log})
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Serve: %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Error("Serve did not return after its context ended")
			}
		})
	}
	t.Cleanup(stop)
	return s, stop
}

func sampleStatus() bridge.Status {
	t0 := time.Date(2026, 11, 21, 19, 49, 38, 123000000, time.UTC)
	return bridge.Status{
		PID: 4242, Version: "0.1.0", DeviceID: "dev-1", StartedAt: t0, UptimeMs: 61000,
		Hub: bridge.HubStatus{Status: "reconnecting", Cause: "network", Reason: "dial tcp: connection refused",
			Since: t0.Add(time.Minute), Attempt: 3, RetryAt: t0.Add(2 * time.Minute), NeedsRepair: false},
		Listening: true,
		Current: &bridge.CurrentRun{CommandID: 17, Rule: "summarize", RequestID: "req-1", Status: bridge.RunParked,
			StartedAt: t0.Add(30 * time.Second), Command: "sum"},
		Queue: []bridge.QueuedCommand{
			{CommandID: 18, Rule: "summarize", Command: "sum 2", QueuedAt: t0.Add(40 * time.Second)},
			{CommandID: 19, Rule: "other", Command: "x", QueuedAt: t0.Add(41 * time.Second)},
		},
		Automate: bridge.AutomateTarget{Mode: bridge.ModeCohosted, Endpoint: "http://127.0.0.1:4317"},
		Counters: bridge.Counters{Received: 20, Duplicates: 1, Started: 15, Queued: 3, Dropped: 1, Ignored: 2, Abandoned: 1, Completed: 12, Failed: 1, Canceled: 1},
	}
}

func sampleEntries() []journal.Entry {
	final := "final"
	t0 := time.Date(2026, 11, 21, 19, 0, 0, 0, time.UTC)
	var out []journal.Entry
	for i := 5; i >= 1; i-- {
		out = append(out, journal.Entry{ID: int64(i), Boot: 1, Session: 1, Seq: uint64(i), ReceivedAt: t0.Add(time.Duration(i) * time.Second),
			Command: fmt.Sprintf("cmd %d", i), Macro: json.RawMessage(`{"id":"m"}`), Rule: "r", Decision: journal.DecisionStarted,
			Run: journal.RunFinished, RequestID: fmt.Sprintf("req-%d", i), Status: automate.StatusCompleted, Answer: "ok",
			FinalAnswer: &final, Usage: &automate.Usage{InputTokens: i}, UpdatedAt: t0.Add(time.Hour)})
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(socketDir(t), "ctl.sock")
	b := &fakeBackend{status: sampleStatus(), entries: sampleEntries(),
		cancel: bridge.CancelResult{Stopped: true, Mode: automate.CancelModeTerminate, CommandID: 17, RequestID: "req-1", Message: "terminated"}}
	startServer(t, path, b, nil)
	c := Dial(path)
	defer c.Close()

	st, err := c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := sampleStatus(); !reflect.DeepEqual(st, want) {
		t.Fatalf("Status:\n got %+v\nwant %+v", st, want)
	}

	h, err := c.History(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	if want := sampleEntries()[:3]; !reflect.DeepEqual(h, want) {
		t.Fatalf("History(3):\n got %+v\nwant %+v", h, want)
	}
	if _, err := c.History(ctx, 0); err != nil {
		t.Fatal(err)
	}
	res, err := c.Cancel(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if res != b.cancel {
		t.Fatalf("Cancel = %+v", res)
	}
	if _, err := c.Cancel(ctx, false); err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	limits, forces := b.limits, b.forces
	b.mu.Unlock()
	if !reflect.DeepEqual(limits, []int{3, DefaultHistoryLimit}) {
		t.Errorf("limits passed to the backend = %v", limits)
	}
	if !reflect.DeepEqual(forces, []bool{true, false}) {
		t.Errorf("forces passed to the backend = %v", forces)
	}

	// Backend failure: 500 with its message, as a *ServerError.
	b.setErr(errors.New("journal is closed"))
	_, err = c.Status(ctx)
	var se *ServerError
	if !errors.As(err, &se) || se.StatusCode != http.StatusInternalServerError || se.Message != "journal is closed" {
		t.Fatalf("Status with a failing backend: %v", err)
	}
	if errors.Is(err, ErrNotRunning) {
		t.Fatal("a failing backend is not 'not running'")
	}
}

func TestStatusDefaults(t *testing.T) {
	path := filepath.Join(socketDir(t), "ctl.sock")
	startServer(t, path, &fakeBackend{}, nil)
	raw := rawGet(t, path, "/v1/status")
	if raw.code != 200 {
		t.Fatalf("status %d %s", raw.code, raw.body)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(raw.body), &m); err != nil {
		t.Fatal(err)
	}
	if pid, _ := m["pid"].(float64); int(pid) != os.Getpid() {
		t.Errorf("pid = %v, want this process's %d", m["pid"], os.Getpid())
	}
	if q, ok := m["queue"].([]any); !ok || len(q) != 0 {
		t.Errorf("queue = %#v, want []", m["queue"])
	}
	if cur, ok := m["current"]; !ok || cur != nil {
		t.Errorf("current = %#v, want null", m["current"])
	}
}

type rawAnswer struct {
	code  int
	body  string
	ctype string
}

func rawDo(t testing.TB, path, method, target, body string) rawAnswer {
	t.Helper()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req, _ := http.NewRequest(method, "http://x"+target, strings.NewReader(body))
	if err := req.Write(c); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return rawAnswer{resp.StatusCode, string(b), resp.Header.Get("Content-Type")}
}

func rawGet(t testing.TB, path, target string) rawAnswer { return rawDo(t, path, "GET", target, "") }

func TestBadRequests(t *testing.T) {
	path := filepath.Join(socketDir(t), "ctl.sock")
	b := &fakeBackend{entries: sampleEntries()}
	startServer(t, path, b, nil)
	cases := []struct {
		method, target, body string
		code                 int
		msg                  string
	}{
		{"GET", "/v1/history?limit=0", "", 400, "limit"},
		{"GET", "/v1/history?limit=-3", "", 400, "limit"},
		{"GET", "/v1/history?limit=abc", "", 400, "limit"},
		{"GET", "/v1/history?limit=10001", "", 400, "limit"},
		{"POST", "/v1/cancel", "{force:", 400, "force"},
		{"POST", "/v1/cancel", `{"force":"yes"}`, 400, "force"},
		{"POST", "/v1/cancel", strings.Repeat(" ", maxBody+10), 400, "body"},
		{"GET", "/v1/nope", "", 404, "no such route"},
		{"POST", "/v1/status", "", 405, "not allowed"},
		{"GET", "/v1/cancel", "", 405, "not allowed"},
	}
	for _, c := range cases {
		a := rawDo(t, path, c.method, c.target, c.body)
		var e errorBody
		if a.code != c.code || a.ctype != "application/json" || json.Unmarshal([]byte(a.body), &e) != nil || !strings.Contains(e.Error, c.msg) {
			t.Errorf("%s %s: %d %s %q, want %d with an error naming %q", c.method, c.target, a.code, a.ctype, a.body, c.code, c.msg)
		}
	}
	// An empty cancel body means force=false.
	if a := rawDo(t, path, "POST", "/v1/cancel", ""); a.code != 200 {
		t.Errorf("empty cancel body: %d %s", a.code, a.body)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.limits) != 0 || !reflect.DeepEqual(b.forces, []bool{false}) {
		t.Errorf("rejected requests reached the backend: limits %v forces %v", b.limits, b.forces)
	}
	// The client reports a 400 as a ServerError.
	_, err := Dial(path).History(context.Background(), -1)
	var se *ServerError
	if !errors.As(err, &se) || se.StatusCode != 400 {
		t.Errorf("client History(-1): %v", err)
	}
}

func TestSocketAndDirectoryModes(t *testing.T) {
	base := socketDir(t)
	path := filepath.Join(base, "run", "hubgate", "ctl.sock")
	startServer(t, path, &fakeBackend{}, nil)
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Type() != fs.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode = %v, want a socket with 0600", fi.Mode())
	}
	for _, d := range []string{filepath.Join(base, "run"), filepath.Join(base, "run", "hubgate")} {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o700 {
			t.Errorf("%s mode = %o, want 0700", d, fi.Mode().Perm())
		}
	}
	lfi, err := os.Stat(path + ".lock")
	if err != nil || lfi.Mode().Perm() != 0o600 {
		t.Errorf("lock file: %v %v", lfi, err)
	}
}

func TestDirectoryChecks(t *testing.T) {
	for _, mode := range []os.FileMode{0o770, 0o720, 0o757, 0o777 | os.ModeSticky} {
		t.Run(fmt.Sprintf("%o", mode), func(t *testing.T) {
			dir := filepath.Join(socketDir(t), "d")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, mode); err != nil {
				t.Fatal(err)
			}
			_, err := Listen(Config{Path: filepath.Join(dir, "ctl.sock"), Handler: &fakeBackend{}})
			if !errors.Is(err, ErrInsecureDir) {
				t.Fatalf("Listen in a %v directory: %v, want ErrInsecureDir", mode, err)
			}
			if _, err := os.Lstat(filepath.Join(dir, "ctl.sock")); !errors.Is(err, fs.ErrNotExist) {
				t.Error("a socket was created in the refused directory")
			}
		})
	}
	t.Run("readable by others is fine", func(t *testing.T) {
		dir := filepath.Join(socketDir(t), "d")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		os.Chmod(dir, 0o755)
		s, err := Listen(Config{Path: filepath.Join(dir, "ctl.sock"), Handler: &fakeBackend{}})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	})
	t.Run("owned by another user", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("needs root to chown")
		}
		dir := filepath.Join(socketDir(t), "d")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dir, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		_, err := Listen(Config{Path: filepath.Join(dir, "ctl.sock"), Handler: &fakeBackend{}})
		if !errors.Is(err, ErrInsecureDir) || !strings.Contains(err.Error(), "owned by uid 65534") {
			t.Fatalf("Listen in another user's directory: %v", err)
		}
	})
	t.Run("not a socket", func(t *testing.T) {
		path := filepath.Join(socketDir(t), "ctl.sock")
		if err := os.WriteFile(path, []byte("precious"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Listen(Config{Path: path, Handler: &fakeBackend{}})
		if err == nil || !strings.Contains(err.Error(), "not a socket") {
			t.Fatalf("Listen over a regular file: %v", err)
		}
		if b, _ := os.ReadFile(path); string(b) != "precious" {
			t.Fatal("the regular file was touched")
		}
	})
	t.Run("path too long", func(t *testing.T) {
		path := filepath.Join(socketDir(t), strings.Repeat("x", 120)+".sock")
		_, err := Listen(Config{Path: path, Handler: &fakeBackend{}})
		if err == nil || !strings.Contains(err.Error(), "longer than") {
			t.Fatalf("Listen with a long path: %v", err)
		}
	})
	t.Run("config", func(t *testing.T) {
		if _, err := Listen(Config{Handler: &fakeBackend{}}); err == nil {
			t.Error("empty path accepted")
		}
		if _, err := Listen(Config{Path: filepath.Join(socketDir(t), "s")}); err == nil {
			t.Error("nil handler accepted")
		}
	})
}

func TestStaleSocketRemoved(t *testing.T) {
	path := filepath.Join(socketDir(t), "ctl.sock")
	// A socket file left by a dead process: bound, then closed without unlink.
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("setting up the stale socket: %v", err)
	}
	if _, err := Dial(path).Status(context.Background()); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("client on a stale socket: %v, want ErrNotRunning", err)
	}

	var logs testutil.SyncBuffer
	startServer(t, path, &fakeBackend{status: bridge.Status{DeviceID: "fresh"}}, slog.New(slog.NewTextHandler(&logs, nil)))
	st, err := Dial(path).Status(context.Background())
	if err != nil || st.DeviceID != "fresh" {
		t.Fatalf("Status after replacing the stale socket: %+v %v", st, err)
	}
	if !strings.Contains(logs.String(), "removed a stale socket") {
		t.Errorf("no log of the stale socket removal: %s", logs.String())
	}
}

func TestSecondServerRefused(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(socketDir(t), "ctl.sock")
	_, stop := startServer(t, path, &fakeBackend{status: bridge.Status{DeviceID: "first"}}, nil)

	_, err := Listen(Config{Path: path, Handler: &fakeBackend{}})
	if !errors.Is(err, ErrAlreadyRunning) || !strings.Contains(err.Error(), "another hubgate daemon is running") {
		t.Fatalf("second Listen: %v, want ErrAlreadyRunning", err)
	}
	if st, err := Dial(path).Status(ctx); err != nil || st.DeviceID != "first" {
		t.Fatalf("the first server after the refused second: %+v %v", st, err)
	}

	// After a clean stop: socket removed, lock released, a new server starts.
	stop()
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("socket left after shutdown: %v", err)
	}
	if _, err := Dial(path).Status(ctx); !errors.Is(err, ErrNotRunning) {
		t.Errorf("after shutdown: %v, want ErrNotRunning", err)
	}
	startServer(t, path, &fakeBackend{status: bridge.Status{DeviceID: "second"}}, nil)
	if st, err := Dial(path).Status(ctx); err != nil || st.DeviceID != "second" {
		t.Fatalf("restarted server: %+v %v", st, err)
	}
}

func TestForeignListenerNotRemoved(t *testing.T) {
	path := filepath.Join(socketDir(t), "ctl.sock")
	ln, err := net.Listen("unix", path) // answers, but holds no lock
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	_, err = Listen(Config{Path: path, Handler: &fakeBackend{}})
	if !errors.Is(err, ErrAlreadyRunning) {
		t.Fatalf("Listen over a live socket: %v, want ErrAlreadyRunning", err)
	}
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("the live socket was removed: %v", err)
	}
	// The lock was released on failure: once the foreign listener is gone,
	// Listen succeeds.
	ln.Close()
	s, err := Listen(Config{Path: path, Handler: &fakeBackend{}})
	if err != nil {
		t.Fatalf("Listen after the foreign listener closed: %v", err)
	}
	s.Close()
}

func TestNotRunning(t *testing.T) {
	ctx := context.Background()
	dir := socketDir(t)
	for name, path := range map[string]string{
		"no socket":    filepath.Join(dir, "none.sock"),
		"no directory": filepath.Join(dir, "missing", "ctl.sock"),
	} {
		c := Dial(path)
		if _, err := c.Status(ctx); !errors.Is(err, ErrNotRunning) {
			t.Errorf("%s: Status: %v, want ErrNotRunning", name, err)
		}
		if _, err := c.History(ctx, 5); !errors.Is(err, ErrNotRunning) {
			t.Errorf("%s: History: %v, want ErrNotRunning", name, err)
		}
		if _, err := c.Cancel(ctx, false); !errors.Is(err, ErrNotRunning) {
			t.Errorf("%s: Cancel: %v, want ErrNotRunning", name, err)
		}
	}
}

// Child processes: a server that runs until killed, and a client that
// reports one Status call.
const (
	childServerEnv = "HUBGATE_CONTROL_CHILD_SERVER"
	childClientEnv = "HUBGATE_CONTROL_CHILD_CLIENT"
)

func TestChildProcess(t *testing.T) {
	if path := os.Getenv(childServerEnv); path != "" {
		s, err := Listen(Config{Path: path, Handler: &fakeBackend{status: bridge.Status{DeviceID: "child"}}})
		if err != nil {
			fmt.Println("ERR", err)
			os.Exit(2)
		}
		fmt.Println("READY")
		s.Serve(context.Background())
		os.Exit(0)
	}
	if path := os.Getenv(childClientEnv); path != "" {
		st, err := Dial(path).Status(context.Background())
		if err != nil {
			fmt.Println("ERR", err)
			os.Exit(0)
		}
		fmt.Println("OK", st.DeviceID)
		os.Exit(0)
	}
	t.Skip("helper process")
}

func TestKilledDaemonLeavesAStaleSocket(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(socketDir(t), "ctl.sock")
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), childServerEnv+"="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "READY" {
		t.Fatalf("child server: %q %v", line, err)
	}
	if st, err := Dial(path).Status(ctx); err != nil || st.DeviceID != "child" {
		t.Fatalf("Status of the child daemon: %+v %v", st, err)
	}
	_, err = Listen(Config{Path: path, Handler: &fakeBackend{}})
	if !errors.Is(err, ErrAlreadyRunning) {
		t.Fatalf("Listen while another process serves: %v, want ErrAlreadyRunning", err)
	}

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("a SIGKILLed daemon should leave its socket behind: %v", err)
	}
	if _, err := Dial(path).Status(ctx); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("client after the daemon was killed: %v, want ErrNotRunning", err)
	}
	startServer(t, path, &fakeBackend{status: bridge.Status{DeviceID: "successor"}}, nil)
	if st, err := Dial(path).Status(ctx); err != nil || st.DeviceID != "successor" {
		t.Fatalf("successor: %+v %v", st, err)
	}
}

func TestPeerCredentials(t *testing.T) {
	// Same uid: every other test's round trip, and a child process here.
	dir := socketDir(t)
	path := filepath.Join(dir, "ctl.sock")
	var logs testutil.SyncBuffer
	startServer(t, path, &fakeBackend{status: bridge.Status{DeviceID: "peer"}}, slog.New(slog.NewTextHandler(&logs, nil)))

	bin := os.Args[0]
	run := func(cred *syscall.Credential) string {
		t.Helper()
		cmd := exec.Command(bin, "-test.run=^TestChildProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), childClientEnv+"="+path)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		cmd.Dir = "/"
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child client: %v: %s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if got := run(nil); got != "OK peer" {
		t.Fatalf("same-uid child: %q", got)
	}

	if os.Geteuid() != 0 {
		t.Skip("a different-uid client needs root")
	}
	if runtime.GOOS != "linux" {
		t.Skip("peer credentials are checked on Linux only")
	}
	// Open the file-permission layer on purpose, so that only the peer
	// credential check stands between uid 65534 and the API.
	binDir := socketDir(t)
	nobodyBin := filepath.Join(binDir, "control.test")
	copyFile(t, bin, nobodyBin, 0o755)
	for _, p := range []string{binDir, dir} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
	bin = nobodyBin
	if got := run(&syscall.Credential{Uid: 0, Gid: 0}); got != "OK peer" {
		t.Fatalf("root child through the copied binary: %q", got)
	}
	got := run(&syscall.Credential{Uid: 65534, Gid: 65534})
	t.Logf("uid 65534 child: %s", got)
	if !strings.HasPrefix(got, "ERR") || !strings.Contains(got, "closed the connection without answering") {
		t.Fatalf("uid 65534 child: %q, want a closed connection", got)
	}
	if !strings.Contains(logs.String(), "refused a connection from another user") || !strings.Contains(logs.String(), "peerUid=65534") {
		t.Fatalf("server log lacks the refusal: %s", logs.String())
	}
}

func copyFile(t testing.TB, from, to string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, mode); err != nil {
		t.Fatal(err)
	}
}

// Every way a connection can end before an answer (the peer-uid refusal
// closes it at once, before or after the request is written) reads as the
// same clear error; other errors keep their text.
func TestDialErrorClassifiesClosedConnections(t *testing.T) {
	c := Dial("/run/hubgate/ctl.sock")
	write := func(errno error) error {
		return fmt.Errorf("Get %q: %w", "http://hubgate/v1/status", &net.OpError{Op: "write", Net: "unix", Err: os.NewSyscallError("write", errno)})
	}
	for _, err := range []error{io.EOF, write(syscall.EPIPE), write(syscall.ECONNRESET),
		errors.New("http: server closed idle connection")} {
		got := c.dialError(err)
		if !strings.Contains(got.Error(), "closed the connection without answering") {
			t.Errorf("dialError(%v) = %v, want a closed connection", err, got)
		}
	}
	dial := &net.OpError{Op: "dial", Net: "unix", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	if got := c.dialError(dial); !errors.Is(got, ErrNotRunning) {
		t.Errorf("dialError(refused) = %v, want ErrNotRunning", got)
	}
	if got := c.dialError(errors.New("something else")); got.Error() != "control: something else" {
		t.Errorf("dialError(other) = %v", got)
	}
}

// TestLockNamesTheHolder: a second Lock of the same socket fails with the
// holder's PID, Listen with the caller's lock neither takes nor releases
// it, and after Release the lock can be taken again.
func TestLockNamesTheHolder(t *testing.T) {
	path := filepath.Join(socketDir(t), "c.sock")
	l, err := Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path + ".lock"); err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Fatalf("lock file holds %q (%v), want this PID", b, err)
	}
	_, err = Lock(path)
	var are *AlreadyRunningError
	if !errors.As(err, &are) || !errors.Is(err, ErrAlreadyRunning) || are.PID != os.Getpid() ||
		!strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("second Lock: %v, want an AlreadyRunningError naming pid %d", err, os.Getpid())
	}
	if _, err := Listen(Config{Path: path, Handler: &fakeBackend{}}); !errors.Is(err, ErrAlreadyRunning) {
		t.Fatalf("Listen without the lock while it is held: %v", err)
	}
	s, err := Listen(Config{Path: path, Handler: &fakeBackend{}, Lock: l})
	if err != nil {
		t.Fatalf("Listen with the caller's lock: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Lock(path); !errors.Is(err, ErrAlreadyRunning) {
		t.Fatalf("the server released the caller's lock: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); err != nil {
		t.Fatalf("second Release: %v", err)
	}
	l2, err := Lock(path)
	if err != nil {
		t.Fatalf("Lock after Release: %v", err)
	}
	l2.Release()
}
