package oauth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hubgate/hubgate/internal/testutil"
)

// A sign-in page that refuses the request (here: an unknown client id)
// ends Login at once with a *SignInPageError naming the likely causes,
// long before its timeout (the test's own deadline is the guard).
func TestLoginEndsWhenTheSignInPageRefuses(t *testing.T) {
	f := newFakeAuth(t)
	c, err := New(Config{APIURL: f.srv.URL, ClientID: "not-the-client"})
	if err != nil {
		t.Fatal(err)
	}
	var out testutil.SyncBuffer
	_, err = c.Login(context.Background(), LoginOptions{Out: &out, Timeout: time.Hour, OpenBrowser: func(string) error { return nil }})
	var pe *SignInPageError
	if !errors.As(err, &pe) || !errors.Is(err, ErrSignInPage) || !IsSignInError(err) {
		t.Fatalf("err = %v (%T), want a *SignInPageError", err, err)
	}
	msg := err.Error()
	for _, want := range []string{"400 Bad Request", "bad client or response_type", "not-the-client", "client id", "redirect address", "--client-id", "--redirect-uri"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error does not say %q: %s", want, msg)
		}
	}
}

// The check uses a state of its own and never follows the page's
// redirect, so it can neither complete nor disturb the person's sign-in;
// a 3xx or 2xx answer is no verdict.
func TestSignInPageProbeNeverFollowsTheRedirect(t *testing.T) {
	var followed atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { followed.Add(1) }))
	defer target.Close()
	var gotState atomic.Value
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotState.Store(r.URL.Query().Get("state"))
		http.Redirect(w, r, target.URL+"/callback?code=x&state="+r.URL.Query().Get("state"), http.StatusFound)
	}))
	defer page.Close()
	c, err := New(Config{APIURL: page.URL, ClientID: "id"})
	if err != nil {
		t.Fatal(err)
	}
	authURL := page.URL + "/signin?client_id=id&state=the-person-s-state"
	warn, err := c.signInPageProbe(context.Background(), authURL, target.URL+"/callback")
	if err != nil || warn != "" {
		t.Fatalf("a redirecting page: warn %q, err %v", warn, err)
	}
	if followed.Load() != 0 {
		t.Error("the check followed the redirect")
	}
	if s, _ := gotState.Load().(string); s == "" || s == "the-person-s-state" {
		t.Errorf("the check sent the state %q, want one of its own", s)
	}
}

func TestSignInPageProbeVerdicts(t *testing.T) {
	status := func(code int, body string) *httptest.Server {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(code)
			w.Write([]byte(body))
		}))
		t.Cleanup(s.Close)
		return s
	}
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()
	cases := []struct {
		name     string
		url      string
		wantErr  bool
		wantWarn string
	}{
		{"200 page", status(200, "<p>Sign in</p>").URL, false, ""},
		{"404 page", status(404, "no such page").URL, true, ""},
		{"401 page", status(401, "").URL, true, ""},
		{"503 page", status(503, "busy").URL, false, "503"},
		{"no answer", downURL, false, "could not check the sign-in page"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(Config{APIURL: tc.url, ClientID: "id"})
			if err != nil {
				t.Fatal(err)
			}
			warn, err := c.signInPageProbe(context.Background(), tc.url+"/signin?client_id=id", "http://127.0.0.1:1/callback")
			if (err != nil) != tc.wantErr || !strings.Contains(warn, tc.wantWarn) || (tc.wantWarn == "" && warn != "") {
				t.Fatalf("warn %q, err %v", warn, err)
			}
		})
	}
}

func TestPageExcerpt(t *testing.T) {
	long := strings.Repeat("é", 300)
	cases := []struct{ in, want string }{
		{"<!doctype html><title>Sign-in error</title><h1>Sign-in error</h1><p>unknown client_id</p>\n", "Sign-in error unknown client_id"},
		{"<html><head><style>p{}</style><script>x()</script></head><body><p>a &amp; b</p></body></html>", "a & b"},
		{"plain\x1b[31m text\n", "plain[31m text"},
		{long, strings.Repeat("é", 100) + "…"},
	}
	for _, tc := range cases {
		if got := pageExcerpt([]byte(tc.in)); got != tc.want {
			t.Errorf("pageExcerpt(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
