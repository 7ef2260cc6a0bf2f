package main

import (
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hubgate/hubgate/internal/testutil"
)

// The D5 tests (issue 14): a run's command runs as the same user as its
// parent (`automate serve`, the daemon) and must not read the parent's
// secrets out of /proc/$PPID/environ. Root could anyway (CAP_SYS_PTRACE),
// so when the tests run as root the parent, and with it the command, runs
// as the unprivileged uid 65534.

const nobodyID = 65534

// asNobody: the test runs as root and must drop to nobodyID.
func asNobody() bool { return os.Geteuid() == 0 }

// nobodyAttr starts a process as nobodyID when the test runs as root.
func nobodyAttr() *syscall.SysProcAttr {
	if !asNobody() {
		return nil
	}
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobodyID, Gid: nobodyID}}
}

// giveToNobody makes the trees at paths nobodyID's, and their parents
// traversable, when the test runs as root.
func giveToNobody(t *testing.T, paths ...string) {
	t.Helper()
	if !asNobody() {
		return
	}
	for _, p := range paths {
		err := filepath.WalkDir(p, func(q string, _ fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(q, nobodyID, nobodyID)
		})
		if err != nil {
			t.Fatal(err)
		}
		for dir := filepath.Dir(p); dir != "/" && dir != os.TempDir(); dir = filepath.Dir(dir) {
			if err := os.Chmod(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// sharedBinary is a copy of the hubgate binary that nobodyID can run.
func sharedBinary(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "hubgate")
	raw, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, raw, 0o755); err != nil {
		t.Fatal(err)
	}
	giveToNobody(t, dir)
	return bin
}

// readParentScript is a run_command script that writes, under dir, its
// parent's pid and what it could read of its parent's environment, then
// a file named done.
func readParentScript(dir string) string {
	return fmt.Sprintf("echo $PPID > %[1]s/ppid; cat /proc/$PPID/environ > %[1]s/leak 2> %[1]s/err; touch %[1]s/done", dir)
}

// checkNoRead checks what readParentScript left in dir: the parent was
// parentPID, and reading its environment failed with EACCES.
func checkNoRead(t *testing.T, dir string, parentPID int, secrets ...string) {
	t.Helper()
	ppid, err := os.ReadFile(filepath.Join(dir, "ppid"))
	if err != nil {
		t.Fatalf("the command did not run: %v", err)
	}
	if got := strings.TrimSpace(string(ppid)); got != strconv.Itoa(parentPID) {
		t.Fatalf("the command's parent is %s, not %d", got, parentPID)
	}
	leak, _ := os.ReadFile(filepath.Join(dir, "leak"))
	errText, _ := os.ReadFile(filepath.Join(dir, "err"))
	for _, s := range secrets {
		if strings.Contains(string(leak), s) {
			t.Errorf("the command read a secret out of its parent's environment")
		}
	}
	if len(leak) > 0 {
		t.Errorf("the command read %d bytes of its parent's environment", len(leak))
	}
	if !strings.Contains(string(errText), "Permission denied") {
		t.Errorf("reading /proc/$PPID/environ did not fail with EACCES: %q", errText)
	}
}

func TestRunCommandCannotReadTheServersEnvironment(t *testing.T) {
	bin := sharedBinary(t)
	root := t.TempDir()
	home, ws, cfg := filepath.Join(root, "home"), filepath.Join(root, "workspace"), filepath.Join(root, "config")
	for _, d := range []string{home, ws, cfg} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	giveToNobody(t, root)

	const key = "d5-key-b7e1c0a9f3d24e6b8a5c1f0e9d7b3a2c"
	environ := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + cfg, "HUBGATE_AUTOMATE_KEY=" + key}
	srv := startServeWith(t, bin, nobodyAttr(), environ, "--port", "0", "--workspace", ws)
	url := srv.url

	prompt := strings.ReplaceAll("read the parent\n#!run "+readParentScript(ws), "\n", `\n`)
	req, _ := http.NewRequest("POST", url+"/v1/runs", strings.NewReader(`{"prompt":"`+prompt+`","allowDestructiveTools":true}`))
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("run: %d %s", resp.StatusCode, body)
	}
	checkNoRead(t, ws, srv.pid(), key)
}

func TestRunCommandCannotReadTheDaemonsEnvironment(t *testing.T) {
	h := startHub(t)
	marks := t.TempDir()
	s := newDaemonSetup(t, h, daemonConfig{Bridge: `rules:
  - name: reader
    match: {command_glob: "read *"}
    run:
      allow_destructive_tools: true
      prompt: |
        Read the parent
        #!run ` + readParentScript(marks) + `
        #!answer read
`})
	s.binary = sharedBinary(t)
	s.sysProcAttr = nobodyAttr()
	giveToNobody(t, filepath.Dir(s.configPath), filepath.Dir(s.socket), marks)
	d := startListening(t, s)
	h.push("read 1", nil)
	// The run's command, a child, leaves a file: no event.
	testutil.Until(t, "the command to run", testutil.NoEvent, func() bool {
		_, err := os.Stat(filepath.Join(marks, "done"))
		return err == nil
	})
	checkNoRead(t, marks, d.pid(), s.key, s.hub.device.Token.Token)
}
