//go:build unix

package testenv

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// User is a local user a test acts as.
type User struct {
	Name     string
	UID, GID int
}

// NewUser creates a second local user for the test (useradd: a system
// user with no home and no login shell) and deletes it when the test
// ends. The test must run as root (RequireRoot); without useradd it is
// skipped (failed under CI=true).
func NewUser(t testing.TB) User {
	t.Helper()
	RequireRoot(t)
	useradd := RequireProgram(t, "useradd")
	userdel := RequireProgram(t, "userdel")
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := "hgtest" + hex.EncodeToString(b)
	if out, err := exec.Command(useradd, "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "--user-group", name).CombinedOutput(); err != nil {
		t.Fatalf("useradd %s: %v (%s)", name, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command(userdel, name).CombinedOutput(); err != nil {
			t.Errorf("userdel %s: %v (%s)", name, err, out)
		}
	})
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatalf("the new user %s: %v", name, err)
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err1 != nil || err2 != nil {
		t.Fatalf("the new user %s: uid %q gid %q", name, u.Uid, u.Gid)
	}
	return User{Name: name, UID: uid, GID: gid}
}

// CurlAs sends one request with curl running as u and returns the
// status. curl reads its options from stdin (-K -), so that what the
// request carries (a cookie, a token) stays off its command line. A POST
// sends the body "{}".
func CurlAs(t testing.TB, u User, method, url string, header http.Header) int {
	t.Helper()
	curl := RequireProgram(t, "curl")
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "url = %q\nrequest = %q\noutput = \"/dev/null\"\nwrite-out = \"%%{http_code}\"\nsilent\nmax-time = 10\nnoproxy = \"*\"\n", url, method)
	for k, vs := range header {
		for _, v := range vs {
			fmt.Fprintf(&cfg, "header = %q\n", k+": "+v)
		}
	}
	if method == "POST" {
		cfg.WriteString("data = \"{}\"\n")
	}
	cmd := exec.Command(curl, "-q", "-K", "-")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent"}
	cmd.Dir = "/"
	cmd.Stdin = strings.NewReader(cfg.String())
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(u.UID), Gid: uint32(u.GID)}}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("curl as uid %d: %v (%s)", u.UID, err, out)
	}
	code, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("curl as uid %d answered %q", u.UID, out)
	}
	return code
}
