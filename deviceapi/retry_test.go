package deviceapi

// The retry policy, the token refresh on a 401, the body limit and the
// debug log, each on the fake clock of a synctest bubble where timing
// matters: the service is served over in-memory pipes to the injected
// *http.Client.

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/oauth2"

	"github.com/hubgate/hubgate/internal/testutil"
)

// timedService is a fake service on pipes that records when each request
// came (on the bubble's clock) and with which Authorization.
type timedService struct {
	mu    sync.Mutex
	times []time.Time
	auths []string
}

func (s *timedService) record(r *http.Request) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.times = append(s.times, time.Now())
	s.auths = append(s.auths, r.Header.Get("Authorization"))
	return len(s.times)
}

// gaps are the waits between consecutive requests.
func (s *timedService) gaps() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	var g []time.Duration
	for i := 1; i < len(s.times); i++ {
		g = append(g, s.times[i].Sub(s.times[i-1]))
	}
	return g
}

// newPipeClient serves h (given the 1-based request number) on pipes and
// returns a client of it; call it inside the bubble.
func newPipeClient(t *testing.T, cfg Config, h func(w http.ResponseWriter, r *http.Request, n int)) (*Client, *timedService) {
	t.Helper()
	s := &timedService{}
	cfg.HTTPClient = testutil.ServePipe(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h(w, r, s.record(r))
	}))
	if cfg.BaseURL == "" {
		cfg.BaseURL = "http://api.example.test"
	}
	if cfg.TokenSource == nil {
		cfg.TokenSource = oauth2.StaticTokenSource(&oauth2.Token{AccessToken: bearer})
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, s
}

// A GET answered 429 or 503 with Retry-After waits as long as asked,
// bounded to RetryWait..RetryMaxWait, then tries again; a Retry-After
// that asks for nothing leaves the backoff.
func TestGetHonoursRetryAfterWithinTheBounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, s := newPipeClient(t, Config{RetryWait: 2 * time.Second, RetryMaxWait: 10 * time.Second, GetRetries: 4},
			func(w http.ResponseWriter, r *http.Request, n int) {
				switch n {
				case 1:
					w.Header().Set("Retry-After", "3")
					writeJSON(w, 429, `{"error":"slow down"}`)
				case 2:
					w.Header().Set("Retry-After", "3600") // beyond RetryMaxWait
					writeJSON(w, 503, `{}`)
				case 3:
					w.Header().Set("Retry-After", "1") // below RetryWait
					writeJSON(w, 503, `{}`)
				case 4:
					w.Header().Set("Retry-After", time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat))
					writeJSON(w, 503, `{}`)
				default:
					writeJSON(w, 200, `{"id":"dev-1"}`)
				}
			})
		d, err := c.GetDevice(context.Background(), "dev-1")
		if err != nil || d.ID != "dev-1" {
			t.Fatalf("GetDevice: %v %v", d, err)
		}
		g := s.gaps()
		if len(g) != 4 || g[0] != 3*time.Second || g[1] != 10*time.Second || g[2] != 2*time.Second {
			t.Fatalf("waits between attempts %v, want [3s 10s 2s ...]", g)
		}
		// A date in the past: retry 4's backoff, 2s doubled thrice, at most
		// 10s, less up to half.
		if g[3] < 5*time.Second || g[3] > 10*time.Second {
			t.Errorf("wait after a past Retry-After date: %s, want 5s..10s", g[3])
		}
	})
}

// Without Retry-After, retry n waits RetryWait doubled n-1 times (at most
// RetryMaxWait), shortened by up to half at random, never below
// RetryWait.
func TestGetBacksOffExponentiallyWithJitter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, s := newPipeClient(t, Config{RetryWait: time.Second, RetryMaxWait: 6 * time.Second, GetRetries: 5},
			func(w http.ResponseWriter, r *http.Request, _ int) { writeJSON(w, 502, `{}`) })
		_, err := c.GetDevice(context.Background(), "dev-1")
		var ae *APIError
		if !errors.As(err, &ae) || ae.Status != 502 {
			t.Fatalf("err %v", err)
		}
		g := s.gaps()
		if len(g) != 5 {
			t.Fatalf("%d waits, want 5 (six attempts)", len(g))
		}
		for i, b := range [][2]time.Duration{{1, 1}, {1, 2}, {2, 4}, {3, 6}, {3, 6}} {
			if lo, hi := b[0]*time.Second, b[1]*time.Second; g[i] < lo || g[i] > hi {
				t.Errorf("wait before retry %d: %s, want %s..%s", i+1, g[i], lo, hi)
			}
		}
	})
}

// A context that ends during a wait ends the GET at once, with the
// context's error, and nothing more is sent.
func TestContextEndsTheWaitBetweenAttempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, s := newPipeClient(t, Config{RetryWait: time.Second, RetryMaxWait: time.Minute, GetRetries: 5},
			func(w http.ResponseWriter, r *http.Request, _ int) {
				w.Header().Set("Retry-After", "30")
				writeJSON(w, 503, `{}`)
			})
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		start := time.Now()
		_, err := c.GetDevice(ctx, "dev-1")
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), RouteGetDevice) {
			t.Fatalf("err %v", err)
		}
		if took := time.Since(start); took != 5*time.Second {
			t.Errorf("GetDevice returned after %s, want the 5s deadline", took)
		}
		if n := len(s.gaps()) + 1; n != 1 {
			t.Errorf("%d requests", n)
		}
	})
}

// rotatingSource hands out old until Invalidate(old), then new.
type rotatingSource struct {
	mu          sync.Mutex
	current     string
	invalidated []string
	refuse      bool // Invalidate answers false
}

func (r *rotatingSource) Token() (*oauth2.Token, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return &oauth2.Token{AccessToken: r.current}, nil
}

func (r *rotatingSource) Invalidate(tok string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.invalidated = append(r.invalidated, tok)
	if r.refuse {
		return false
	}
	r.current = "fresh-access-token-9876"
	return true
}

// A 401 makes the client invalidate the token it sent and send the
// request once more, a POST too, with the fresh token; a source that
// cannot refresh leaves the 401.
func TestUnauthorizedRefreshesTheTokenOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ts := &rotatingSource{current: bearer}
		c, s := newPipeClient(t, Config{TokenSource: ts}, func(w http.ResponseWriter, r *http.Request, _ int) {
			if r.Header.Get("Authorization") != "Bearer fresh-access-token-9876" {
				writeJSON(w, 401, `{}`)
				return
			}
			writeJSON(w, 200, `{"id":"tok-1","userDeviceId":"dev","token":"device-secret-xyz"}`)
		})
		if _, err := c.CreateToken(context.Background(), "dev"); err != nil {
			t.Fatal(err)
		}
		if len(s.auths) != 2 || s.auths[0] != "Bearer "+bearer || s.auths[1] != "Bearer fresh-access-token-9876" {
			t.Errorf("Authorization of the attempts: %q", s.auths)
		}
		if len(ts.invalidated) != 1 || ts.invalidated[0] != bearer {
			t.Errorf("invalidated %q, want the refused token once", ts.invalidated)
		}

		stuck := &rotatingSource{current: bearer, refuse: true}
		c2, s2 := newPipeClient(t, Config{TokenSource: stuck}, func(w http.ResponseWriter, r *http.Request, _ int) { writeJSON(w, 401, `{}`) })
		if _, err := c2.GetDevice(context.Background(), "dev"); !errors.Is(err, ErrUnauthorized) {
			t.Fatalf("err %v", err)
		}
		if len(s2.auths) != 1 {
			t.Errorf("%d requests after a refused refresh, want 1 (a 401 is not retried)", len(s2.auths))
		}
	})
}

// A body over MaxResponseBody is ErrResponseTooLarge, whatever the
// status, and a GET is not retried for it; a body of exactly the limit is
// read.
func TestResponseBodyLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		exact := `{"id":"dev-1","pad":"` + strings.Repeat("a", MaxResponseBody-len(`{"id":"dev-1","pad":""}`)) + `"}`
		c, s := newPipeClient(t, Config{}, func(w http.ResponseWriter, r *http.Request, n int) {
			switch n {
			case 1:
				writeJSON(w, 200, exact+" ")
			case 2:
				writeJSON(w, 503, strings.Repeat("x", MaxResponseBody+1))
			default:
				writeJSON(w, 200, exact)
			}
		})
		for i := range 2 {
			_, err := c.GetDevice(context.Background(), "dev-1")
			if !errors.Is(err, ErrResponseTooLarge) || !strings.Contains(err.Error(), RouteGetDevice) {
				t.Fatalf("body %d over the limit: %v", i+1, err)
			}
		}
		if n := len(s.gaps()) + 1; n != 2 {
			t.Errorf("%d requests for two GETs: a body over the limit was retried", n)
		}
		d, err := c.GetDevice(context.Background(), "dev-1")
		if err != nil || d.ID != "dev-1" {
			t.Fatalf("a body of exactly MaxResponseBody: %v", err)
		}
	})
}

// The debug log tells each attempt and retry (route, status or error,
// wait) and never carries a header value or a token, whatever the
// failure.
func TestDebugLogOfRetriesHasNoSecret(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		ts := &rotatingSource{current: bearer}
		c, s := newPipeClient(t, Config{TokenSource: ts, Logger: log, UserAgent: "hubgate-test/1", RetryWait: time.Second},
			func(w http.ResponseWriter, r *http.Request, n int) {
				switch n {
				case 1: // the service echoes the bearer everywhere it can
					w.Header().Set("Retry-After", "1")
					w.Header().Set("X-Echo", r.Header.Get("Authorization"))
					writeJSON(w, 503, `{"auth":"`+r.Header.Get("Authorization")+`"}`)
				case 2, 3: // the transport itself sends again once on a kept-alive connection lost
					conn, _, err := w.(http.Hijacker).Hijack()
					if err == nil {
						conn.Close()
					}
				case 4:
					writeJSON(w, 401, `{"token":"`+r.Header.Get("Authorization")+`"}`)
				default:
					writeJSON(w, 200, `{"id":"dev-1","token":"device-secret-xyz"}`)
				}
			})
		if _, err := c.GetDevice(context.Background(), "dev-1"); err != nil {
			t.Fatal(err)
		}
		if len(s.auths) != 5 {
			t.Fatalf("%d requests, want 5", len(s.auths))
		}
		out := logs.String()
		for _, secret := range []string{bearer, "fresh-access-token-9876", "device-secret-xyz", "Bearer"} {
			if strings.Contains(out, secret) {
				t.Errorf("the debug log carries %q:\n%s", secret, out)
			}
		}
		testutil.InOrder(t, out,
			`deviceapi: retrying" route="`+RouteGetDevice+`" attempt=1 status=503 wait=1s`,
			`deviceapi: retrying" route="`+RouteGetDevice+`" attempt=2 err=`,
			`deviceapi: 401, refreshing the access token once`,
			`deviceapi request" route="`+RouteGetDevice+`" status=200 attempts=4`)
	})
}

// The requests carry the configured User-Agent and ask for JSON.
func TestRequestHeaders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got http.Header
		c, _ := newPipeClient(t, Config{UserAgent: "hubgate-test/1"}, func(w http.ResponseWriter, r *http.Request, _ int) {
			got = r.Header.Clone()
			io.Copy(io.Discard, r.Body)
			writeJSON(w, 200, `{"id":"dev-1"}`)
		})
		if _, err := c.CreateDevice(context.Background(), "t", "n"); err != nil {
			t.Fatal(err)
		}
		if got.Get("User-Agent") != "hubgate-test/1" || got.Get("Accept") != "application/json" || got.Get("Authorization") != "Bearer "+bearer {
			t.Errorf("headers %v", got)
		}
	})
}
