package hub

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hubgate/hubgate/hub/mockhub"
)

// tokenTap is an http.RoundTripper that keeps the access tokens of the
// negotiate redirects the client receives, so that a test can look for
// them where they must never be.
type tokenTap struct {
	next   http.RoundTripper
	mu     sync.Mutex
	tokens []string
}

func (tp *tokenTap) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := tp.next.RoundTrip(r)
	if err != nil || !strings.HasSuffix(r.URL.Path, "/negotiate") {
		return resp, err
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	var neg struct {
		AccessToken string `json:"accessToken"`
	}
	if json.Unmarshal(b, &neg) == nil && neg.AccessToken != "" {
		tp.mu.Lock()
		tp.tokens = append(tp.tokens, neg.AccessToken)
		tp.mu.Unlock()
	}
	return resp, nil
}

func (tp *tokenTap) list() []string {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return append([]string(nil), tp.tokens...)
}

// stateLog keeps every state a client publishes.
func stateLog(t *testing.T, c *Client) func() []State {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var mu sync.Mutex
	var all []State
	ch := c.Subscribe(ctx)
	go func() {
		for s := range ch {
			mu.Lock()
			all = append(all, s)
			mu.Unlock()
		}
	}()
	return func() []State {
		mu.Lock()
		defer mu.Unlock()
		return append([]State(nil), all...)
	}
}

func countLogged(m *mockhub.Server, deviceID string) map[string]int {
	n := map[string]int{}
	for _, e := range m.Events(0) {
		if e.DeviceID == deviceID || e.Action == "rejected" {
			n[e.Action]++
		}
	}
	return n
}

// TestMockRedirectReconnectsWithAFreshNegotiate: through the mock's
// redirect (its default, as the real service), the client connects,
// receives pushed commands, and after its redirect token expired (by its
// lifetime, then by the admin API's fault) and the connection dropped,
// reconnects with a fresh negotiate at /device/negotiate each time. No
// token reaches a log line or a state.
func TestMockRedirectReconnectsWithAFreshNegotiate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		env := newMockEnv(t, mockhub.Config{ServiceTokenTTL: time.Minute})
		tap := &tokenTap{next: env.client.Transport}
		cfg := env.config(t)
		cfg.HTTPClient = &http.Client{Transport: tap}
		cfg.Logger = newLogger(t, func() []string { return append(tap.list(), env.tok.Token) })
		c := start(t, must(New(cfg)))
		states := stateLog(t, c.Client)

		push := func(cmd string, session uint64) {
			t.Helper()
			if err := env.mock.PushCommand(env.dev.ID, cmd, nil); err != nil {
				t.Fatal(err)
			}
			e := nextEvent(t, c.Client, wait)
			if e.Kind != KindDeviceCommand || e.Command != cmd || e.Session != session {
				t.Errorf("event %s %q on session %d, want %q on %d", e.Kind, e.Command, e.Session, cmd, session)
			}
		}
		reconnected := func(sessions uint64) uint64 {
			t.Helper()
			st := waitState(t, c.Client, "connected again", wait, func(s State) bool {
				return s.Status == StatusConnected && c.Stats().Sessions == sessions
			})
			return st.Session
		}

		first := reconnected(1)
		push("one", first)
		if s := c.Stats(); s.Redirects != 1 {
			t.Errorf("redirects %d after the first connection", s.Redirects)
		}

		// The token's lifetime passes (the connection stays up: a token is
		// checked when a client connects); the service refuses it from now
		// on. 90 s: past the token's minute, and short of the mock's HTTP
		// idle timeout (2 min, localhttp.DefaultIdleTimeout): sleeping to
		// that very instant raced the server's close of the pooled
		// connection against the request below reusing it ("server closed
		// idle connection", once in three runs of the package).
		time.Sleep(90 * time.Second)
		if s := c.Stats(); s.Sessions != 1 {
			t.Errorf("%d sessions after 90 idle seconds, want the first still up", s.Sessions)
		}
		old := tap.list()[0]
		req, _ := http.NewRequest("POST", env.mock.ServiceURL()+"/client/negotiate?hub=devicehub&negotiateVersion=1", nil)
		req.Header.Set("Authorization", "Bearer "+old)
		if resp, err := env.client.Do(req); err != nil || resp.StatusCode != 401 {
			t.Fatalf("the expired token at the service: %v %v", resp, err)
		} else {
			resp.Body.Close()
		}
		env.mock.DropConnections()
		second := reconnected(2)
		push("two", second)

		// The admin API expires every token and drops the connection.
		ac := &mockhub.AdminClient{BaseURL: "http://" + env.addr, HTTPClient: env.client}
		if st, err := ac.Faults(context.Background(), mockhub.Faults{ExpireServiceTokens: true, Drop: true}); err != nil || st.ExpiredServiceTokens != 1 || st.Dropped != 1 {
			t.Fatalf("faults: %+v %v", st, err)
		}
		third := reconnected(3)
		push("three", third)

		// Each connection began with a negotiate at the hub, and the client
		// never presented an expired token.
		n := countLogged(env.mock, env.dev.ID)
		if n["negotiate-redirect"] != 3 || n["service-negotiate"] != 3 || n["connected"] != 3 || n["rejected"] != 1 {
			t.Errorf("mock log %v: want 3 negotiate-redirect, 3 service-negotiate, 3 connected, 1 rejection (the test's own)", n)
		}
		toks := tap.list()
		if len(toks) != 3 || toks[0] == toks[1] || toks[1] == toks[2] {
			t.Errorf("%d redirect tokens, want 3 distinct", len(toks))
		}
		if s := c.Stats(); s.Redirects != 3 || s.Reconnects != 2 || s.TokenRefusals != 0 {
			t.Errorf("stats %+v", s)
		}
		for _, s := range states() {
			text := s.Reason
			if s.Err != nil {
				text += s.Err.Error()
			}
			for _, sec := range append(toks, env.tok.Token) {
				if strings.Contains(text, sec) {
					t.Errorf("a token in state %s", s.Status)
				}
			}
		}
	})
}

// TestMockServiceErrorThenRecovers: while the mock's SignalR service
// answers its negotiate with an error, the client reports it and keeps
// trying; it connects once the fault ends.
func TestMockServiceErrorThenRecovers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		env := newMockEnv(t, mockhub.Config{})
		env.mock.FailServiceNegotiateFor(time.Minute)
		c := start(t, must(New(env.config(t))))
		st := waitState(t, c.Client, "refused", wait, func(s State) bool { return s.Attempt >= 2 })
		if st.Cause != CauseRefused || !strings.Contains(st.Reason, "fault injection") {
			t.Errorf("state %+v", st)
		}
		env.mock.FailServiceNegotiateFor(0)
		waitState(t, c.Client, "connected", wait, isStatus(StatusConnected))
		if n := countLogged(env.mock, env.dev.ID); n["negotiate-redirect"] != n["service-negotiate"] || n["connected"] != 1 {
			t.Errorf("mock log %v", n)
		}
	})
}

// TestMockDirectHub: against the mock's direct hub (the old behaviour,
// Config.DirectHub) the client connects without a redirect.
func TestMockDirectHub(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		env := newMockEnv(t, mockhub.Config{DirectHub: true})
		c := start(t, must(New(env.config(t))))
		waitState(t, c.Client, "connected", wait, isStatus(StatusConnected))
		if err := env.mock.PushCommand(env.dev.ID, "direct", nil); err != nil {
			t.Fatal(err)
		}
		if e := nextEvent(t, c.Client, wait); e.Command != "direct" {
			t.Errorf("event %+v", e)
		}
		n := countLogged(env.mock, env.dev.ID)
		if s := c.Stats(); s.Redirects != 0 || n["negotiate-redirect"] != 0 || n["connected"] != 1 {
			t.Errorf("stats %+v, mock log %v", s, n)
		}
	})
}
