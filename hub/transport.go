package hub

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"

	"github.com/hubgate/hubgate/internal/lazyregexp"
	"github.com/hubgate/hubgate/internal/retryafter"
)

const recordSeparator = 0x1E

var (
	pingRecord  = []byte("{\"type\":6}\x1e")
	closeRecord = []byte("{\"type\":7}\x1e")
	// errWriteClosed is returned to the library once the client has sent
	// its own close message.
	errWriteClosed = errors.New("hub: connection closing")
	// ErrMessageTooLarge: the hub answered an invocation with a message
	// over MaxMessageSize, which was skipped. (A message over the limit
	// never ends the connection: an invocation becomes a KindTooLarge
	// event.)
	ErrMessageTooLarge = errors.New("hub: message larger than the receive limit")
)

// userAgent is sent as X-SignalR-User-Agent, as the official clients do.
const userAgent = "hubgate-hub/1.0 (Go; philippseith/signalr 0.11.0)"

type negotiateResponse struct {
	NegotiateVersion    int    `json:"negotiateVersion"`
	ConnectionID        string `json:"connectionId"`
	ConnectionToken     string `json:"connectionToken"`
	URL                 string `json:"url"`
	AccessToken         string `json:"accessToken"`
	Error               string `json:"error"`
	ProtocolVersion     any    `json:"ProtocolVersion"` // ASP.NET (not Core) SignalR answers this
	AvailableTransports []struct {
		Transport string `json:"transport"`
	} `json:"availableTransports"`
}

// MaxRedirects caps the negotiate requests of one connection attempt, as
// the official clients do (MAX_REDIRECTS = 100): when the 100th still
// answers a redirect, the attempt fails with ErrTooManyRedirects.
const MaxRedirects = 100

func authHeaders(token string) http.Header {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+token)
	h.Set("X-Device-Token", token)
	h.Set("X-SignalR-User-Agent", userAgent)
	return h
}

// retryAfter reads a Retry-After header (seconds or an HTTP date); the
// client bounds the wait (Backoff.Revoked), HTTPError reports it as sent.
func retryAfter(h http.Header, now time.Time) time.Duration {
	return retryafter.FromHeader(h, now, 0)
}

// endpoint is where one negotiate goes and what it is sent with.
type endpoint struct {
	url *url.URL
	// bearer is the Authorization bearer: the device token at the hub, the
	// redirect's access token at the service it redirected to.
	bearer string
	// redirected: this endpoint came from a negotiate redirect.
	redirected bool
}

// negotiateURL is the endpoint's negotiate address as the official client
// builds it: the path with "/negotiate" appended, the query kept as it
// came, negotiateVersion=1 added unless the query has it.
func (e endpoint) negotiateURL() string {
	u := *e.url
	u.Path = strings.TrimSuffix(u.Path, "/") + "/negotiate"
	u.RawPath = ""
	if e.url.RawPath != "" {
		u.RawPath = strings.TrimSuffix(e.url.RawPath, "/") + "/negotiate"
	}
	if !u.Query().Has("negotiateVersion") {
		u.RawQuery = appendQuery(u.RawQuery, "negotiateVersion", "1")
	}
	return u.String()
}

// appendQuery adds one parameter to a raw query, leaving the rest as it
// came (a redirect's query is the service's business).
func appendQuery(raw, key, value string) string {
	p := url.QueryEscape(key) + "=" + url.QueryEscape(value)
	if raw == "" {
		return p
	}
	return raw + "&" + p
}

// dial negotiates, following redirects, and opens the WebSocket. It
// returns the connection and the connection id. Every attempt starts at
// Config.URL: a redirect's access token is never reused.
func (c *Client) dial(ctx context.Context, token string) (*websocket.Conn, string, error) {
	ep := endpoint{url: c.url, bearer: token}
	var (
		neg     negotiateResponse
		cookies []*http.Cookie
		err     error
	)
	for hops := 0; ; hops++ {
		neg, cookies, err = c.negotiate(ctx, ep, token)
		if err != nil {
			return nil, "", err
		}
		if neg.URL == "" {
			break
		}
		if hops+1 >= MaxRedirects {
			return nil, "", fmt.Errorf("%w: %d negotiate requests in a row answered a redirect (the last to %s)", ErrTooManyRedirects, MaxRedirects, redactURL(neg.URL))
		}
		next, err := redirectTarget(ep.url, neg.URL)
		if err != nil {
			return nil, "", err
		}
		if neg.AccessToken != "" {
			ep.bearer = neg.AccessToken
		}
		ep.url, ep.redirected = next, true
		c.stats.redirects.Add(1)
		c.log.Debug("negotiate redirected", "hop", hops+1, "to", next.Scheme+"://"+next.Host+next.Path)
	}
	if len(neg.AvailableTransports) > 0 {
		ok := false
		for _, t := range neg.AvailableTransports {
			ok = ok || strings.EqualFold(t.Transport, "WebSockets")
		}
		if !ok {
			return nil, "", fmt.Errorf("%w: WebSockets are not offered", errNegotiate)
		}
	}
	// Negotiate version 0 has no connection token: the id is the
	// connection id (the official client sets connectionToken to it).
	id := neg.ConnectionToken
	if neg.NegotiateVersion < 1 {
		id = neg.ConnectionID
	}
	if id == "" {
		return nil, "", fmt.Errorf("%w: negotiate (version %d) answered no connection id or token", ErrProtocol, neg.NegotiateVersion)
	}
	wsURL := *ep.url
	wsURL.RawQuery = appendQuery(wsURL.RawQuery, "id", id)
	h := authHeaders(token)
	if ep.bearer != token {
		// The service takes the redirect's access token: in the query, as
		// the vendor's raw-protocol steps and the official clients in
		// browsers send it, and as the bearer, as the official clients
		// elsewhere and the vendor's WinHTTP sample; X-Device-Token stays
		// the device token. (A redirect without an access token keeps the
		// device token as bearer, which never goes into a URL.)
		wsURL.RawQuery = appendQuery(wsURL.RawQuery, "access_token", ep.bearer)
		h.Set("Authorization", "Bearer "+ep.bearer)
	}
	if strings.EqualFold(wsURL.Scheme, "https") {
		wsURL.Scheme = "wss"
	} else {
		wsURL.Scheme = "ws"
	}
	for _, ck := range cookies { // sticky sessions
		h.Add("Cookie", ck.Name+"="+ck.Value)
	}
	ws, uresp, err := websocket.Dial(ctx, wsURL.String(), &websocket.DialOptions{
		HTTPClient: c.cfg.HTTPClient,
		HTTPHeader: h,
	})
	if err != nil {
		if uresp != nil && uresp.StatusCode != http.StatusSwitchingProtocols && uresp.StatusCode != 0 {
			return nil, "", &HTTPError{Op: "upgrade", StatusCode: uresp.StatusCode, RetryAfter: retryAfter(uresp.Header, time.Now()), Redirected: ep.redirected}
		}
		// The dial error quotes the URL, access token and connection
		// token included.
		return nil, "", fmt.Errorf("hub: WebSocket upgrade: %s", redactText(err.Error(), ep.bearer, token, id))
	}
	// No WebSocket read limit: wsConn bounds what it keeps by
	// MaxMessageSize and skips a record over it (readMessage).
	ws.SetReadLimit(-1)
	return ws, id, nil
}

// negotiate sends one negotiate request and reads its answer; an answer
// with an error member is an error.
func (c *Client) negotiate(ctx context.Context, ep endpoint, token string) (negotiateResponse, []*http.Cookie, error) {
	var neg negotiateResponse
	op := "negotiate"
	if ep.redirected {
		op = "service negotiate"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.negotiateURL(), http.NoBody)
	if err != nil {
		return neg, nil, fmt.Errorf("hub: %s: %s", op, redactText(err.Error(), ep.bearer, token))
	}
	req.Header = authHeaders(token)
	req.Header.Set("Authorization", "Bearer "+ep.bearer)
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) { // its text quotes the URL
			err = ue.Err
		}
		return neg, nil, fmt.Errorf("hub: %s at %s: %w", op, ep.url.Host, redactErr(err, ep.bearer, token))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return neg, nil, &HTTPError{Op: op, StatusCode: resp.StatusCode, RetryAfter: retryAfter(resp.Header, time.Now()), Redirected: ep.redirected}
	}
	if err != nil {
		return neg, nil, fmt.Errorf("hub: %s: reading the answer: %w", op, err)
	}
	if err := json.Unmarshal(body, &neg); err != nil {
		return neg, nil, fmt.Errorf("hub: %s: %w: answer is not JSON: %v", op, ErrProtocol, err)
	}
	if neg.Error != "" {
		return neg, nil, fmt.Errorf("%w: %s", errNegotiate, redactText(neg.Error, ep.bearer, token))
	}
	if neg.ProtocolVersion != nil {
		return neg, nil, fmt.Errorf("%w: the server is an ASP.NET SignalR server, not ASP.NET Core SignalR", errNegotiate)
	}
	return neg, resp.Cookies(), nil
}

// redirectTarget checks a negotiate redirect's url: an absolute http(s)
// URL, and never from https down to plain http off loopback (the device
// token travels in X-Device-Token).
func redirectTarget(from *url.URL, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return nil, fmt.Errorf("%w: negotiate redirected to %q, not an absolute URL", ErrProtocol, redactURL(raw))
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
	case "http":
		if strings.EqualFold(from.Scheme, "https") && !isLoopback(u.Hostname()) {
			return nil, fmt.Errorf("%w: negotiate redirected from https to plain http (%s): refused, the device token would travel in clear", errNegotiate, u.Host)
		}
	default:
		return nil, fmt.Errorf("%w: negotiate redirected to a %q URL, not http(s)", ErrProtocol, u.Scheme)
	}
	u.Fragment, u.RawFragment = "", ""
	return u, nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// accessTokenParam matches an access_token query parameter's value.
var accessTokenParam = lazyregexp.New(`(?i)(access_token=)[^&\s"']+`)

// connectionTokenParam matches an id query parameter's value: the
// upgrade URL's connection token (or, negotiate version 0, the connection
// id that stands for it), which SignalR keeps private to the connection.
var connectionTokenParam = lazyregexp.New(`(?i)([?&]id=)[^&\s"']+`)

// redactText removes the given secrets and any access_token or id query
// value from a text.
func redactText(s string, secrets ...string) string {
	for _, sec := range secrets {
		s = scrubText(s, sec)
	}
	s = connectionTokenParam.ReplaceAllString(s, "${1}[redacted]")
	return accessTokenParam.ReplaceAllString(s, "${1}[redacted]")
}

// redactErr is err, or an error with its text redacted when it holds a
// secret (its chain is then lost: only its text was unsafe).
func redactErr(err error, secrets ...string) error {
	if t := redactText(err.Error(), secrets...); t != err.Error() {
		return errors.New(t)
	}
	return err
}

// redactURL is a URL for an error text: no query values, no user info.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Scheme + "://" + u.Host + u.Path
}

// wireMsg is one SignalR JSON record, as far as the client needs it.
type wireMsg struct {
	Type           int               `json:"type"`
	Target         string            `json:"target"`
	InvocationID   string            `json:"invocationId"`
	Arguments      []json.RawMessage `json:"arguments"`
	Error          string            `json:"error"`
	AllowReconnect bool              `json:"allowReconnect"`
}

// closeInfo is a close message the hub sent.
type closeInfo struct {
	Error          string
	AllowReconnect bool
}

// wsConn is the signalr.Connection of one session: a WebSocket whose
// incoming records are tapped (see docs/signalr.md).
type wsConn struct {
	c       *Client
	session uint64
	ws      *websocket.Conn
	ctx     context.Context
	cancel  context.CancelCauseFunc

	idMu sync.Mutex
	id   string

	// Read side: only one Read runs at a time; readMu is held for all of it.
	readMu    sync.Mutex
	dead      bool
	handshook bool
	partial   []byte     // an incomplete record (without separator)
	out       [][]byte   // records for the library, each with its separator
	big       *bigRecord // the record over MaxMessageSize being skipped, nil when none
	cut       bool       // the last message ended inside a record over the limit
	tail      bool       // the next record may be the rest of that one
	rest      io.Reader  // the unread rest of a WebSocket message over the limit, nil when none
	chunk     []byte     // read buffer of rest
	badJSON   int        // records that were not JSON
	// msg holds the last WebSocket message read; out points into it, so
	// it is reused only once out is empty (a kept argument is a copy).
	msg     bytes.Buffer
	lastFwd time.Time

	closeMu  sync.Mutex
	closeMsg *closeInfo // the hub's close message
	libClose string     // the error of the library's own close message (why its loop ended)

	writeClosed atomic.Bool
	failOnce    sync.Once
	answered    atomic.Bool // the hub's handshake response was read
}

func newWSConn(c *Client, session uint64, ws *websocket.Conn, id string) *wsConn {
	ctx, cancel := context.WithCancelCause(context.Background())
	return &wsConn{c: c, session: session, ws: ws, id: id, ctx: ctx, cancel: cancel, lastFwd: time.Now()}
}

func (w *wsConn) Context() context.Context { return w.ctx }

func (w *wsConn) ConnectionID() string {
	w.idMu.Lock()
	defer w.idMu.Unlock()
	return w.id
}

func (w *wsConn) SetConnectionID(id string) {
	w.idMu.Lock()
	w.id = id
	w.idMu.Unlock()
}

// fail ends the connection with cause (the first cause wins).
func (w *wsConn) fail(cause error) {
	w.failOnce.Do(func() { w.cancel(cause) })
}

// cause is why the connection ended, nil while it is up.
func (w *wsConn) cause() error {
	if w.ctx.Err() == nil {
		return nil
	}
	return context.Cause(w.ctx)
}

func (w *wsConn) closeMessage() *closeInfo {
	w.closeMu.Lock()
	defer w.closeMu.Unlock()
	return w.closeMsg
}

// libraryCloseReason is the error text of the library's close message, if
// it sent one.
func (w *wsConn) libraryCloseReason() string {
	w.closeMu.Lock()
	defer w.closeMu.Unlock()
	return w.libClose
}

// Read hands the library the next record that is its business, one
// record per call (the library's handshake reader drops whatever follows
// the first record of a read). Every record of a WebSocket message is
// handled as soon as the message is read, so an event read from the wire
// is queued even if the connection ends right after.
func (w *wsConn) Read(p []byte) (int, error) {
	w.readMu.Lock()
	defer w.readMu.Unlock()
	for {
		if len(w.out) > 0 {
			n := copy(p, w.out[0])
			if n == len(w.out[0]) {
				w.out[0] = nil
				w.out = w.out[1:]
			} else {
				w.out[0] = w.out[0][n:]
			}
			return n, nil
		}
		if w.dead || w.ctx.Err() != nil {
			return 0, fmt.Errorf("hub: connection ended: %w", context.Cause(w.ctx))
		}
		read := w.readMessage
		if w.rest != nil {
			read = w.readMore
		}
		if err := read(); err != nil {
			w.fail(err)
			return 0, fmt.Errorf("hub: connection ended: %w", context.Cause(w.ctx))
		}
	}
}

// maxKeptBuffer bounds the read buffer kept between messages: a rare
// large message (a profile) does not hold its size for the connection's
// life.
const maxKeptBuffer = 64 << 10

// readMessage reads the next WebSocket message and handles its records.
// Up to MaxMessageSize+1 bytes go into w.msg, reused from message to
// message (io.ReadAll's growing copies were a third of the reader's
// allocations), and records wholly inside it are handed on without a
// copy. A longer message is read on in chunks (readMore): memory stays bounded by
// the limit whatever the hub sends, and a record over the limit is
// skipped (oversize), never a reason to end the connection. The
// WebSocket itself has no read limit (SetReadLimit(-1) in dial): its own
// limit closes the connection with 1009 Message Too Big.
func (w *wsConn) readMessage() error {
	if w.msg.Cap() > maxKeptBuffer {
		w.msg = bytes.Buffer{}
	}
	w.msg.Reset()
	_, r, err := w.ws.Reader(w.ctx)
	if err != nil {
		return readError(err)
	}
	limit := w.c.cfg.MaxMessageSize
	if _, err := w.msg.ReadFrom(io.LimitReader(r, limit+1)); err != nil {
		return readError(err)
	}
	w.beginMessage()
	if err := w.feed(w.msg.Bytes(), true); err != nil {
		return err
	}
	if int64(w.msg.Len()) > limit {
		w.rest = r // read on by Read, a chunk at a time (readMore)
		return nil
	}
	return w.endMessage()
}

// readMore reads and handles the next chunk of the rest of a message over
// the limit. Read returns between chunks whatever they gave the library,
// and a ping at least every second: the library's server timeout keeps
// seeing traffic however long the hub takes to send a giant message.
func (w *wsConn) readMore() error {
	if w.chunk == nil {
		w.chunk = make([]byte, 64<<10)
	}
	n, err := w.rest.Read(w.chunk)
	if n > 0 {
		if ferr := w.feed(w.chunk[:n], false); ferr != nil {
			return ferr
		}
	}
	if errors.Is(err, io.EOF) {
		w.rest = nil
		return w.endMessage()
	}
	if err != nil {
		return readError(err)
	}
	if len(w.out) == 0 {
		w.emit(w.keepAlive())
	}
	return nil
}

// readError turns a WebSocket read error into a cause.
func readError(err error) error {
	if s := websocket.CloseStatus(err); s != -1 {
		return fmt.Errorf("hub: WebSocket closed by the hub (status %d %s): %w", int(s), s, io.EOF)
	}
	return fmt.Errorf("hub: reading: %w", err)
}

// maxPeek is how much of a record over the limit is kept to learn what
// it was (its type, target, invocation id and first argument): the
// SignalR JSON writers put all of these before the arguments' bulk.
const maxPeek = 64 << 10

// bigRecord is a record over MaxMessageSize being skipped: its first
// bytes and its size so far.
type bigRecord struct {
	prefix []byte
	size   int64
}

func (b *bigRecord) add(p []byte) {
	if room := maxPeek - len(b.prefix); room > 0 {
		b.prefix = append(b.prefix, p[:min(room, len(p))]...)
	}
	b.size += int64(len(p))
}

// feed cuts data, the next piece of the current WebSocket message, into
// records, joining a record that began earlier, and handles each one.
// stable: data stays as it is until w.out is drained (it is w.msg), so a
// record wholly inside it is handed on without a copy.
func (w *wsConn) feed(data []byte, stable bool) error {
	limit := w.c.cfg.MaxMessageSize
	for len(data) > 0 {
		i := bytes.IndexByte(data, recordSeparator)
		if w.big != nil {
			if i < 0 {
				w.big.add(data)
				return nil
			}
			w.big.add(data[:i])
			big := w.big
			w.big = nil
			w.emit(w.oversize(big, true))
			data = data[i+1:]
			continue
		}
		if i < 0 {
			if int64(len(w.partial)+len(data)) > limit {
				w.big = &bigRecord{}
				w.big.add(w.partial)
				w.big.add(data)
				w.partial = nil
				return nil
			}
			w.partial = append(w.partial, data...)
			return nil
		}
		var rec []byte
		switch n := int64(len(w.partial) + i); {
		case n == 0: // an empty record: nothing to handle
			data = data[1:]
			continue
		case n > limit:
			big := &bigRecord{}
			big.add(w.partial)
			big.add(data[:i])
			w.partial = nil
			w.emit(w.oversize(big, true))
			data = data[i+1:]
			continue
		case len(w.partial) > 0:
			rec = append(w.partial, data[:i+1]...)
			w.partial = nil
		case stable:
			rec = data[: i+1 : i+1]
		default:
			rec = append([]byte(nil), data[:i+1]...)
		}
		data = data[i+1:]
		out, err := w.handle(rec)
		if err != nil {
			return err
		}
		w.emit(out)
	}
	return nil
}

// emit queues bytes for the library (nil: nothing).
func (w *wsConn) emit(out []byte) {
	if out != nil {
		w.out = append(w.out, out)
		w.lastFwd = time.Now()
	}
}

// beginMessage starts a WebSocket message: its first record may be the
// rest of a record over the limit that the last one cut (endMessage).
func (w *wsConn) beginMessage() { w.tail, w.cut = w.cut, false }

// endMessage ends a record over the limit that is still open when its
// WebSocket message ends: the official clients read every WebSocket
// message as whole records (the JavaScript client's TextMessageFormat
// refuses one that does not end with the separator), so a hub they work
// with never continues a record in the next message, and waiting for a
// separator that may never come would swallow the records after it.
func (w *wsConn) endMessage() error {
	if w.big == nil {
		return nil
	}
	big := w.big
	w.big = nil
	w.emit(w.oversize(big, false))
	w.cut = true
	return nil
}

// oversize handles a record over MaxMessageSize, skipped unread except
// for its first bytes (terminated: it ended with its separator, else with
// its WebSocket message). An invocation becomes an event of KindTooLarge
// (with the target and, for a DeviceCommand, the command when its first
// bytes say them) and, when the hub awaits a result, a completion with an
// error; a completion the library waits for becomes one with an error
// that says so (session.result reads it). Nothing here ends the
// connection. It returns what to hand the library.
func (w *wsConn) oversize(big *bigRecord, terminated bool) []byte {
	tail := w.tail
	w.tail = false
	limit := w.c.cfg.MaxMessageSize
	p := peekRecord(big.prefix)
	if tail && !p.hasType {
		// The rest of the record cut at the previous message's end.
		w.c.log.Debug("the rest of a record over the receive limit, cut at its message's end; dropped", "session", w.session, "bytes", big.size)
		return w.keepAlive()
	}
	switch p.typ {
	case 3: // Completion: an invocation of ours waits for it.
		if p.invocationID != "" {
			// The invocation's caller says what it means (session).
			w.c.log.Debug("the hub answered with a message over the receive limit; skipped", "session", w.session,
				"bytes", big.size, "limit", limit)
			return completionRecord(p.invocationID, tooLargeAnswer(big.size, limit, p.resultID))
		}
		return w.keepAlive()
	case 2, 6: // StreamItem (none asked for), Ping: nothing lost.
		return w.keepAlive()
	case 7: // Close: the hub ends the connection; its reason is lost.
		w.closeMu.Lock()
		w.closeMsg = &closeInfo{Error: fmt.Sprintf("(a close message of %d bytes, over the receive limit)", big.size), AllowReconnect: true}
		w.closeMu.Unlock()
		return closeRecord
	}
	w.c.tooLarge(w.session, p.target, p.invocationID, p.command, TooLarge{Size: big.size, Limit: limit, Unterminated: !terminated})
	if p.invocationID != "" {
		w.writeAsync(completionRecord(p.invocationID, fmt.Sprintf("the message is larger than the device's receive limit (%d bytes; the limit is %d)", big.size, limit)))
	}
	return w.keepAlive()
}

// tooLargeAnswerPrefix starts the error of the completion that stands
// in for an answer over the receive limit (oversize).
const tooLargeAnswerPrefix = "hubgate: the answer is larger than the receive limit"

// id, when not "", is the answer's result's "id" read from its first
// bytes (a device record's: VerifySelf checks it).
func tooLargeAnswer(size, limit int64, id string) string {
	msg := fmt.Sprintf("%s (%d bytes; the limit is %d)", tooLargeAnswerPrefix, size, limit)
	if id != "" {
		msg += "; result id " + strconv.Quote(id)
	}
	return msg
}

// parseTooLargeAnswer reads tooLargeAnswer's text back.
func parseTooLargeAnswer(msg string) (size, limit int64, id string, ok bool) {
	rest, found := strings.CutPrefix(msg, tooLargeAnswerPrefix)
	if !found {
		return 0, 0, "", false
	}
	head, quoted, hasID := strings.Cut(rest, "; result id ")
	if _, err := fmt.Sscanf(head, " (%d bytes; the limit is %d)", &size, &limit); err != nil {
		return 0, 0, "", false
	}
	if hasID {
		if id, err := strconv.Unquote(quoted); err == nil {
			return size, limit, id, true
		}
	}
	return size, limit, "", true
}

// peeked is what the first bytes of a record say.
type peeked struct {
	typ          int
	hasType      bool
	target       string
	invocationID string
	command      string // the first argument, when it is a string (cut to maxPeekCommand)
	resultID     string // a completion's result's top-level "id" (a device record's), when it is a string
}

// maxPeekCommand bounds the command text read from a record over the
// limit (a command string may itself be the giant part).
const maxPeekCommand = 256

// peekRecord reads a record's members from its first bytes, as far as
// they go: type, target and invocationId, the first argument when it is
// a string, and a completion's result's "id". JSON member order is not
// fixed, so it reads on past "arguments" and "result" when their values
// are whole within prefix (a member after a value cut off is unknown).
// Members it cannot read stay empty.
func peekRecord(prefix []byte) (p peeked) {
	dec := json.NewDecoder(bytes.NewReader(prefix))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return p
	}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return p
		}
		key, _ := kt.(string)
		switch key {
		case "type":
			if dec.Decode(&p.typ) != nil {
				return p
			}
			p.hasType = true
		case "target":
			if dec.Decode(&p.target) != nil {
				return p
			}
		case "invocationId":
			if dec.Decode(&p.invocationID) != nil {
				return p
			}
		case "arguments":
			if t, err := dec.Token(); err != nil || t != json.Delim('[') {
				return p
			}
			p.command = leadingString(prefix[dec.InputOffset():])
			if !skipRest(dec, ']') {
				return p
			}
		case "result":
			t, err := dec.Token()
			if err != nil {
				return p
			}
			if t != json.Delim('{') {
				if _, ok := t.(json.Delim); ok && !skipRest(dec, ']') {
					return p
				}
				continue
			}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return p
				}
				if k, _ := kt.(string); k == "id" && p.resultID == "" {
					var id any
					if dec.Decode(&id) != nil {
						return p
					}
					p.resultID, _ = id.(string)
					continue
				}
				var skip json.RawMessage
				if dec.Decode(&skip) != nil {
					return p
				}
			}
			if _, err := dec.Token(); err != nil {
				return p
			}
		default:
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return p
			}
		}
	}
	return p
}

// skipRest reads the rest of an array or object whose opening dec has
// read, to its closing delimiter end; false when prefix ends first.
func skipRest(dec *json.Decoder, end json.Delim) bool {
	for dec.More() {
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return false
		}
	}
	t, err := dec.Token()
	return err == nil && t == end
}

// leadingString reads the JSON string at the start of b (after white
// space), at most maxPeekCommand bytes of it: a longer or cut-off string
// ends with "…". Anything else is "".
func leadingString(b []byte) string {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 || b[0] != '"' {
		return ""
	}
	end := -1
	for i := 1; i < len(b); i++ {
		if b[i] == '\\' {
			i++
			continue
		}
		if b[i] == '"' {
			end = i
			break
		}
	}
	if end > 0 && end <= maxPeekCommand {
		var s string
		if json.Unmarshal(b[:end+1], &s) == nil {
			return s
		}
		return ""
	}
	// Too long or cut off: decode a bounded head (backing off an escape
	// or a UTF-8 sequence cut in two).
	n := min(len(b), maxPeekCommand+1) // the quote and maxPeekCommand bytes
	if end > 0 {
		n = min(n, end)
	}
	for k := n; k > 1 && k > n-8; k-- {
		var s string
		if utf8.Valid(b[1:k]) && json.Unmarshal(append(append([]byte(nil), b[:k]...), '"'), &s) == nil {
			return s + "…"
		}
	}
	return ""
}

// handle decides what becomes of one record (with its separator): the
// bytes to forward to the library, or nil to swallow it.
func (w *wsConn) handle(rec []byte) ([]byte, error) {
	body := rec[:len(rec)-1]
	tail := w.tail
	w.tail = false
	if !w.handshook {
		w.handshook = true // the handshake response: the library checks it
		w.answered.Store(true)
		return rec, nil
	}
	var m wireMsg
	if err := json.Unmarshal(body, &m); err != nil {
		// One odd record never costs the connection.
		if !tail {
			w.badJSON++
		}
		switch {
		case tail:
			w.c.log.Debug("the rest of a record over the receive limit, cut at its message's end; dropped", "session", w.session, "bytes", len(body))
		case w.badJSON == 1:
			w.c.log.Warn("hub sent a record that is not JSON; skipped", "session", w.session, "bytes", len(body), "err", err)
		default:
			w.c.log.Debug("hub sent a record that is not JSON; skipped", "session", w.session, "bytes", len(body), "err", err)
		}
		return w.keepAlive(), nil
	}
	switch m.Type {
	case 1: // Invocation: ours, in wire order.
		w.c.received(w.session, m.Target, m.InvocationID, m.Arguments)
		if m.InvocationID != "" {
			w.writeAsync(completionRecord(m.InvocationID, ""))
		}
		return w.keepAlive(), nil
	case 4: // StreamInvocation: no hub-to-client streams here.
		if m.InvocationID != "" {
			w.writeAsync(completionRecord(m.InvocationID, "streaming to the device is not supported"))
		}
		w.c.log.Warn("hub sent a stream invocation; refused", "target", m.Target)
		return w.keepAlive(), nil
	case 2, 3, 5, 6:
		return rec, nil
	case 7:
		w.closeMu.Lock()
		w.closeMsg = &closeInfo{Error: m.Error, AllowReconnect: m.AllowReconnect}
		w.closeMu.Unlock()
		return rec, nil
	default: // 8 Ack, 9 Sequence (never negotiated) or a future type: ignore.
		w.c.log.Debug("hub sent an unknown message type; ignored", "type", m.Type)
		return w.keepAlive(), nil
	}
}

// keepAlive returns a ping for the library when it has not been handed
// anything for a second, so that its server-timeout clock sees traffic.
func (w *wsConn) keepAlive() []byte {
	if time.Since(w.lastFwd) >= time.Second {
		return pingRecord
	}
	return nil
}

func completionRecord(id, errText string) []byte {
	m := map[string]any{"type": 3, "invocationId": id}
	if errText != "" {
		m["error"] = errText
	}
	b, _ := json.Marshal(m)
	return append(b, recordSeparator)
}

func (w *wsConn) writeAsync(rec []byte) {
	go func() { _, _ = w.Write(rec) }()
}

// Write sends one record (the library writes each message in one call).
func (w *wsConn) Write(p []byte) (int, error) {
	if bytes.HasPrefix(p, []byte(`{"type":7`)) {
		// The library ends its loop with a close message that says why
		// (its Err() is overwritten by "backoff exceeded" afterwards).
		var m wireMsg
		if json.Unmarshal(bytes.TrimSuffix(p, []byte{recordSeparator}), &m) == nil && m.Error != "" {
			w.closeMu.Lock()
			if w.libClose == "" {
				w.libClose = m.Error
			}
			w.closeMu.Unlock()
		}
	}
	if w.writeClosed.Load() {
		return 0, errWriteClosed
	}
	if err := w.ws.Write(w.ctx, websocket.MessageText, p); err != nil {
		if w.ctx.Err() == nil {
			w.fail(fmt.Errorf("hub: writing: %w", err))
		}
		return 0, err
	}
	return len(p), nil
}

// closeGracefully sends a close message and stops every later write.
func (w *wsConn) closeGracefully() {
	if w.writeClosed.Load() || w.ctx.Err() != nil {
		return
	}
	_, _ = w.Write(closeRecord)
	w.writeClosed.Store(true)
}

// shutdown ends the connection: with a WebSocket closing handshake
// (bounded by wait) when graceful, at once otherwise. When it returns no
// Read is in progress and no record of this connection will be handled.
func (w *wsConn) shutdown(cause error, graceful bool, wait time.Duration) {
	if graceful && w.ctx.Err() == nil {
		done := make(chan struct{})
		go func() {
			_ = w.ws.Close(websocket.StatusNormalClosure, "")
			close(done)
		}()
		t := time.NewTimer(wait)
		select {
		case <-done:
		case <-t.C:
			w.c.log.Debug("the hub did not complete the WebSocket closing handshake in time", "session", w.session, "wait", wait)
		}
		t.Stop()
		// Cancelling the context closes the connection under a pending
		// Read; a Close still waiting ends by its own timeouts.
		w.fail(cause)
	} else {
		w.fail(cause)
		_ = w.ws.CloseNow()
	}
	w.readMu.Lock()
	w.dead = true
	w.out, w.partial, w.big, w.rest = nil, nil, nil, nil
	w.readMu.Unlock()
}
