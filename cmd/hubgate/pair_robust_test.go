package main

// Pairing that never hangs and never leaves a torn state (issue 17, item
// 8), with the command (runCmd: the binary where the environment needs a
// process of its own), the mock remote service and a real Secret Service
// (.ci/with-keyring).

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hubgate/hubgate/deviceapi/pairing"
	"github.com/hubgate/hubgate/hub/mockhub"
)

// A sign-in page that refuses the request fails `pair` at once with exit
// 6, naming the likely cause; nothing is created or stored. The default
// 5-minute sign-in timeout is in force: the test's own deadline (runCmd,
// 60 s) is the guard, no duration is measured.
func TestPairFailsAtOnceWhenTheSignInPageRefuses(t *testing.T) {
	requireKeyring(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	registered := fmt.Sprintf("http://127.0.0.1:%d/cb", ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	// freeAddress is a redirect address on a port free now; pair
	// listens on it, so the test has to let it go.
	freeAddress := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return fmt.Sprintf("http://127.0.0.1:%d/cb", ln.Addr().(*net.TCPAddr).Port)
	}
	other := freeAddress()
	cases := []struct {
		name  string
		cfg   mockhub.Config
		extra []string
		args  []string
		want  []string
	}{
		{name: "a wrong client id", extra: []string{"HUBGATE_CLIENT_ID=not-our-client"},
			want: []string{"400", "unknown client_id", "not-our-client", "client id", "--client-id"}},
		{name: "an unregistered redirect address", cfg: mockhub.Config{RedirectURIs: []string{registered}}, args: []string{"--redirect-uri", other},
			want: []string{"400", "not registered", other, "redirect address", "--redirect-uri"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clearPairSecrets(t)
			t.Cleanup(func() { clearPairSecrets(t) })
			m, apiURL := startMock(t, tc.cfg, nil)
			// A browser that shows the page and does nothing more: only the
			// check of the page can end the sign-in early.
			e := pairEnviron(t, apiURL, append([]string{"BROWSER=" + fakeBrowser(t, "exit 0")}, tc.extra...)...)
			r := runCmd(t, e, "", append([]string{"pair"}, tc.args...)...)
			// pair listens on the redirect address's port, which the test
			// could only find free and let go: another process may take it
			// in between. Only that outcome is tried again, on a new free
			// address, a bounded number of times.
			args, want := tc.args, tc.want
			for try := 0; try < 3 && r.code == 1 && strings.Contains(r.stderr, "address already in use") && slices.Contains(args, other); try++ {
				next := freeAddress()
				swap := func(in []string) []string {
					out := slices.Clone(in)
					for i, v := range out {
						out[i] = strings.ReplaceAll(v, other, next)
					}
					return out
				}
				args, want = swap(tc.args), swap(tc.want)
				r = runCmd(t, e, "", append([]string{"pair"}, args...)...)
			}
			if r.code != ExitSignIn {
				t.Fatalf("exit %d, want %d\n%s", r.code, ExitSignIn, r.stderr)
			}
			for _, w := range want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr does not say %q:\n%s", w, r.stderr)
				}
			}
			if len(m.Devices()) != 0 {
				t.Error("a device was created")
			}
			assertNothingStored(t, e)
		})
	}
}

// --replace and --reuse keep the client id, the device type, the api url
// and the redirect address that state.json recorded; a flag overrides one,
// the environment does not.
func TestPairReplaceAndReuseKeepTheStateValues(t *testing.T) {
	requireKeyring(t)
	requireCurl(t)
	clearPairSecrets(t)
	t.Cleanup(func() { clearPairSecrets(t) })
	const client, devType = "pad-client", "pad-type"
	m, apiURL := startMock(t, mockhub.Config{ClientID: client, DeviceTypeID: devType}, nil)
	// Nothing in the environment: the first pairing's settings are flags.
	e := pairEnviron(t, apiURL, "HUBGATE_API_URL=", "HUBGATE_CLIENT_ID=", "HUBGATE_DEVICE_TYPE=")
	if r := runCmd(t, e, "", "pair", "--api-url", apiURL, "--client-id", client, "--device-type", devType); r.code != 0 {
		t.Fatalf("first pair: %d\n%s", r.code, r.stderr)
	}
	first, err := pairing.LoadState(statePathOf(e))
	if err != nil || first.ClientID != client || first.DeviceTypeID != devType {
		t.Fatalf("first state %+v %v", first, err)
	}

	r := runCmd(t, e, "", "pair", "--replace", "--api-url", apiURL)
	if r.code != 0 {
		t.Fatalf("pair --replace --api-url: %d\n%s", r.code, r.stderr)
	}
	second, err := pairing.LoadState(statePathOf(e))
	if err != nil || second.DeviceID == first.DeviceID || second.ClientID != client || second.DeviceTypeID != devType || second.APIURL != apiURL {
		t.Fatalf("after --replace: %+v %v", second, err)
	}
	devs := m.Devices()
	if len(devs) != 2 || devs[0].DeviceTypeID != devType || devs[1].DeviceTypeID != devType {
		t.Fatalf("devices %+v", devs)
	}
	if !strings.Contains(r.stderr, "remote.client_id") || !strings.Contains(r.stderr, "state.json") {
		t.Errorf("--replace does not say what it kept:\n%s", r.stderr)
	}

	// The environment names another client: state.json wins, and says so.
	e2 := append(slices.Clone(e), "HUBGATE_CLIENT_ID=someone-else")
	r = runCmd(t, e2, "", "pair", "--reuse")
	if r.code != 0 || !strings.Contains(r.stderr, "someone-else") || !strings.Contains(r.stderr, "--client-id") {
		t.Fatalf("pair --reuse with another client id in the environment: %d\n%s", r.code, r.stderr)
	}
	third, _ := pairing.LoadState(statePathOf(e))
	if third.DeviceID != second.DeviceID || third.ClientID != client || third.TokenID == second.TokenID {
		t.Fatalf("after --reuse: %+v", third)
	}
	// A flag does override it (the mock then refuses the unknown client).
	if r := runCmd(t, e, "", "pair", "--reuse", "--client-id", "someone-else"); r.code != ExitSignIn || !strings.Contains(r.stderr, "someone-else") {
		t.Fatalf("pair --reuse --client-id: %d\n%s", r.code, r.stderr)
	}
}

// With stdin not a terminal (/dev/null, a character device, or a pipe)
// and a device paired, pair is a usage error naming --reuse and
// --replace, and changes nothing. The /dev/null case is the binary: its
// environment (newUserSetup's runtime dir) needs a process of its own.
func TestPairWithoutATerminalNamesReuseAndReplace(t *testing.T) {
	m, apiURL, private := newUserSetup(t)
	e := pairEnviron(t, apiURL, private...)
	if r := runCmd(t, e, "", "pair"); r.code != 0 {
		t.Fatalf("first pair: %d\n%s", r.code, r.stderr)
	}
	before, _ := os.ReadFile(statePathOf(e))
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "pair")
	cmd.Env, cmd.Stdin = e, devNull
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Run()
	code := -1
	if cmd.ProcessState != nil {
		code = cmd.ProcessState.ExitCode()
	}
	if code != ExitUsage || !strings.Contains(stderr.String(), "--reuse") || !strings.Contains(stderr.String(), "--replace") {
		t.Fatalf("pair with stdin /dev/null: exit %d (%v)\n%s", code, err, stderr.String())
	}
	if strings.Contains(stderr.String(), "EOF") {
		t.Errorf("the message speaks of EOF:\n%s", stderr.String())
	}
	if r := runCmd(t, e, "", "pair"); r.code != ExitUsage || !strings.Contains(r.stderr, "--reuse") || !strings.Contains(r.stderr, "--replace") {
		t.Fatalf("pair with a pipe on stdin: %d\n%s", r.code, r.stderr)
	}
	after, _ := os.ReadFile(statePathOf(e))
	if string(after) != string(before) || len(m.Devices()) != 1 {
		t.Error("a refused pair changed something")
	}
}

// `run` with a device token of another device than the paired one: the
// hub's VerifySelf answers that other device, and the daemon exits 11
// with that reason (a supervisor must not see success).
func TestRunWithAnotherDevicesTokenExits11(t *testing.T) {
	h := startHub(t)
	var other mockhub.CreatedDevice
	if st, body := h.admin("POST", "/mock/devices", map[string]string{"name": "another pad"}, &other); st != 201 {
		t.Fatalf("create another device: %d %s", st, body)
	}
	s := newDaemonSetup(t, h, daemonConfig{})
	s.env = []string{EnvDeviceToken + "=" + other.Token.Token} // wins over the paired device's
	d := startDaemon(t, s)
	select {
	case <-d.done:
	case <-time.After(e2eWait):
		t.Fatalf("the daemon did not stop within %s:\n%s", e2eWait, d.Stderr())
	}
	if code := d.exitCode(); code != ExitNeedsRepair {
		t.Fatalf("exit %d, want %d:\n%s", code, ExitNeedsRepair, d.Stderr())
	}
	last := lastLine(d.Stderr())
	for _, want := range []string{"another device", other.Device.ID, h.id(), "hubgate pair"} {
		if !strings.Contains(last, want) {
			t.Errorf("the last line does not say %q: %s", want, last)
		}
	}
	assertNoSecretIn(t, "stderr", d.Stderr(), other.Token.Token, h.device.Token.Token)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// readLines returns the complete lines of the file at path.
func readLines(path string) []string {
	raw, _ := os.ReadFile(path)
	lines := strings.Split(string(raw), "\n")
	return lines[:len(lines)-1] // the last one is "" or not complete yet
}

// deviceOwns reports whether the mock lists token id tokenID for device id.
func deviceOwns(m *mockhub.Server, id, tokenID string) bool {
	for _, d := range m.Devices() {
		if d.Device.ID == id {
			return slices.ContainsFunc(d.Tokens, func(tk mockhub.TokenInfo) bool { return tk.ID == tokenID })
		}
	}
	return false
}

// runConnectsAs starts `hubgate run` with the pairing of environment e
// (newUserSetup's) and checks that it connects, verified and listening, as
// device id: the mock sees that device listening, and no other device
// connected.
func runConnectsAs(t *testing.T, e []string, m *mockhub.Server, id string) {
	t.Helper()
	var since int64
	if evs := m.Events(0); len(evs) > 0 {
		since = evs[len(evs)-1].Seq
	}
	p := startRunProc(t, e, "run")
	ctx, cancel := context.WithTimeout(context.Background(), e2eWait)
	defer cancel()
	listening := make(chan error, 1)
	go func() {
		// VerifySelf, then DeviceStartedListening: the mock marks the
		// device verified and listening before it records each.
		_, err := m.WaitEvent(ctx, since, func(ev mockhub.Event) bool { return ev.Action == "DeviceStartedListening" && ev.DeviceID == id })
		listening <- err
	}()
	select {
	case <-p.done:
		t.Fatalf("hubgate run exited (%d) instead of listening as %s:\n%s", p.exitCode(), id, p.Stderr())
	case err := <-listening:
		if d, ok := m.Device(id); err != nil || !ok || !d.IsVerified || !d.IsListening {
			t.Fatalf("hubgate run did not listen as %s (%v):\n%s", id, err, p.Stderr())
		}
	}
	for _, d := range m.Devices() {
		if d.Device.ID != id && d.Connected {
			t.Errorf("device %s is connected too", d.Device.ID)
		}
	}
	if code := p.stopWith(t, syscall.SIGTERM, e2eWait); code != 0 {
		t.Errorf("hubgate run exited %d:\n%s", code, p.Stderr())
	}
}
