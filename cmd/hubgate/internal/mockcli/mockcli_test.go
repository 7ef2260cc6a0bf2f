package mockcli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/hub/mockhub/mockhubtest"
)

// run executes the command tree on args with opts, `hubgate mock`'s own
// run replaced by runF when it is not nil.
func run(t *testing.T, opts Options, runF func(context.Context, *ServeOptions) error, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	opts.Out, opts.Err = &out, &out
	if opts.Getenv == nil {
		opts.Getenv = func(string) string { return "" }
	}
	var cmd *cobra.Command
	if runF != nil {
		cmd = newCommand(&cli{opts}, runF)
	} else {
		cmd = NewCommand(opts)
	}
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

func TestFlagsBecomeServeOptions(t *testing.T) {
	var got ServeOptions
	_, err := run(t, Options{}, func(_ context.Context, o *ServeOptions) error { got = *o; return nil },
		"--listen", "127.0.0.1:0", "--state", "s.json", "--deny-consent", "--redirect-uri", "http://127.0.0.1:1/",
		"--redirect-uri", "http://127.0.0.1:2/", "--hub-timeout", "5s", "--direct-hub",
		"--cors-origin", "http://localhost:3000", "--cors-origin", "https://app.example", "--public-url", "http://mock.lan:5080")
	if err != nil {
		t.Fatal(err)
	}
	if got.Listen != "127.0.0.1:0" || got.StateFile != "s.json" || !got.DenyConsent || got.Timeout != 5*time.Second ||
		!got.DirectHub || len(got.RedirectURIs) != 2 || got.RedirectURIs[1] != "http://127.0.0.1:2/" ||
		len(got.CORSOrigins) != 2 || got.CORSOrigins[1] != "https://app.example" || len(got.PublicURLs) != 1 {
		t.Errorf("options: %+v", got)
	}
}

func TestMockConfig(t *testing.T) {
	a := &cli{Options{Getenv: func(k string) string {
		if k == EnvClientSecret {
			return "from-env"
		}
		return ""
	}}}
	cfg, err := mockConfig(&ServeOptions{Getenv: a.Getenv, Listen: "127.0.0.1:43123", DenyConsent: true})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ClientSecret != "from-env" || cfg.ServiceAddr != "127.0.0.1:0" || cfg.Consent == nil || cfg.Consent(mockhub.ConsentRequest{}) {
		t.Errorf("config: secret %q service %q consent %v", cfg.ClientSecret, cfg.ServiceAddr, cfg.Consent != nil)
	}
	if cfg, _ := mockConfig(&ServeOptions{Getenv: a.Getenv, Listen: "127.0.0.1:1", ClientSecret: "flag"}); cfg.ClientSecret != "flag" {
		t.Errorf("--client-secret: %q", cfg.ClientSecret)
	}
	if cfg, err := mockConfig(&ServeOptions{Getenv: a.Getenv, Listen: "127.0.0.1:1", CORSOrigins: []string{"HTTP://LocalHost:3000/", "*"}}); err != nil ||
		len(cfg.CORSOrigins) != 2 || cfg.CORSOrigins[0] != "http://localhost:3000" || cfg.CORSOrigins[1] != "*" {
		t.Errorf("--cors-origin: %q %v", cfg.CORSOrigins, err)
	}
	if cfg, _ := mockConfig(&ServeOptions{Getenv: a.Getenv, Listen: "127.0.0.1:1"}); cfg.CORSOrigins != nil {
		t.Errorf("no --cors-origin: %q, want nil (any origin)", cfg.CORSOrigins)
	}
	if cfg, err := mockConfig(&ServeOptions{Getenv: a.Getenv, Listen: "127.0.0.1:1", PublicURLs: []string{"HTTP://Mock.LAN:80/"}}); err != nil ||
		len(cfg.PublicURLs) != 1 || cfg.PublicURLs[0] != "http://mock.lan" {
		t.Errorf("--public-url: %q %v", cfg.PublicURLs, err)
	}
	for _, f := range []ServeOptions{{Listen: "nonsense"}, {Listen: "127.0.0.1:1", ServiceAddr: "nonsense"},
		{Listen: "127.0.0.1:1", CORSOrigins: []string{"localhost:3000"}}, {Listen: "127.0.0.1:1", PublicURLs: []string{"mock.lan:5080"}}} {
		var u *UsageError
		f.Getenv = a.Getenv
		if _, err := mockConfig(&f); !errors.As(err, &u) {
			t.Errorf("%+v: %v, want a UsageError", f, err)
		}
	}
}

func TestUsageErrorsAreTyped(t *testing.T) {
	for _, args := range [][]string{
		{"bogus"},
		{"devices", "extra"},
		{"send", "--url", "http://127.0.0.1:1", "--device", "x"},
		{"send", "--url", "not a url", "--device", "x", "--command", "y"},
		{"fault", "--url", "http://127.0.0.1:1"},
		{"fault", "--url", "http://127.0.0.1:1", "--freeze", "-1s"},
		{"events", "--url", "http://127.0.0.1:1", "--since", "-2"},
		{"record", "--url", "http://127.0.0.1:1", "--for", "-1s", "out.yaml"},
	} {
		var u *UsageError
		if _, err := run(t, Options{}, nil, args...); !errors.As(err, &u) {
			t.Errorf("%v: %v, want a UsageError", args, err)
		}
	}
}

func TestFaultFlags(t *testing.T) {
	var fl faultFlags
	cmd := &cobra.Command{}
	cmd.Flags().DurationVar(&fl.freeze, "freeze", 0, "")
	cmd.Flags().DurationVar(&fl.refuseFor, "refuse-for", 0, "")
	cmd.Flags().DurationVar(&fl.serviceError, "service-error-for", 0, "")
	if err := cmd.Flags().Parse([]string{"--freeze", "0s"}); err != nil {
		t.Fatal(err)
	}
	f, err := fl.faults(cmd)
	if err != nil || f.Freeze == nil || *f.Freeze != 0 || f.RefuseFor != nil || f.ServiceErrorFor != nil {
		t.Errorf("--freeze 0s (thaw): %+v %v", f, err)
	}
}

func TestMacroWithEvents(t *testing.T) {
	m, err := MacroWithEvents(nil, "water", []string{`{"eventType":"Type","typedPhrase":"the plants"}`})
	if err != nil || m.Name != "water" || len(m.Commands) != 1 || m.Commands[0] != "water" || len(m.Events) != 1 || m.Events[0].EventType != "Type" {
		t.Errorf("macro: %+v %v", m, err)
	}
	var u *UsageError
	if _, err := MacroWithEvents(nil, "x", []string{`"a string"`}); !errors.As(err, &u) || !strings.Contains(err.Error(), "--event #1") {
		t.Errorf("a non-object event: %v", err)
	}
	if m, err := MacroWithEvents(nil, "x", nil); m != nil || err != nil {
		t.Errorf("no events: %+v %v", m, err)
	}
}

func TestSendPicksTheOnlyDevice(t *testing.T) {
	mock := mockhubtest.Start(t, mockhubtest.Options{})
	opts := Options{Getenv: func(k string) string {
		if k == EnvURL {
			return mock.URL
		}
		return ""
	}}
	if _, err := run(t, opts, nil, "send", "--command", "x"); err == nil || !strings.Contains(err.Error(), "no device yet") {
		t.Errorf("no device: %v", err)
	}
	out, err := run(t, opts, nil, "create-device", "--name", "one")
	var created mockhub.CreatedDevice
	if err != nil || json.Unmarshal([]byte(out), &created) != nil || created.Device.ID == "" {
		t.Fatalf("create-device: %q %v", out, err)
	}
	// The only device is picked: the mock itself answers that it has no
	// hub connection to push to.
	if _, err = run(t, opts, nil, "send", "--command", "x"); err == nil || !strings.Contains(err.Error(), "no hub connection") {
		t.Errorf("send to the only device: %v", err)
	}
	if _, err := run(t, opts, nil, "create-device", "--name", "two"); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, opts, nil, "send", "--command", "x"); err == nil || !strings.Contains(err.Error(), "has 2 devices") || !strings.Contains(err.Error(), created.Device.ID) {
		t.Errorf("two devices: %v", err)
	}
}

// The curl example of `mock token --help` works as pasted into a shell
// where HUBGATE_MOCK_URL is not set: its address is the mock's default,
// never a bare path.
func TestTokenExampleNeedsNoVariable(t *testing.T) {
	var long string
	for _, c := range NewCommand(Options{}).Commands() {
		if c.Name() == "token" {
			long = c.Long
		}
	}
	var line string
	for _, l := range strings.Split(long, "\n") {
		if strings.Contains(l, "/api/Device/") {
			line = strings.TrimSpace(l)
		}
	}
	if line == "" {
		t.Fatalf("no example address in:\n%s", long)
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no POSIX shell")
	}
	cmd := exec.Command("sh", "-c", "printf '%s' "+line)
	cmd.Env = []string{"PATH=/usr/bin:/bin"} // no HUBGATE_MOCK_URL
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := "http://" + mockhub.DefaultListen + "/api/Device/userDevices/new/"; !strings.HasPrefix(string(out), want) {
		t.Errorf("the example's address expands to %q, want %s...", out, want)
	}
}
