// Package statuspage owns the daemon's status page on 127.0.0.1: the hub
// connection and what the hub asked, the current run with its live steps
// and a cancel with its grace counting down, the queue, recent runs and
// history, the latest events, a "try a command" box, the rules with a live
// rules test, and the answer box of a question the agent asked. It is kept
// live by server-sent events fed by the bridge's event stream. It belongs
// to its owner only: on Linux every request must come from a socket of the
// daemon's uid; a one-time login, a session cookie and a per-session CSRF
// token for every POST. Plain HTML, CSS and JS embedded; no build step.
//
// Who can reach it, what remains on each OS, and the choices where the
// issue is silent: docs/statuspage.md.
package statuspage

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/bridge/rules"
	"github.com/hubgate/hubgate/internal/localhttp"
	"github.com/hubgate/hubgate/internal/loopbackpeer"
)

//go:embed assets
var assets embed.FS

// pageTemplate is parsed at the first page load, not at start: every
// hubgate command links this package, and an idle daemon need not hold
// the parsed template.
var pageTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.ParseFS(assets, "assets/index.html"))
})

// Backend is what the page shows and does: the bridge implements it.
type Backend interface {
	Status(ctx context.Context) (bridge.Status, error)
	// History returns up to limit journal entries, newest first.
	History(ctx context.Context, limit int) ([]journal.Entry, error)
	// Cancel cancels the current run (force: terminate instead of a soft
	// cancel).
	Cancel(ctx context.Context, force bool) (bridge.CancelResult, error)
	// Watch subscribes to the event stream: the history latest past
	// events first, then every new one, until ctx ends.
	Watch(ctx context.Context, history int) (<-chan bridge.Event, error)
}

// Commander is what a Backend may also do (the bridge does): the page's
// "try a command" box, its rules and their live test. A Backend without
// it has no such boxes (the routes answer 501).
type Commander interface {
	// TryCommand routes text as a command from the hub would be, journaled
	// as a local one tried on from; it returns the command's journal id.
	TryCommand(ctx context.Context, text, from string) (int64, error)
	// ExplainCommand is what `hubgate rules test` shows of text: the
	// decision and its text form.
	ExplainCommand(text string) (rules.Explanation, string)
	// Rules are the routing rules in words, in the order they are tried.
	Rules() []string
}

// PageSource is how the page names itself as the source of what it asks:
// the journal's note of a command tried there, a cancel's "stopped by".
const PageSource = "the status page"

// Defaults.
const (
	// DefaultHistory is how many journal entries the page shows.
	DefaultHistory = 20
	// streamHistory is how many past events the event stream starts with.
	streamHistory = 50
	// heartbeat keeps the event stream alive through idle periods.
	heartbeat = 15 * time.Second
	// LoginCodeTTL is how long a one-time login code is valid.
	LoginCodeTTL = 60 * time.Second
	// maxLoginCodes bounds the outstanding login codes: minting more
	// drops the oldest.
	maxLoginCodes = 16
)

// loginCodes are the outstanding one-time login codes, in memory only,
// oldest first.
type loginCodes struct {
	mu    sync.Mutex
	codes []loginCode
	armed time.Time // a code-free login is armed until then (see arm)
}

type loginCode struct {
	code    string
	expires time.Time
}

// mint makes a code valid until now+LoginCodeTTL.
func (l *loginCodes) mint(now time.Time) string {
	b := make([]byte, 32)
	rand.Read(b) // never fails (since Go 1.24 a failure ends the program)
	code := hex.EncodeToString(b)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.prune(now)
	if len(l.codes) >= maxLoginCodes {
		l.codes = slices.Delete(l.codes, 0, len(l.codes)-maxLoginCodes+1)
	}
	l.codes = append(l.codes, loginCode{code: code, expires: now.Add(LoginCodeTTL)})
	return code
}

// use reports whether code is outstanding and unexpired at now, and
// forgets it (one use). Every outstanding code is compared, in constant
// time.
func (l *loginCodes) use(code string, now time.Time) bool {
	if code == "" {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.prune(now)
	found := -1
	for i, c := range l.codes {
		if subtle.ConstantTimeCompare([]byte(code), []byte(c.code)) == 1 {
			found = i
		}
	}
	if found < 0 {
		return false
	}
	l.codes = slices.Delete(l.codes, found, found+1) // clears the freed slot
	return true
}

// arm allows one code-free login until now+LoginCodeTTL. There is one
// such login at most: arming again only moves its end.
func (l *loginCodes) arm(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.armed = now.Add(LoginCodeTTL)
}

// disarm withdraws the armed code-free login, and reports whether one was
// armed and unexpired at now.
func (l *loginCodes) disarm(now time.Time) bool {
	return l.useArmed(now)
}

// useArmed spends the armed code-free login, and reports whether one was
// armed and unexpired at now.
func (l *loginCodes) useArmed(now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	ok := now.Before(l.armed)
	l.armed = time.Time{}
	return ok
}

// prune forgets the codes expired at now.
func (l *loginCodes) prune(now time.Time) {
	live := l.codes[:0]
	for _, c := range l.codes {
		if now.Before(c.expires) {
			live = append(live, c)
		}
	}
	clear(l.codes[len(live):])
	l.codes = live
}

// Options configures New. Zero values are documented per field.
type Options struct {
	Backend Backend // required
	// Token is the access token. Zero: a random one (Token() tells it).
	Token string
	// History is how many journal entries the page shows. Zero:
	// DefaultHistory.
	History int
	Logger  *slog.Logger // Zero: discard
	// PeerUID tells which user holds the other end of a connection to
	// the page (local is the page's end). Zero: loopbackpeer.UID where
	// the system tells (Linux); elsewhere no request is checked and a
	// login needs a code.
	PeerUID func(local, remote netip.AddrPort) (uid int, err error)
}

// Handler serves the status page.
type Handler struct {
	opts   Options
	log    *slog.Logger
	mux    *http.ServeMux
	logins loginCodes
	// sessions are the session cookies and their CSRF tokens.
	sessions sessions
	// owner tells whether a request comes from the daemon's user (the
	// kernel check shared with the mock's admin API).
	owner *loopbackpeer.Guard

	closeOnce sync.Once
	closing   chan struct{} // closed by Close: ends the event streams
}

// New returns the page's handler.
func New(opts Options) (*Handler, error) {
	if opts.Backend == nil {
		return nil, errors.New("statuspage: nil Backend")
	}
	if opts.Token == "" {
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			return nil, fmt.Errorf("statuspage: token: %w", err)
		}
		opts.Token = hex.EncodeToString(b)
	}
	if opts.History <= 0 {
		opts.History = DefaultHistory
	}
	h := &Handler{opts: opts, log: opts.Logger, closing: make(chan struct{}),
		sessions: newSessions(), owner: loopbackpeer.NewGuard(opts.PeerUID)}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", h.page)
	mux.HandleFunc("GET /app.js", h.asset("assets/app.js", "text/javascript; charset=utf-8"))
	mux.HandleFunc("GET /app.css", h.asset("assets/app.css", "text/css; charset=utf-8"))
	mux.HandleFunc("GET /api/state", h.state)
	mux.HandleFunc("GET /api/events", h.events)
	mux.HandleFunc("POST /api/cancel", h.cancel)
	mux.HandleFunc("POST /api/command", h.command)
	mux.HandleFunc("POST /api/rules-test", h.rulesTest)
	mux.HandleFunc("POST /api/answer", h.answer)
	h.mux = mux
	return h, nil
}

// Token is the access token.
func (h *Handler) Token() string { return h.opts.Token }

// Close ends the open event streams (before the server shuts down).
func (h *Handler) Close() { h.closeOnce.Do(func() { close(h.closing) }) }

// ServeHTTP checks the Host header and the token, then serves.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	hdr.Set("X-Frame-Options", "DENY")
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "no-referrer")
	hdr.Set("Cache-Control", "no-store")
	if !h.fromOwner(w, r) {
		return
	}
	// A browser sends the page's own port, and the cookie it holds is
	// not separated by port: the port must be the page's.
	port, ok := localhttp.LocalPort(r)
	if !ok || !localhttp.LoopbackHostOn(r.Host, port) {
		h.log.Info("statuspage: refused a request for a foreign host", "host", r.Host, "remote", r.RemoteAddr)
		http.Error(w, "forbidden: this page answers only to 127.0.0.1, localhost or [::1] on its own port", http.StatusForbidden)
		return
	}
	cookie := cookieName(port)
	if r.URL.Path == "/login" && r.Method == http.MethodGet {
		h.login(w, r, cookie)
		return
	}
	csrf, ok := h.session(r, cookie)
	if q := r.URL.Query().Get("token"); q != "" && r.Method == http.MethodGet && r.URL.Path == "/" {
		if !h.valid(q) {
			http.Error(w, "unauthorized: the token is wrong or from an earlier start; run 'hubgate open' again", http.StatusUnauthorized)
			return
		}
		if !ok {
			csrf = h.newSession(w, cookie)
		}
	} else if !ok {
		http.Error(w, "unauthorized: open the status page with 'hubgate open'", http.StatusUnauthorized)
		return
	}
	if r.Method == http.MethodPost {
		if !csrfValid(r, csrf) {
			http.Error(w, "forbidden: a POST needs the page's CSRF token in the "+csrfHeader+" header", http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && o != "http://"+r.Host {
			http.Error(w, "forbidden: cross-origin request", http.StatusForbidden)
			return
		}
	}
	h.mux.ServeHTTP(w, withCSRF(r, csrf))
}

// session returns the CSRF token of the session r's cookie names, if any.
func (h *Handler) session(r *http.Request, cookie string) (csrf string, ok bool) {
	c, err := r.Cookie(cookie)
	if err != nil {
		return "", false
	}
	return h.sessions.check(c.Value)
}

// newSession sets a new session's cookie and returns its CSRF token.
func (h *Handler) newSession(w http.ResponseWriter, cookie string) string {
	value, csrf := h.sessions.mint()
	setSession(w, cookie, value)
	return csrf
}

// login answers a one-time login address: a valid code, or (where the
// page knows its peers' users) an armed code-free login, sets a new
// session's cookie and sends the browser to the page (303, so a code
// leaves the address bar and the history); a browser that already holds
// a session is sent on and spends nothing; anything else is refused and
// sets nothing.
func (h *Handler) login(w http.ResponseWriter, r *http.Request, cookie string) {
	if _, ok := h.session(r, cookie); ok {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	code := r.URL.Query().Get("code")
	var ok bool
	switch {
	case code != "":
		ok = h.logins.use(code, time.Now())
	case h.owner.Checks():
		ok = h.logins.useArmed(time.Now())
	}
	if !ok {
		h.log.Info("statuspage: refused a login address (unknown, used or expired code)", "remote", r.RemoteAddr)
		http.Error(w, "forbidden: this login address is unknown, used or expired; run 'hubgate open' again", http.StatusForbidden)
		return
	}
	if code != "" {
		h.log.Info("statuspage: logged in with a one-time code", "remote", r.RemoteAddr)
	} else {
		h.log.Info("statuspage: logged in by the owner's connection", "remote", r.RemoteAddr)
	}
	h.newSession(w, cookie)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// NewLoginCode mints a one-time login code (see the package comment):
// valid for LoginCodeTTL from now, for one use.
func (h *Handler) NewLoginCode() string { return h.logins.mint(time.Now()) }

// NewLoginPath returns the path of a one-time login: "/login" where the
// page knows its peers' users (it arms the code-free login for
// LoginCodeTTL: one login, which only the owner's connections can make,
// spends it), else "/login?code=<a new code>".
func (h *Handler) NewLoginPath() string {
	if h.owner.Checks() {
		h.logins.arm(time.Now())
		return "/login"
	}
	return "/login?" + url.Values{"code": {h.NewLoginCode()}}.Encode()
}

// RevokeLoginPath withdraws the one-time login of path (as NewLoginPath
// returned it) while it is unused, and reports whether it was still
// outstanding: "/login" disarms the code-free login, "/login?code=X"
// forgets X. `hubgate open` calls it when no browser took the address.
func (h *Handler) RevokeLoginPath(path string) bool {
	u, err := url.Parse(path)
	if err != nil || u.Path != "/login" {
		return false
	}
	now := time.Now()
	if code := u.Query().Get("code"); code != "" {
		return h.logins.use(code, now)
	}
	return h.owner.Checks() && h.logins.disarm(now)
}

func (h *Handler) valid(token string) bool {
	return token != "" && subtle.ConstantTimeCompare([]byte(token), []byte(h.opts.Token)) == 1
}

func cookieName(port string) string { return "hubgate_status_" + port }

func (h *Handler) page(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := pageTemplate().Execute(w, struct{ CSRF string }{csrfOf(r)}); err != nil {
		h.log.Warn("statuspage: render", "err", err)
	}
}

func (h *Handler) asset(name, contentType string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		b, err := assets.ReadFile(name)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", contentType)
		w.Write(b)
	}
}

// State is the answer of /api/state.
type State struct {
	Status  bridge.Status   `json:"status"`
	History []journal.Entry `json:"history"`
	// Rules are the routing rules in words (Commander.Rules); null when
	// the backend has no commander.
	Rules []string `json:"rules"`
	// Now is the daemon's clock, so the page counts a cancel's grace down
	// from the daemon's time, not the browser's.
	Now time.Time `json:"now"`
}

func (h *Handler) state(w http.ResponseWriter, r *http.Request) {
	st, err := h.opts.Backend.Status(r.Context())
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
		return
	}
	hist, err := h.opts.Backend.History(r.Context(), h.opts.History)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
		return
	}
	if hist == nil {
		hist = []journal.Entry{}
	}
	if st.Queue == nil {
		st.Queue = []bridge.QueuedCommand{}
	}
	state := State{Status: st, History: hist, Now: time.Now()}
	if c, ok := h.opts.Backend.(Commander); ok {
		state.Rules = c.Rules()
		if state.Rules == nil {
			state.Rules = []string{}
		}
	}
	writeJSON(w, http.StatusOK, state)
}

// pageEvent is an event of the page's stream: the event with its text
// form (bridge.Event.Describe), which the page shows as it is.
type pageEvent struct {
	bridge.Event
	Text string `json:"text"`
}

// events streams the bridge's events as server-sent events (event
// "bridge", id the event's Seq, data a pageEvent) until the page goes away
// or Close.
func (h *Handler) events(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	// The latest events first, so that the box is not empty until
	// something happens (the page clears it at each (re)connection).
	ch, err := h.opts.Backend.Watch(ctx, streamHistory)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	stream := localhttp.NewEventStream(w)
	if stream.Retry(2*time.Second) != nil {
		return
	}
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-h.closing:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
			if stream.Comment("keep-alive") != nil {
				return
			}
		case e, ok := <-ch:
			if !ok {
				return
			}
			b, err := json.Marshal(pageEvent{Event: e, Text: e.Describe()})
			if err != nil {
				continue
			}
			if stream.Event(strconv.FormatUint(e.Seq, 10), "bridge", b) != nil {
				return
			}
		}
	}
}

func (h *Handler) cancel(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Force bool `json:"force"`
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 4096))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	if len(b) > 0 {
		if err := json.Unmarshal(b, &body); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "the body must be {\"force\": true|false}"})
			return
		}
	}
	res, err := h.opts.Backend.Cancel(bridge.WithCancelSource(r.Context(), PageSource), body.Force)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
		return
	}
	h.log.Info("statuspage: cancel", "command_id", res.CommandID, "mode", res.Mode)
	writeJSON(w, http.StatusOK, res)
}

// textBody reads the {"text": "..."} body of the command and rules test
// routes; it answers the error itself and returns ok false.
func textBody(w http.ResponseWriter, r *http.Request) (string, bool) {
	var body struct {
		Text string `json:"text"`
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 16<<10))
	if err == nil {
		err = json.Unmarshal(b, &body)
	}
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "the body must be {\"text\": \"<command>\"}"})
		return "", false
	}
	if strings.TrimSpace(body.Text) == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "the command is empty"})
		return "", false
	}
	return body.Text, true
}

// commandRequest is the backend's Commander and the command text of r;
// it answers the error itself (501 without a Commander, 400 for a bad
// body) and returns ok false.
func (h *Handler) commandRequest(w http.ResponseWriter, r *http.Request) (c Commander, text string, ok bool) {
	c, ok = h.opts.Backend.(Commander)
	if !ok {
		writeJSON(w, http.StatusNotImplemented, map[string]string{"error": "this daemon cannot run commands from the page"})
		return nil, "", false
	}
	text, ok = textBody(w, r)
	return c, text, ok
}

// CommandResult is the answer of POST /api/command.
type CommandResult struct {
	// CommandID is the command's journal id; 0: the journal could not
	// record it, so it was not run (the events say why).
	CommandID int64 `json:"commandId"`
}

// command routes a command tried on the page as the hub's would be.
func (h *Handler) command(w http.ResponseWriter, r *http.Request) {
	c, text, ok := h.commandRequest(w, r)
	if !ok {
		return
	}
	id, err := c.TryCommand(r.Context(), text, PageSource)
	if err != nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": err.Error()})
		return
	}
	h.log.Info("statuspage: command tried", "command_id", id)
	writeJSON(w, http.StatusOK, CommandResult{CommandID: id})
}

// RulesTestResult is the answer of POST /api/rules-test: the decision
// (`rules test --json`) and its text (`rules test`).
type RulesTestResult struct {
	Explanation rules.Explanation `json:"explanation"`
	Text        string            `json:"text"`
}

func (h *Handler) rulesTest(w http.ResponseWriter, r *http.Request) {
	c, text, ok := h.commandRequest(w, r)
	if !ok {
		return
	}
	res, out := c.ExplainCommand(text)
	writeJSON(w, http.StatusOK, RulesTestResult{Explanation: res, Text: out})
}

// Answerer is a backend that takes the person's answer to the question
// of the run in flight (the bridge: ask_person).
type Answerer interface {
	Answer(ctx context.Context, text, via string) (bridge.AnswerResult, error)
}

// maxAnswer bounds an answer typed in the page's answer box (bytes).
const maxAnswer = 4000

// answer answers the question the run in flight asked the person
// (ask_person): {"text": "..."}. 501 when the backend cannot.
func (h *Handler) answer(w http.ResponseWriter, r *http.Request) {
	a, ok := h.opts.Backend.(Answerer)
	if !ok {
		writeJSON(w, http.StatusNotImplemented, map[string]string{"error": "this daemon takes no answers"})
		return
	}
	var body struct {
		Text string `json:"text"`
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxAnswer+64))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	if err := json.Unmarshal(b, &body); err != nil || strings.TrimSpace(body.Text) == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "the body must be {\"text\": \"your answer\"} with some text"})
		return
	}
	res, err := a.Answer(r.Context(), strings.TrimSpace(body.Text), "status page")
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
		return
	}
	h.log.Info("statuspage: answer", "command_id", res.CommandID, "answered", res.Answered)
	code := http.StatusOK
	if !res.Answered {
		code = http.StatusConflict // no question waits
	}
	writeJSON(w, code, res)
}

// pageJSON is how the page's API answers.
var pageJSON = localhttp.JSON{ContentType: "application/json", Newline: true, Fallback: []byte(`{"error":"encoding failed"}`)}

func writeJSON(w http.ResponseWriter, code int, v any) { _ = pageJSON.Write(w, code, v) }

// Server is the page served on a loopback listener.
type Server struct {
	h   *Handler
	ln  net.Listener
	srv *http.Server
}

// Listen binds addr, which must be a 127.0.0.1 address ("127.0.0.1:0":
// any free port), for the page of opts.
func Listen(addr string, opts Options) (*Server, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("statuspage: address %q: %w", addr, err)
	}
	if host != "127.0.0.1" {
		return nil, fmt.Errorf("statuspage: listens on 127.0.0.1 only, not %q", host)
	}
	h, err := New(opts)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("statuspage: %w", err)
	}
	s := &Server{h: h, ln: ln, srv: localhttp.NewServer(h, localhttp.Options{Logger: h.log})}
	s.srv.ConnContext = h.owner.ConnContext
	return s, nil
}

// Addr is the listening address.
func (s *Server) Addr() *net.TCPAddr { return s.ln.Addr().(*net.TCPAddr) }

// URL is the address that opens the page, with its token.
func (s *Server) URL() string {
	return "http://" + s.ln.Addr().String() + "/?" + url.Values{"token": {s.h.Token()}}.Encode()
}

// NewLoginURL returns a one-time login address (see NewLoginPath): what
// `hubgate open` gives the browser.
func (s *Server) NewLoginURL() string {
	return "http://" + s.ln.Addr().String() + s.h.NewLoginPath()
}

// RevokeLoginURL withdraws the unused one-time login address u that
// NewLoginURL returned (Handler.RevokeLoginPath); false when u is not one
// of this page's, or is used or expired.
func (s *Server) RevokeLoginURL(u string) bool {
	path, ok := strings.CutPrefix(u, "http://"+s.ln.Addr().String())
	return ok && s.h.RevokeLoginPath(path)
}

// Serve serves until ctx ends, then ends the event streams and shuts down
// (bounded to 5 s).
func (s *Server) Serve(ctx context.Context) error {
	serving := localhttp.Serve(s.srv, s.ln)
	select {
	case <-serving.Done():
		if err := serving.Err(); err != nil {
			return fmt.Errorf("statuspage: %w", err)
		}
		return nil
	case <-ctx.Done():
	}
	s.h.Close()
	_ = serving.Stop(context.Background(), 5*time.Second)
	return nil
}
