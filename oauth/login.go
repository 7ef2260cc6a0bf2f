package oauth

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/hubgate/hubgate/internal/localhttp"
)

// LoginOptions configures one Login.
type LoginOptions struct {
	// Out receives the authorization URL (always) and short instructions
	// for the person. Zero: os.Stderr.
	Out io.Writer
	// NoBrowser skips opening a browser; lines read from In are then taken
	// as the address the browser was redirected to, and In ending before
	// one came fails Login at once with ErrInputClosed.
	NoBrowser bool
	// In supplies pasted redirect addresses when NoBrowser is set, or
	// when the browser could not be opened (its command failed). Zero:
	// none (only the redirect listener can complete the flow). It is read
	// by a goroutine that ends when In returns an error or EOF; Login does
	// not wait for it (reading a terminal cannot be interrupted), so a
	// caller that must not leave it behind closes In.
	In io.Reader
	// Timeout bounds the whole flow, from printing the URL to the end of
	// the code exchange. Zero: DefaultLoginTimeout.
	Timeout time.Duration
	// Getenv reads BROWSER. Zero: os.Getenv.
	Getenv func(string) string
	// OpenBrowser replaces the default opener (BROWSER or xdg-open, run
	// with hubgate's secrets removed from its environment). It runs on its
	// own goroutine and may block until the command exits; an error (the
	// command could not start, or exited with a failure status) makes
	// Login say so and fall back to reading In. Zero: the default.
	OpenBrowser func(url string) error
}

// callback is one request to the redirect listener.
type callback struct {
	query url.Values
	reply chan page // buffered; the flow answers every callback it receives
}

// page is what the listener answers.
type page struct {
	status  int
	title   string
	message string
}

// Login runs the authorization code flow with PKCE on a loopback redirect
// and returns the token the code was exchanged for. See the package
// documentation for the choices made. Errors: *AuthorizationError (the
// service sent an error on the redirect; ErrAccessDenied for
// access_denied), *TokenError (the token endpoint refused the code;
// ErrSignInAgain for invalid_grant), ErrTimeout, or ctx's error.
func (c *Client) Login(ctx context.Context, o LoginOptions) (*oauth2.Token, error) {
	if o.Out == nil {
		o.Out = os.Stderr
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultLoginTimeout
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.OpenBrowser == nil {
		o.OpenBrowser = func(u string) error { return c.openBrowser(o.Getenv, u) }
	}

	state, err := randomState()
	if err != nil {
		return nil, err
	}
	verifier := oauth2.GenerateVerifier()

	listen, path, redirect := "127.0.0.1:0", CallbackPath, ""
	if c.cfg.RedirectURI != "" {
		listen, path, _ = ParseRedirectURI(c.cfg.RedirectURI) // checked by New
		redirect = c.cfg.RedirectURI
	}
	network := "tcp4"
	if strings.HasPrefix(listen, "[") {
		network = "tcp6"
	}
	ln, err := net.Listen(network, listen)
	if err != nil {
		if redirect != "" {
			return nil, fmt.Errorf("oauth: open the redirect listener on %s (from the redirect address %s; is another program using that port?): %w", listen, redirect, err)
		}
		return nil, fmt.Errorf("oauth: open the redirect listener on 127.0.0.1: %w", err)
	}
	if redirect == "" {
		redirect = fmt.Sprintf("http://%s%s", ln.Addr().String(), CallbackPath)
	}
	c.mu.Lock()
	c.lastRedirect = redirect
	c.mu.Unlock()
	conf := c.conf
	conf.RedirectURL = redirect
	authURL := conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier))

	f := &flow{
		path:      path,
		callbacks: make(chan callback),
		done:      make(chan struct{}),
		log:       c.log,
	}
	// The hardened loopback server (a fixed redirect port is reachable by
	// any page): bounded headers and bodies.
	serving := localhttp.Serve(localhttp.NewServer(f, localhttp.Options{Logger: c.log}), ln)
	defer func() {
		close(f.done) // later callbacks are told the sign-in has finished
		_ = serving.Stop(context.Background(), 5*time.Second)
		c.log.Debug("oauth redirect listener closed", "addr", ln.Addr().String())
	}()

	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()

	fmt.Fprintf(o.Out, "Sign in to the remote service by opening this address in a browser:\n\n  %s\n\n", authURL)
	var pasted <-chan string
	startPaste := func() {
		if o.In != nil && pasted == nil {
			fmt.Fprintf(o.Out, "If that page does not load (the browser runs on another machine), copy the whole\naddress from the browser's address bar, paste it here and press Enter.\n")
			pasted = readLines(o.In, f.done)
		}
	}
	var browserDone chan error
	if o.NoBrowser {
		fmt.Fprintf(o.Out, "After you approve, the browser is sent to %s.\n", redirect)
		startPaste()
	} else {
		browserDone = make(chan error, 1)
		go func() { browserDone <- o.OpenBrowser(authURL) }()
		fmt.Fprintf(o.Out, "Opening a browser; if it does not show the page, open the address above yourself.\n")
	}
	fmt.Fprintf(o.Out, "Waiting for the sign-in (up to %s)...\n", o.Timeout.Round(time.Second))
	// The sign-in page is checked while the person waits: one that
	// refuses the request (an unknown client id or redirect address)
	// ends the flow at once.
	type probeResult struct {
		warn string
		err  error
	}
	probed := make(chan probeResult, 1)
	go func() {
		w, err := c.signInPageProbe(ctx, authURL, redirect)
		probed <- probeResult{w, err}
	}()
	c.log.Debug("oauth login started", "auth_url", conf.Endpoint.AuthURL, "redirect_uri", redirect, "no_browser", o.NoBrowser)

	// check decides what to do with the query of a redirect: ignore it
	// (wrong state), or end the flow with a token or an error.
	check := func(q url.Values) (end bool, answer page, tok *oauth2.Token, err error) {
		got, hasState := q.Get("state"), q.Has("state")
		if !hasState && !c.cfg.AllowMissingState {
			c.log.Debug("oauth callback refused: no state")
			se := &StateError{Hint: c.cfg.MissingStateHint}
			return true, page{http.StatusBadRequest, "Sign-in response refused", se.Error() + "."}, nil, se
		}
		if hasState && subtle.ConstantTimeCompare([]byte(got), []byte(state)) != 1 {
			c.log.Debug("oauth callback ignored: state mismatch")
			return false, page{http.StatusBadRequest, "Sign-in response ignored",
				"This response does not belong to the sign-in hubgate is waiting for (its state does not match), so it was ignored. Finish the sign-in from the address hubgate printed."}, nil, nil
		}
		if code := q.Get("error"); code != "" {
			ae := &AuthorizationError{Code: clean(code), Description: clean(q.Get("error_description")), URI: clean(q.Get("error_uri"))}
			return true, page{http.StatusOK, "Sign-in failed", ae.Error() + ". You can close this window."}, nil, ae
		}
		code := q.Get("code")
		if code == "" {
			err := errors.New("oauth: the redirect carried neither a code nor an error")
			return true, page{http.StatusBadRequest, "Sign-in failed", "The service's answer carried no authorization code. You can close this window and try again."}, nil, err
		}
		tok, err = c.exchange(ctx, code, redirect, verifier)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
				err = fmt.Errorf("%w after %s (during the token exchange)", ErrTimeout, o.Timeout)
			}
			var te *TokenError
			if !errors.As(err, &te) {
				err = fmt.Errorf("oauth: exchange the authorization code at %s: %w", conf.Endpoint.TokenURL, err)
			}
			return true, page{http.StatusOK, "Sign-in failed", "The sign-in could not be completed: " + err.Error() + ". You can close this window."}, nil, err
		}
		return true, page{http.StatusOK, "Signed in", "hubgate is signed in. You can close this window."}, tok, nil
	}

	for {
		select {
		case berr := <-browserDone:
			browserDone = nil
			if berr != nil {
				c.log.Debug("open browser failed", "err", berr)
				fmt.Fprintf(o.Out, "Could not open a browser (%v); open the address above yourself.\n", berr)
				if o.In != nil && pasted == nil {
					fmt.Fprintf(o.Out, "Reading the redirected address from stdin instead.\n")
					startPaste()
				}
			}
		case p := <-probed:
			probed = nil
			if p.err != nil {
				c.log.Debug("oauth login finished", "via", "sign-in page check", "ok", false)
				return nil, p.err
			}
			if p.warn != "" {
				fmt.Fprintf(o.Out, "Note: %s.\n", p.warn)
			}
		case cb := <-f.callbacks:
			end, answer, tok, err := check(cb.query)
			cb.reply <- answer
			if !end {
				fmt.Fprintln(o.Out, "Ignored a sign-in response that does not belong to this sign-in (its state does not match); still waiting.")
			}
			if end {
				c.log.Debug("oauth login finished", "via", "redirect", "ok", err == nil)
				return tok, err
			}
		case line, ok := <-pasted:
			if !ok {
				if o.NoBrowser {
					// Nobody opens a browser and nobody can paste: waiting
					// out the timeout helps no one.
					c.log.Debug("oauth login finished", "via", "paste", "ok", false)
					return nil, ErrInputClosed
				}
				pasted = nil // In ended; the listener may still complete the flow
				continue
			}
			q, perr := parsePasted(line)
			if perr != nil {
				fmt.Fprintf(o.Out, "%v; paste the whole address the browser was sent to (it starts with %s).\n", perr, redirect)
				continue
			}
			if q == nil {
				continue // an empty line
			}
			end, _, tok, err := check(q)
			if !end && !q.Has("state") {
				continue
			}
			if !end {
				fmt.Fprintln(o.Out, "That address belongs to another sign-in (its state does not match) and was ignored; paste the address of this one.")
				continue
			}
			c.log.Debug("oauth login finished", "via", "paste", "ok", err == nil)
			return tok, err
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, fmt.Errorf("%w: no sign-in completed within %s (the address printed above works for this run only)", ErrTimeout, o.Timeout)
			}
			return nil, fmt.Errorf("oauth: sign-in canceled: %w", ctx.Err())
		}
	}
}

// flow is the redirect listener's handler.
type flow struct {
	path      string // the only path answered
	callbacks chan callback
	done      chan struct{}
	log       *slog.Logger
}

func (f *flow) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.EscapedPath() != f.path {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	cb := callback{query: r.URL.Query(), reply: make(chan page, 1)}
	select {
	case f.callbacks <- cb:
	case <-f.done:
		writePage(w, page{http.StatusGone, "Sign-in finished", "This sign-in has already finished; this response was not used. You can close this window."})
		return
	case <-r.Context().Done():
		return
	}
	select {
	case p := <-cb.reply:
		writePage(w, p)
	case <-r.Context().Done():
	}
}

// pageSource is the sign-in's result page, parsed on its first use (page):
// every hubgate process links this package, the idle daemon included.
const pageSource = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>hubgate: {{.Title}}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font-family:system-ui,sans-serif;max-width:36em;margin:4em auto;padding:0 1em;color:#222}</style>
</head><body><h1>{{.Title}}</h1><p>{{.Message}}</p></body></html>
`

var pageTemplate struct {
	once sync.Once
	t    *template.Template
}

func parsedPage() *template.Template {
	pageTemplate.once.Do(func() { pageTemplate.t = template.Must(template.New("page").Parse(pageSource)) })
	return pageTemplate.t
}

func writePage(w http.ResponseWriter, p page) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	w.WriteHeader(p.status)
	_ = parsedPage().Execute(w, struct{ Title, Message string }{p.title, p.message})
}

// randomState returns 32 random bytes, base64url without padding.
func randomState() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("oauth: random state: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// readLines sends each line of in on the returned channel, which is closed
// when in ends; it stops sending once done is closed.
func readLines(in io.Reader, done <-chan struct{}) <-chan string {
	out := make(chan string)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 0, 4096), 64<<10)
		for sc.Scan() {
			select {
			case out <- sc.Text():
			case <-done:
				return
			}
		}
	}()
	return out
}

// parsePasted extracts the query of a pasted redirect address: a full URL
// (http://127.0.0.1:port/callback?code=...&state=...) or just its query
// (with or without the leading "?"). An empty line gives (nil, nil). The
// error never repeats the pasted text (it holds a code).
func parsePasted(line string) (url.Values, error) {
	line = strings.TrimSpace(line)
	if line == "" {
		return nil, nil
	}
	raw := line
	if strings.Contains(line, "://") {
		u, err := url.Parse(line)
		if err != nil {
			return nil, errors.New("that is not an address")
		}
		raw = u.RawQuery
	} else {
		raw = strings.TrimPrefix(raw, "?")
	}
	q, err := url.ParseQuery(raw)
	if err != nil || (q.Get("code") == "" && q.Get("error") == "") {
		return nil, errors.New("that address carries no sign-in response (a code or an error)")
	}
	return q, nil
}
