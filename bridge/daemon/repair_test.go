package daemon

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/hub"
	"github.com/hubgate/hubgate/internal/testutil"
)

// A hub that refuses the device is told once, naming `hubgate pair
// --reuse`, however often the daemon tries again: its token disabled (the
// mock's admin API), the device deleted (the hub no longer knows its
// token: 401), a hub that forbids it (403), a token of another device
// (VerifySelf; the daemon stops). It is spoken (a rule speaks), and
// status and the event stream (watch) say it.
func TestARefusedDeviceIsToldOnce(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	for _, tc := range []struct {
		name string
		// refuse makes the hub refuse the connected daemon's device.
		refuse func(t *testing.T, f *fixture, setToken func(string), forbid func())
		why    string
		stops  bool
	}{
		{name: "token disabled", why: "401", refuse: func(t *testing.T, f *fixture, _ func(string), _ func()) {
			info := f.mock.Devices()
			for _, d := range info {
				for _, tok := range d.Tokens {
					if _, err := f.mock.DisableToken(tok.ID); err != nil {
						t.Fatal(err)
					}
				}
			}
			f.mock.DropConnections()
		}},
		{name: "device deleted", why: "401", refuse: func(t *testing.T, f *fixture, setToken func(string), _ func()) {
			setToken("a-token-the-hub-no-longer-knows-0123456789")
			f.mock.DropConnections()
		}},
		{name: "hub forbids the device", why: "403", refuse: func(t *testing.T, f *fixture, _ func(string), forbid func()) {
			forbid()
			f.mock.DropConnections()
		}},
		{name: "token of another device", why: "another device", stops: true, refuse: func(t *testing.T, f *fixture, setToken func(string), _ func()) {
			_, tok, err := f.mock.CreateDevice("", "another pad")
			if err != nil {
				t.Fatal(err)
			}
			setToken(tok.Token)
			f.mock.DropConnections()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			desk := &recordingDesktop{}
			spoken := filepath.Join(t.TempDir(), "spoken")
			f.opts.Outputs = OutputOptions{Desktop: desk, SpeechCommand: []string{sh, "-c", `printf '%s\n' "$1" >> "$2"`, "sh", "{text}", spoken}}
			f.opts.Rules = compile(t, "rules:\n  - name: hello\n    match: {command: hello}\n    speak: true\n    run: {prompt: hi}\n")
			f.opts.HubBackoff = hub.Backoff{Initial: 10 * time.Millisecond, Max: 20 * time.Millisecond, Revoked: 20 * time.Millisecond, Jitter: -1}
			// The hub is reached through a proxy that can forbid it (403).
			target, err := url.Parse(f.url)
			if err != nil {
				t.Fatal(err)
			}
			var forbidden atomic.Bool
			rp := httputil.NewSingleHostReverseProxy(target)
			// The mock answers only the names it serves (its Host check):
			// the proxy names the mock, not itself.
			direct := rp.Director
			rp.Director = func(r *http.Request) { direct(r); r.Host = target.Host }
			proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if forbidden.Load() {
					http.Error(w, "forbidden", http.StatusForbidden)
					return
				}
				rp.ServeHTTP(w, r)
			}))
			t.Cleanup(proxy.Close)
			f.opts.APIURL = proxy.URL
			base := f.opts.DeviceToken
			var token atomic.Pointer[string]
			f.opts.DeviceToken = func(ctx context.Context) (string, error) {
				if tok := token.Load(); tok != nil {
					return *tok, nil
				}
				return base(ctx)
			}
			setToken := func(tok string) { token.Store(&tok) }
			d := f.start(t)
			waitListening(t, f, d, f.device)
			b := d.Info().Bridge
			// The event stream from here on, as watch reads it.
			var events []bridge.Event
			streamed := make(chan struct{})
			sub := b.Subscribe(context.Background(), bridge.SubscribeOptions{History: 100})
			go func() {
				defer close(streamed)
				for e := range sub {
					events = append(events, e)
				}
			}()
			tc.refuse(t, f, setToken, func() { forbidden.Store(true) })

			// Several attempts, each refused (or the stop).
			states := d.Info().Hub.Subscribe(t.Context())
			deadline := time.After(testutil.DefaultTimeout)
			for seen := false; !seen; {
				select {
				case st, ok := <-states:
					seen = !ok || st.Status == hub.StatusStopped || st.NeedsRepair() && st.Attempt >= 4
				case <-deadline:
					t.Fatalf("the hub never refused the device 4 times: %v", d.Info().Hub.State())
				}
			}
			if !tc.stops {
				st, err := b.Status(t.Context())
				var text bytes.Buffer
				st.WriteText(&text)
				if err != nil || !st.Hub.NeedsRepair || !strings.Contains(text.String(), "run 'hubgate pair --reuse'") {
					t.Errorf("status: %v\n%s", err, text.String())
				}
			}
			if tc.stops {
				// As Supervise does: the daemon stops once its bridge did.
				select {
				case <-d.Done():
				case <-time.After(testutil.DefaultTimeout):
					t.Fatal("the bridge did not stop with the hub")
				}
			} else {
				// Stopping the daemon cuts speech off: wait for it.
				// The speech program (a child) writes the file: a bounded poll.
				testutil.WaitFor(t, "the loss spoken", func() bool {
					said, _ := os.ReadFile(spoken)
					return strings.Contains(string(said), "\n")
				})
			}
			// Close: the notifier shows what the bridge published before.
			d.Close()
			var told []string
			for _, body := range desk.bodies() {
				if strings.Contains(body, "hubgate pair --reuse") {
					told = append(told, body)
				}
			}
			if len(told) != 1 || !strings.Contains(told[0], tc.why) {
				t.Errorf("want one notification naming hubgate pair --reuse and %q; got %q", tc.why, told)
			}
			said, _ := os.ReadFile(spoken)
			if strings.Count(string(said), "Run hubgate pair --reuse.") != 1 {
				t.Errorf("spoken: %q", said)
			}
			<-streamed // the stream ends when the bridge stopped
			var watch []string
			for _, e := range events {
				if e.Kind == bridge.EventHub && e.Hub.NeedsRepair {
					watch = append(watch, e.Describe())
				}
			}
			if len(watch) == 0 || !strings.Contains(watch[0], bridge.RepairHint) {
				t.Errorf("the event stream's hub lines: %q", watch)
			}
		})
	}
}
