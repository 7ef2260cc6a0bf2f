package mockcli

// The admin subcommands as gh tests its commands: (a) newCmdX with a runF
// that captures the options, to see what --url, the flags and the
// arguments became, and which usage errors stop before the run; (b) runX
// called in-process with buffers for the streams against a real mock
// (mockhubtest) on loopback.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/hub/mockhub/mockhubtest"
)

// parseAdmin builds a subcommand with newCmd and a runF that keeps its
// options, runs it with args (the environment is env) and returns the
// options (nil when the run was not reached) and the error.
func parseAdmin[O any](t *testing.T, env map[string]string, newCmd func(*cli, func(context.Context, *O) error) *cobra.Command, args ...string) (*O, error) {
	t.Helper()
	var got *O
	a := &cli{Options{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}, Getenv: func(k string) string { return env[k] }}}
	cmd := newCmd(a, func(_ context.Context, o *O) error { got = o; return nil })
	cmd.SetArgs(args)
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.Execute()
	return got, err
}

func wantUsage[O any](t *testing.T, o *O, err error, contains string) {
	t.Helper()
	var u *UsageError
	if !errors.As(err, &u) || !strings.Contains(err.Error(), contains) {
		t.Errorf("err = %v, want a UsageError with %q", err, contains)
	}
	if o != nil {
		t.Errorf("the run was reached with %+v", o)
	}
}

func TestAdminFlagsBecomeOptions(t *testing.T) {
	d, err := parseAdmin(t, nil, newCmdDevices, "--json", "--url", "http://127.0.0.1:9")
	if err != nil || d == nil || !d.JSON || d.Client.BaseURL != "http://127.0.0.1:9" || d.Out == nil {
		t.Fatalf("devices: %+v %v", d, err)
	}
	d, _ = parseAdmin(t, map[string]string{EnvURL: "http://127.0.0.1:8"}, newCmdDevices)
	if d == nil || d.Client.BaseURL != "http://127.0.0.1:8" {
		t.Errorf("$%s: %+v", EnvURL, d)
	}
	d, _ = parseAdmin(t, nil, newCmdDevices)
	if d == nil || d.Client.BaseURL != "http://"+mockhub.DefaultListen {
		t.Errorf("the default address: %+v", d)
	}

	s, err := parseAdmin(t, nil, newCmdSend, "--device", "dev-1", "--command", "tea", "--event", `{"eventType":"Type"}`)
	if err != nil || s == nil || s.Device != "dev-1" || s.Command != "tea" || len(s.Events) != 1 {
		t.Fatalf("send: %+v %v", s, err)
	}
	f, err := parseAdmin(t, nil, newCmdFault, "--refuse-for", "5s", "--expire-service-tokens")
	if err != nil || f == nil || f.Faults.RefuseFor == nil || time.Duration(*f.Faults.RefuseFor) != 5*time.Second ||
		f.Faults.Freeze != nil || f.Faults.Drop || !f.Faults.ExpireServiceTokens {
		t.Fatalf("fault: %+v %v", f, err)
	}
	f, _ = parseAdmin(t, nil, newCmdFault, "--freeze", "0s")
	if f == nil || f.Faults.Freeze == nil || *f.Faults.Freeze != 0 {
		t.Errorf("--freeze 0s (a thaw) is sent: %+v", f)
	}
	e, err := parseAdmin(t, nil, newCmdEvents, "--since", "12", "--follow", "--device", "d")
	if err != nil || e == nil || e.Since != 12 || !e.Follow || e.Device != "d" {
		t.Fatalf("events: %+v %v", e, err)
	}
	r, err := parseAdmin(t, nil, newCmdRecord, "--for", "2s", "out.yaml")
	if err != nil || r == nil || r.File != "out.yaml" || r.For != 2*time.Second {
		t.Fatalf("record: %+v %v", r, err)
	}
	p, err := parseAdmin(t, nil, newCmdPlay, "--json", "s.yaml")
	if err != nil || p == nil || p.File != "s.yaml" || !p.JSON {
		t.Fatalf("play: %+v %v", p, err)
	}
	l, err := parseAdmin(t, nil, func(a *cli, runF func(context.Context, *listeningOptions) error) *cobra.Command {
		return newCmdListening(a, true, runF)
	})
	if err != nil || l == nil || !l.Start {
		t.Fatalf("start-listening: %+v %v", l, err)
	}
}

func TestAdminUsageErrorsStopBeforeTheRun(t *testing.T) {
	o, err := parseAdmin(t, nil, newCmdDevices, "--url", "127.0.0.1:9")
	wantUsage(t, o, err, "--url must be an http URL")
	s, err := parseAdmin(t, nil, newCmdSend)
	wantUsage(t, s, err, "needs --command, --macro FILE or --macro-name NAME")
	s, err = parseAdmin(t, nil, newCmdSend, "--macro", "m.json", "--macro-name", "Space")
	wantUsage(t, s, err, "are exclusive")
	s, err = parseAdmin(t, nil, newCmdSend, "--macro-name", "Space", "--event", "{}")
	wantUsage(t, s, err, "not to a profile's macro")
	pr, err := parseAdmin(t, nil, newCmdProfile)
	wantUsage(t, pr, err, "needs --file")
	dt, err := parseAdmin(t, nil, newCmdDisableToken)
	wantUsage(t, dt, err, "needs --token-id")
	f, err := parseAdmin(t, nil, newCmdFault)
	wantUsage(t, f, err, "fault needs --drop")
	f, err = parseAdmin(t, nil, newCmdFault, "--freeze", "-1s")
	wantUsage(t, f, err, "--freeze must not be negative")
	e, err := parseAdmin(t, nil, newCmdEvents, "--since", "-1")
	wantUsage(t, e, err, "--since must be >= 0")
	r, err := parseAdmin(t, nil, newCmdRecord, "--for", "-1s", "out.yaml")
	wantUsage(t, r, err, "--for must be >= 0")
	if p, err := parseAdmin(t, nil, newCmdPlay); err == nil || p != nil {
		t.Errorf("play without a file: %+v %v", p, err)
	}
}

// testAdmin are admin options for a real mock, with buffers for the
// streams and stdin.
func testAdmin(t *testing.T, stdin string) (adminOptions, *bytes.Buffer, *mockhubtest.Mock) {
	mock := mockhubtest.Start(t, mockhubtest.Options{})
	var out bytes.Buffer
	return adminOptions{In: strings.NewReader(stdin), Out: &out, Err: &out, Client: &mockhub.AdminClient{BaseURL: mock.URL}}, &out, mock
}

func TestRunAdminCommandsAgainstAMock(t *testing.T) {
	ctx := context.Background()
	ao, out, _ := testAdmin(t, "")

	if err := runCreateDevice(ctx, &createDeviceOptions{adminOptions: ao, Name: "desk"}); err != nil {
		t.Fatal(err)
	}
	var created mockhub.CreatedDevice
	if err := json.Unmarshal(out.Bytes(), &created); err != nil || created.Device.ID == "" || created.Token.Token == "" || created.Token.ID == "" {
		t.Fatalf("create-device printed %q: %v", out.String(), err)
	}

	out.Reset()
	if err := runDevices(ctx, &devicesOptions{ao}); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(out.String()), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[0], "ID") ||
		!strings.Contains(lines[1], created.Device.ID) || !strings.Contains(lines[1], "desk") {
		t.Errorf("devices:\n%s", out.String())
	}

	out.Reset()
	if err := runFault(ctx, &faultOptions{adminOptions: ao, Faults: mockhub.Faults{Drop: true}}); err != nil || out.String() != "dropped 0 connection(s)\n" {
		t.Errorf("fault --drop: %q %v", out.String(), err)
	}

	out.Reset()
	if err := runDisableToken(ctx, &disableTokenOptions{adminOptions: ao, TokenID: created.Token.ID}); err != nil ||
		out.String() != "token "+created.Token.ID+" disabled; 0 connection(s) dropped\n" {
		t.Errorf("disable-token: %q %v", out.String(), err)
	}

	out.Reset()
	if err := runToken(ctx, &tokenOptions{adminOptions: ao}); err != nil || len(strings.Fields(out.String())) != 1 {
		t.Errorf("token: %q %v", out.String(), err)
	}

	// The journal holds what came before, the token's secret redacted.
	out.Reset()
	ej := ao
	ej.JSON = true
	if err := runEvents(ctx, &eventsOptions{adminOptions: ej}); err != nil {
		t.Fatal(err)
	}
	var page mockhub.EventsPage
	if err := json.Unmarshal(out.Bytes(), &page); err != nil || len(page.Events) == 0 {
		t.Fatalf("events --json: %v\n%s", err, out.String())
	}
	if strings.Contains(out.String(), created.Token.Token) {
		t.Error("the journal shows the device token")
	}

	// The only device is picked; it has no hub connection to push to.
	err := runListening(ctx, &listeningOptions{adminOptions: ao, Start: true})
	if err == nil || !strings.Contains(err.Error(), "no hub connection") {
		t.Errorf("start-listening to the only device: %v", err)
	}
}

func TestRunAdminInputErrors(t *testing.T) {
	ctx := context.Background()
	ao, _, _ := testAdmin(t, "not json")
	err := runProfile(ctx, &fileOptions{adminOptions: ao, File: "-"})
	var u *UsageError
	if !errors.As(err, &u) || !strings.Contains(err.Error(), "--file - is not JSON") {
		t.Errorf("profile from stdin that is not JSON: %v", err)
	}
	ao, _, _ = testAdmin(t, `{"name": ""}`)
	err = runSend(ctx, &sendOptions{adminOptions: ao, MacroFile: "-"})
	if !errors.As(err, &u) || !strings.Contains(err.Error(), "has neither a name nor a command") {
		t.Errorf("send of a macro without a name or command: %v", err)
	}
	err = runPlay(ctx, &playOptions{adminOptions: ao, File: filepath.Join(t.TempDir(), "none.yaml")})
	var in *InputError
	if !errors.As(err, &in) || !strings.HasPrefix(err.Error(), "scenario: ") {
		t.Errorf("play of a missing file: %v", err)
	}
}

// events --follow shows the journal's entries as they come, and ends
// without an error when its context ends.
func TestRunEventsFollowEndsWithItsContext(t *testing.T) {
	ao, _, _ := testAdmin(t, "")
	if _, err := ao.Client.CreateDevice(context.Background(), mockhub.CreateDeviceRequest{Name: "one"}); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 100)
	ao.Out = writerFunc(func(p []byte) (int, error) {
		select {
		case lines <- string(p):
		default:
		}
		return len(p), nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runEvents(ctx, &eventsOptions{adminOptions: ao, Follow: true}) }()
	select {
	case <-lines:
	case err := <-done:
		t.Fatalf("--follow ended before it showed an entry: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("--follow after its context ended: %v", err)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// The mock runs in-process until its context ends: what it serves on
// stderr, then its base URL on stdout; an address that is taken is an
// UnavailableError and the run says so.
func TestRunServeUntilItsContextEnds(t *testing.T) {
	lines := make(chan string, 10)
	var errOut bytes.Buffer
	f := &ServeOptions{Listen: "127.0.0.1:0", DirectHub: true, Getenv: func(string) string { return "" },
		Logger: func() *slog.Logger { return slog.New(slog.DiscardHandler) }, Err: &errOut,
		Out: writerFunc(func(p []byte) (int, error) { lines <- strings.TrimSpace(string(p)); return len(p), nil })}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runServe(ctx, f) }()
	var base string
	select {
	case base = <-lines:
	case err := <-done:
		t.Fatalf("the mock ended: %v", err)
	}
	if !strings.HasPrefix(base, "http://127.0.0.1:") {
		t.Errorf("stdout %q, want the base URL", base)
	}
	// It serves: its admin API answers.
	if _, err := (&mockhub.AdminClient{BaseURL: base}).Devices(ctx); err != nil {
		t.Errorf("the admin API: %v", err)
	}
	taken := *f
	taken.Listen = strings.TrimPrefix(base, "http://")
	var u *UnavailableError
	if err := runServe(context.Background(), &taken); !errors.As(err, &u) || !strings.Contains(err.Error(), "is taken") {
		t.Errorf("a taken address: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("after its context ended: %v", err)
	}
	if !strings.Contains(errOut.String(), "hubgate: the hub is served directly at "+base+mockhub.HubPath) {
		t.Errorf("stderr:\n%s", errOut.String())
	}
}
