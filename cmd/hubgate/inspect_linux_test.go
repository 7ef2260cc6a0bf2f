package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRunCommandCannotReadTheServersEnvironment (issue 14, D5): a run's
// command runs as the same user as `automate serve`, its parent, and must
// not read the access key out of /proc/$PPID/environ. Root could (it has
// CAP_SYS_PTRACE), so when the test runs as root the server, and with it
// the command, runs as the unprivileged uid 65534.
func TestRunCommandCannotReadTheServersEnvironment(t *testing.T) {
	const nobody = 65534
	asNobody := os.Geteuid() == 0
	dir, err := os.MkdirTemp("", "hg-d5-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	mk := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if asNobody {
			if err := os.Chown(p, nobody, nobody); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "hubgate")
	raw, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, raw, 0o755); err != nil {
		t.Fatal(err)
	}
	home, ws := mk("home"), mk("workspace")

	const key = "d5-key-b7e1c0a9f3d24e6b8a5c1f0e9d7b3a2c"
	cmd := exec.Command(bin, "automate", "serve", "--port", "0", "--workspace", ws)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + mk("config"),
		"HUBGATE_AUTOMATE_KEY=" + key}
	if asNobody {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() {
		t.Fatalf("serve printed no endpoint; stderr: %s", stderr.String())
	}
	url := sc.Text()
	go io.Copy(io.Discard, stdout)

	prompt := `read the parent\n#!run echo $PPID > ppid; cat /proc/$PPID/environ > leak 2> err; echo done`
	req, _ := http.NewRequest("POST", url+"/v1/runs", strings.NewReader(`{"prompt":"`+prompt+`","allowDestructiveTools":true}`))
	req.Header.Set("Authorization", "Bearer "+key)
	hc := &http.Client{Timeout: 60 * time.Second}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("run: %d %s", resp.StatusCode, body)
	}
	ppid, err := os.ReadFile(filepath.Join(ws, "ppid"))
	if err != nil {
		t.Fatalf("the command did not run: %v; run %s", err, body)
	}
	if got := strings.TrimSpace(string(ppid)); got != strconv.Itoa(cmd.Process.Pid) {
		t.Fatalf("the command's parent is %s, not the server %d", got, cmd.Process.Pid)
	}
	leak, _ := os.ReadFile(filepath.Join(ws, "leak"))
	errText, _ := os.ReadFile(filepath.Join(ws, "err"))
	if strings.Contains(string(leak), key) || len(leak) > 0 {
		t.Errorf("the command read %d bytes of the server's environment (key included: %v)", len(leak), strings.Contains(string(leak), key))
	}
	if !strings.Contains(string(errText), "Permission denied") {
		t.Errorf("reading /proc/$PPID/environ did not fail with EACCES: %q", errText)
	}
	if strings.Contains(string(body), key) {
		t.Error("the key is in the run's record")
	}
}
