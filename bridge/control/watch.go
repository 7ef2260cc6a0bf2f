package control

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/hubgate/hubgate/bridge"
)

// Watcher is what the watch endpoint asks the running daemon: its event
// stream, with up to history past events first. A Backend that does not
// implement it answers /v1/watch with 404. The channel is closed when ctx
// ends or the daemon stops.
type Watcher interface {
	Watch(ctx context.Context, history int) (<-chan bridge.Event, error)
}

// MaxWatchHistory bounds /v1/watch?history=N.
const MaxWatchHistory = 1000

// WatchContentType is the media type of /v1/watch: one JSON Event per
// line (newline-delimited JSON), flushed as each event happens.
const WatchContentType = "application/x-ndjson"

// serveWatch streams the daemon's events until the client goes away or
// the server shuts down (stop).
func serveWatch(w http.ResponseWriter, r *http.Request, b Backend, stop <-chan struct{}) {
	wb, ok := b.(Watcher)
	if !ok {
		writeError(w, http.StatusNotFound, "this daemon has no event stream")
		return
	}
	history := 0
	if v := r.URL.Query().Get("history"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > MaxWatchHistory {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("history must be an integer from 0 to %d", MaxWatchHistory))
			return
		}
		history = n
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	events, err := wb.Watch(ctx, history)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", WatchContentType)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil {
		return
	}
	enc := json.NewEncoder(w)
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case e, ok := <-events:
			if !ok {
				return
			}
			if err := enc.Encode(e); err != nil {
				return
			}
			// Write whatever else is already waiting before one flush.
			for more := true; more; {
				select {
				case e, ok := <-events:
					if !ok {
						rc.Flush()
						return
					}
					if err := enc.Encode(e); err != nil {
						return
					}
				default:
					more = false
				}
			}
			if err := rc.Flush(); err != nil {
				return
			}
		}
	}
}

// Watch follows the daemon's event stream: fn is called with each event,
// in order, the first history of them being past ones. It returns when ctx
// ends (nil), fn fails (its error), or the daemon stops or goes away
// (ErrNotRunning, wrapped). Unlike the other calls it has no default
// timeout.
func (c *Client) Watch(ctx context.Context, history int, fn func(bridge.Event) error) error {
	p := "/v1/watch"
	if history > 0 {
		p += "?" + url.Values{"history": {strconv.Itoa(history)}}.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://hubgate"+p, nil)
	if err != nil {
		return fmt.Errorf("control: %w", err)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return c.dialError(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxBody))
		var e errorBody
		if json.Unmarshal(b, &e) != nil || e.Error == "" {
			e.Error = http.StatusText(resp.StatusCode)
		}
		return &ServerError{StatusCode: resp.StatusCode, Message: e.Error}
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var e bridge.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return fmt.Errorf("control: decoding an event: %w", err)
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%w: the event stream broke: %v", ErrNotRunning, err)
	}
	return fmt.Errorf("%w: the daemon ended the event stream (it stopped)", ErrNotRunning)
}

// StatusPage says where the daemon's status page is.
type StatusPage struct {
	// URL opens the page with its access token (a secret of this user:
	// it is only given over the control socket).
	URL string `json:"url"`
	// LoginURL opens the page once: a one-time login address, valid for
	// 60 s and one use, armed by the request that returned it (POST
	// /v1/statuspage/login; GET /v1/statuspage arms nothing and leaves it
	// empty). On Linux it holds no secret (http://127.0.0.1:<port>/login:
	// the page serves only its owner's connections); elsewhere it is
	// /login?code=<code>. What `hubgate open` gives the browser, whose
	// command line other local users can read.
	LoginURL string `json:"login_url,omitempty"`
}

// StatusPager is what the statuspage endpoints ask the running daemon. A
// Backend that does not implement it (or answers ok false) answers 404.
type StatusPager interface {
	// StatusPage says where the page is; with login it also arms a
	// one-time login address (LoginURL), and arms nothing without.
	StatusPage(ctx context.Context, login bool) (page StatusPage, ok bool)
	// RevokeLogin withdraws the unused one-time login address loginURL
	// (no browser took it); false when it was not outstanding.
	RevokeLogin(ctx context.Context, loginURL string) bool
}

// revokeBody is POST /v1/statuspage/login/revoke, both ways.
type revokeBody struct {
	LoginURL string `json:"login_url,omitempty"`
	Revoked  bool   `json:"revoked"`
}

func serveStatusPage(w http.ResponseWriter, r *http.Request, b Backend, login bool) {
	sp, ok := b.(StatusPager)
	if !ok {
		writeError(w, http.StatusNotFound, "this daemon serves no status page")
		return
	}
	page, ok := sp.StatusPage(r.Context(), login)
	if !ok {
		writeError(w, http.StatusNotFound, "the status page is turned off (bridge.status_page.enabled)")
		return
	}
	writeJSON(w, http.StatusOK, page)
}

func serveRevokeLogin(w http.ResponseWriter, r *http.Request, b Backend) {
	sp, ok := b.(StatusPager)
	if !ok {
		writeError(w, http.StatusNotFound, "this daemon serves no status page")
		return
	}
	var req revokeBody
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err != nil || req.LoginURL == "" {
		writeError(w, http.StatusBadRequest, "the body must be {\"login_url\": \"...\"}")
		return
	}
	writeJSON(w, http.StatusOK, revokeBody{Revoked: sp.RevokeLogin(r.Context(), req.LoginURL)})
}

// StatusPage asks the daemon where its status page is; it arms no login.
func (c *Client) StatusPage(ctx context.Context) (StatusPage, error) {
	var p StatusPage
	err := c.do(ctx, http.MethodGet, "/v1/statuspage", nil, &p)
	return p, err
}

// StatusPageLogin asks the daemon for its status page with a one-time
// login address, armed for 60 s and one use (StatusPage.LoginURL).
func (c *Client) StatusPageLogin(ctx context.Context) (StatusPage, error) {
	var p StatusPage
	err := c.do(ctx, http.MethodPost, "/v1/statuspage/login", nil, &p)
	return p, err
}

// RevokeLogin withdraws the unused one-time login address loginURL that
// StatusPageLogin returned; revoked is false when it was no longer
// outstanding (used or expired).
func (c *Client) RevokeLogin(ctx context.Context, loginURL string) (revoked bool, err error) {
	var out revokeBody
	err = c.do(ctx, http.MethodPost, "/v1/statuspage/login/revoke", revokeBody{LoginURL: loginURL}, &out)
	return out.Revoked, err
}
