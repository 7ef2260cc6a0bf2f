package mockhub

import (
	"bufio"
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/philippseith/signalr"

	"github.com/hubgate/hubgate/deviceapi"
)

func (s *Server) startHub() error {
	s.hubCtx, s.hubStop = context.WithCancel(context.Background())
	srv, err := signalr.NewServer(s.hubCtx,
		signalr.HubFactory(func() signalr.HubInterface { return &deviceHub{s: s} }),
		signalr.WithHubLifetimeManager(func(signalr.Server) (signalr.HubLifetimeManager, error) {
			return &lifetime{s: s, groups: map[string]map[string]bool{}}, nil
		}),
		signalr.KeepAliveInterval(s.cfg.KeepAliveInterval),
		signalr.TimeoutInterval(s.cfg.TimeoutInterval),
		signalr.HandshakeTimeout(s.cfg.HandshakeTimeout),
		signalr.MaximumReceiveMessageSize(s.cfg.MaxMessageSize),
		signalr.Logger(kitLogger{l: s.log, s: s}, false),
		// The Origin of a WebSocket upgrade is checked before the library,
		// by the mock's CORS policy (cors.go), which stands in front of
		// every hub route (the service's, and /device with DirectHub): a
		// browser page of an allowed origin connects over WebSockets.
		signalr.InsecureSkipVerify(true),
	)
	if err != nil {
		s.hubStop()
		return fmt.Errorf("mockhub: signalr server: %w", err)
	}
	s.hub = srv
	return nil
}

// kitLogger sends the library's go-kit log lines to slog at debug level.
// It also journals the hub calls the library refuses before any hub
// method runs (an unknown method, wrong arguments): the library says so
// only in its log, and a developer's client that misspells a method
// should see it in the journal.
type kitLogger struct {
	l *slog.Logger
	s *Server
}

func (k kitLogger) Log(kv ...any) error {
	if k.s != nil {
		k.s.journalRefusedCall(kv)
	}
	if !k.l.Enabled(context.Background(), slog.LevelDebug) {
		return nil
	}
	attrs := make([]any, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		key := fmt.Sprint(kv[i])
		if key == "ts" {
			continue
		}
		attrs = append(attrs, slog.String(key, fmt.Sprint(kv[i+1])))
	}
	k.l.Debug("signalr", attrs...)
	return nil
}

// journalRefusedCall journals a hub invocation the library answered with
// an error completion of its own (its log line has event getMethod or
// buildMethodArguments, the connection and the method's name).
func (s *Server) journalRefusedCall(kv []any) {
	var evt, conn, name, errText string
	for i := 0; i+1 < len(kv); i += 2 {
		switch fmt.Sprint(kv[i]) {
		case "event":
			evt = fmt.Sprint(kv[i+1])
		case "connection":
			conn = fmt.Sprint(kv[i+1])
		case "name":
			name = fmt.Sprint(kv[i+1])
		case "error":
			errText = fmt.Sprint(kv[i+1])
		}
	}
	if evt != "getMethod" && evt != "buildMethodArguments" {
		return
	}
	if evt == "getMethod" {
		errText = "Unknown method " + name
	}
	ev := Event{Source: SourceHub, Action: name, ConnectionID: conn, Error: errText}
	s.mu.Lock()
	if c := s.conns[conn]; c != nil {
		ev.DeviceID, ev.TokenID = c.tr.deviceID, c.tr.tokenID
	}
	s.mu.Unlock()
	s.record(ev)
}

// ---- identity and transports -------------------------------------------

type transportKey struct{}

// transport is one authenticated /device HTTP request: a negotiation, a
// WebSocket, an SSE stream or an SSE post. It knows how to drop itself.
type transport struct {
	deviceID, tokenID, kind string
	cancel                  context.CancelFunc

	mu       sync.Mutex
	conn     net.Conn // the hijacked WebSocket connection
	dropped  bool
	awaiting map[string]bool // invocation ids of PushAwaiting (results.go)
}

func (t *transport) setConn(c net.Conn) {
	t.mu.Lock()
	t.conn = c
	dropped := t.dropped
	t.mu.Unlock()
	if dropped {
		c.Close()
	}
}

// drop ends the transport abruptly: its context is cancelled and a
// WebSocket's TCP connection is closed without a close frame.
func (t *transport) drop() {
	t.mu.Lock()
	t.dropped = true
	c := t.conn
	t.mu.Unlock()
	// The socket closes first: cancelled first, the library's WebSocket
	// would send a close frame ("context canceled") before the close, and a
	// drop is abrupt.
	if c != nil {
		c.Close()
	}
	t.cancel()
}

// closeFrame is a WebSocket close frame from a server (unmasked): status
// 1000, normal closure.
var closeFrame = []byte{0x88, 0x02, 0x03, 0xe8}

// finish ends a WebSocket whose handler has returned. The SignalR library
// leaves the hijacked connection open when its loop ends on a client's Close
// message before it has read the client's close frame; the client would
// then wait in vain for the closing handshake (and the connection would
// leak). finish sends the normal-closure close frame and closes the
// connection; where the library already completed the handshake, the
// connection is closed and nothing is sent. The frame bypasses the
// library's writer: a push still being written when the client closed
// could interleave with it, and that client then reads a protocol error
// instead of a clean close (a mock's trade-off; nothing waits on it).
func (t *transport) finish() {
	t.mu.Lock()
	c, dropped := t.conn, t.dropped
	t.mu.Unlock()
	if c == nil || dropped {
		return
	}
	_ = c.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = c.Write(closeFrame)
	_ = c.Close()
}

func requestKind(r *http.Request) string {
	switch {
	case (r.Method == http.MethodPost || r.Method == http.MethodGet) && strings.HasSuffix(r.URL.Path, "/negotiate"):
		return "negotiate"
	case r.Method == http.MethodGet && strings.EqualFold(r.Header.Get("Upgrade"), "websocket"):
		return "websockets"
	case r.Method == http.MethodGet:
		return "sse"
	default:
		return "sse-send"
	}
}

// hubTokens collects the device token from the bearer, X-Device-Token and
// the access_token query parameter; all that are present must agree.
func hubTokens(r *http.Request) (string, string) {
	var toks []string
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, ok := strings.Cut(h, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
			return "", "malformed Authorization header (want Bearer <device token>)"
		}
		toks = append(toks, strings.TrimSpace(tok))
	}
	if v := strings.TrimSpace(r.Header.Get("X-Device-Token")); v != "" {
		toks = append(toks, v)
	}
	if v := r.URL.Query().Get("access_token"); v != "" {
		toks = append(toks, v)
	}
	if len(toks) == 0 {
		return "", "missing device token (Authorization: Bearer, X-Device-Token or access_token)"
	}
	for _, t := range toks[1:] {
		if subtle.ConstantTimeCompare([]byte(t), []byte(toks[0])) != 1 {
			return "", "the device tokens of the request disagree"
		}
	}
	return toks[0], ""
}

// admit authenticates a /device request and registers its transport.
func (s *Server) admit(r *http.Request, kind string) (*transport, context.Context, *Event) {
	tok, reason := hubTokens(r)
	rejected := &Event{Source: SourceHub, Action: "rejected", Status: http.StatusUnauthorized, Args: map[string]any{"request": kind}}
	if reason != "" {
		rejected.Error = reason
		return nil, nil, rejected
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.devTokens[digest(tok)]
	switch {
	case t == nil:
		rejected.Error = "unknown device token"
		return nil, nil, rejected
	case t.disabled:
		rejected.DeviceID, rejected.TokenID, rejected.Error = t.deviceID, t.id, "the device token is disabled"
		return nil, nil, rejected
	}
	return s.registerLocked(r, t.deviceID, t.id, kind)
}

// admitFunc authenticates a hub request and registers its transport, or
// says why it is rejected.
type admitFunc func(r *http.Request, kind string) (*transport, context.Context, *Event)

// registerLocked registers an admitted request's transport (s.mu held).
func (s *Server) registerLocked(r *http.Request, deviceID, tokenID, kind string) (*transport, context.Context, *Event) {
	// The connection's context is not the request's: a client leaving
	// during a freeze is noticed only after the thaw (see hubGate).
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	tr := &transport{deviceID: deviceID, tokenID: tokenID, kind: kind, cancel: cancel}
	s.live[tr] = struct{}{}
	return tr, context.WithValue(ctx, transportKey{}, tr), nil
}

// hubGate stands before the SignalR handlers (of the application and of
// the service): it applies the refuse and freeze faults, authenticates the
// request with admit, and wraps the response so that a freeze stops the
// connection's traffic and a drop can close it.
func (s *Server) hubGate(admit admitFunc) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler { return s.gated(admit, next) }
}

func (s *Server) gated(admit admitFunc, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kind := requestKind(r)
		if s.hubCtx.Err() != nil {
			writeProblem(w, http.StatusServiceUnavailable, "the mock hub is closed")
			return
		}
		if kind == "negotiate" || kind == "websockets" || kind == "sse" {
			if wait := s.refusing(); wait > 0 {
				w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
				writeProblem(w, http.StatusServiceUnavailable, "the hub refuses new connections for now (fault injection)")
				s.record(Event{Source: SourceHub, Action: "refused", Status: http.StatusServiceUnavailable, Args: map[string]any{"request": kind}})
				return
			}
		}
		if err := s.freeze.wait(r.Context().Done()); err != nil {
			return // the client gave up during a freeze
		}
		tr, ctx, rejected := admit(r, kind)
		if rejected != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mock-hub", error="invalid_token"`)
			writeProblem(w, http.StatusUnauthorized, rejected.Error)
			s.record(*rejected)
			return
		}
		finished := make(chan struct{})
		go func() {
			select {
			case <-r.Context().Done():
				// The client went away (an SSE stream closed): a frozen
				// hub does not see it before the thaw.
				_ = s.freeze.wait(ctx.Done())
				tr.cancel()
			case <-finished:
			}
		}()
		defer func() {
			close(finished)
			s.mu.Lock()
			delete(s.live, tr)
			s.mu.Unlock()
			tr.finish()
			tr.cancel()
		}()
		gw := &gatedWriter{ResponseWriter: w, s: s, g: s.freeze, tr: tr, done: ctx.Done()}
		next.ServeHTTP(gw, r.WithContext(ctx))
	})
}

// gatedWriter holds a response's writes during a freeze and hands out a
// gated connection when the WebSocket handler hijacks it.
type gatedWriter struct {
	http.ResponseWriter
	s    *Server
	g    *gate
	tr   *transport
	done <-chan struct{}
}

func (w *gatedWriter) Write(b []byte) (int, error) {
	if err := w.g.wait(w.done); err != nil {
		return 0, err
	}
	return w.ResponseWriter.Write(b)
}

func (w *gatedWriter) Flush() {
	if w.g.wait(w.done) != nil {
		return
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *gatedWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("mockhub: the response cannot be hijacked")
	}
	c, brw, err := hj.Hijack()
	if err != nil {
		return nil, nil, err
	}
	gc := &gatedConn{Conn: c, g: w.g, closed: make(chan struct{})}
	// net/http's buffered writer still points at the raw connection;
	// the WebSocket library writes through it.
	brw.Writer.Reset(gc)
	w.tr.setConn(gc)
	// The WebSocket library reads through the returned connection:
	// completions of awaited invocations are taken out there (results.go),
	// from the first byte on, so what net/http read ahead goes through it
	// too and its buffer is handed over empty.
	read, _ := brw.Reader.Peek(brw.Reader.Buffered())
	rc := newResultConn(w.s, w.tr, gc, bytes.Clone(read))
	brw.Reader.Reset(bytes.NewReader(nil))
	return rc, brw, nil
}

// gatedConn is a hijacked connection that neither delivers what it read
// nor writes while the gate is frozen.
type gatedConn struct {
	net.Conn
	g      *gate
	closed chan struct{}
	once   sync.Once
}

func (c *gatedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if werr := c.g.wait(c.closed); werr != nil {
		return 0, werr
	}
	return n, err
}

func (c *gatedConn) Write(p []byte) (int, error) {
	if err := c.g.wait(c.closed); err != nil {
		return 0, err
	}
	return c.Conn.Write(p)
}

func (c *gatedConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

// errDropped is what a gated read or write returns when its connection
// ends during a freeze.
var errDropped = errors.New("mockhub: connection dropped")

// gate is the freeze switch: open unless frozen.
type gate struct {
	mu    sync.Mutex
	open  chan struct{} // closed while not frozen
	until time.Time
	gen   int
	timer *time.Timer
	held  atomic.Int64 // waits blocked now
}

func newGate() *gate {
	ch := make(chan struct{})
	close(ch)
	return &gate{open: ch}
}

// freeze freezes for d from now (d <= 0 thaws).
func (g *gate) freeze(d time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.gen++
	if g.timer != nil {
		g.timer.Stop()
		g.timer = nil
	}
	if d <= 0 {
		g.thawLocked()
		return
	}
	select {
	case <-g.open:
		g.open = make(chan struct{})
	default:
	}
	g.until = time.Now().Add(d)
	gen := g.gen
	g.timer = time.AfterFunc(d, func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.gen == gen {
			g.thawLocked()
		}
	})
}

func (g *gate) thawLocked() {
	select {
	case <-g.open:
	default:
		close(g.open)
	}
	g.until = time.Time{}
}

func (g *gate) frozenUntil() time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.until
}

func (g *gate) wait(cancel <-chan struct{}) error {
	g.mu.Lock()
	ch := g.open
	g.mu.Unlock()
	select {
	case <-ch:
		return nil
	default:
	}
	g.held.Add(1)
	defer g.held.Add(-1)
	select {
	case <-ch:
		return nil
	case <-cancel:
		return errDropped
	}
}

func (s *Server) refusing() time.Duration {
	s.refuseMu.Lock()
	defer s.refuseMu.Unlock()
	return time.Until(s.refuseUntil)
}

// ---- connections and ordered pushes ------------------------------------

// hubConn is one established hub connection of a device.
type hubConn struct {
	s     *Server
	id    string
	since time.Time
	tr    *transport
	hc    signalr.HubConnection

	mu    sync.Mutex
	queue []push
	ended bool // the sender is gone (see end)
	wake  chan struct{}
}

type push struct {
	id     string // an invocation awaiting a result (PushAwaiting); "" for a send
	target string
	args   []any
	// journal is the arguments as journal JSON, made once for every
	// connection and copy (see marshalOnce); nil: made by send.
	journal json.RawMessage
	// written, when set, makes this item a marker, not a push: the sender
	// closes it once everything queued before it is written (see flush).
	written chan struct{}
}

// marshalOnce marshals p's arguments once for every connection and copy
// it goes to and for the journal: every connection writes the same bytes
// (the hub speaks JSON only, as the real service does). An argument that
// does not marshal stays as it is, for the send to report its error.
func (p *push) marshalOnce() {
	args := make([]any, len(p.args))
	journal := []byte{'['}
	for i, a := range p.args {
		b, err := json.Marshal(a)
		if err != nil {
			return
		}
		args[i] = json.RawMessage(b)
		if i > 0 {
			journal = append(journal, ',')
		}
		journal = append(journal, b...)
	}
	p.args, p.journal = args, rawPayload(append(journal, ']'))
}

func (c *hubConn) enqueue(p push) {
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		c.undelivered(p)
		return
	}
	c.queue = append(c.queue, p)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// flush waits until the pushes queued on c so far are written, the
// connection ends, or stop is closed.
func (c *hubConn) flush(stop <-chan struct{}) {
	written := make(chan struct{})
	c.enqueue(push{written: written})
	select {
	case <-written:
	case <-c.hc.Context().Done():
	case <-stop:
	}
}

// end marks the sender gone: what is still queued, and whatever is
// queued later, is journaled as not delivered (no push vanishes from the
// journal) and releases its flush.
func (c *hubConn) end() {
	c.mu.Lock()
	c.ended = true
	rest := c.queue
	c.queue = nil
	c.mu.Unlock()
	for _, p := range rest {
		c.undelivered(p)
	}
}

// undelivered journals a push its connection ended before writing, in
// one entry with the error (a marker is released).
func (c *hubConn) undelivered(p push) {
	if p.written != nil {
		close(p.written)
		return
	}
	c.s.record(Event{Source: SourceHub, Direction: DirectionOut, Action: p.target, DeviceID: c.tr.deviceID, TokenID: c.tr.tokenID,
		ConnectionID: c.id, Error: "not delivered: the connection ended before it was written"})
}

// send delivers the connection's pushes one after the other, in order.
func (c *hubConn) send() {
	defer c.end()
	for {
		select {
		case <-c.wake:
		case <-c.hc.Context().Done():
			return
		}
		for {
			c.mu.Lock()
			if len(c.queue) == 0 {
				c.mu.Unlock()
				break
			}
			p := c.queue[0]
			c.queue = c.queue[1:]
			c.mu.Unlock()
			if p.written != nil {
				close(p.written)
				continue
			}
			journal := p.journal
			if journal == nil {
				journal = payload(p.args)
			}
			// Journaled before the write, so that the journal keeps cause
			// before effect: once written, the client's answer can be
			// journaled before this goroutine runs again. A failed write is
			// a second entry, with the error.
			ev := Event{Source: SourceHub, Direction: DirectionOut, Action: p.target, DeviceID: c.tr.deviceID, TokenID: c.tr.tokenID,
				ConnectionID: c.id, Payload: journal}
			c.s.record(ev)
			if err := c.hc.SendInvocation(p.id, p.target, p.args); err != nil {
				ev.Payload, ev.Error = nil, "not delivered: "+err.Error()
				c.s.record(ev)
				return
			}
		}
	}
}

// lifetime is the hub's HubLifetimeManager: it keeps the registry of
// connections (device -> connection ids) outside the per-call hub
// instances and sends every push through the connection's ordered queue.
type lifetime struct {
	s      *Server
	gmu    sync.Mutex
	groups map[string]map[string]bool
}

func (l *lifetime) OnConnected(hc signalr.HubConnection) { l.s.hubConnected(hc) }

func (l *lifetime) OnDisconnected(hc signalr.HubConnection) {
	l.gmu.Lock()
	for _, m := range l.groups {
		delete(m, hc.ConnectionID())
	}
	l.gmu.Unlock()
	l.s.hubDisconnected(hc)
}

func (l *lifetime) InvokeAll(target string, args []any) {
	l.s.mu.Lock()
	conns := make([]*hubConn, 0, len(l.s.conns))
	for _, c := range l.s.conns {
		conns = append(conns, c)
	}
	l.s.mu.Unlock()
	for _, c := range conns {
		c.enqueue(push{target: target, args: args})
	}
}

func (l *lifetime) InvokeClient(id, target string, args []any) {
	l.s.mu.Lock()
	c := l.s.conns[id]
	l.s.mu.Unlock()
	if c != nil {
		c.enqueue(push{target: target, args: args})
	}
}

func (l *lifetime) InvokeGroup(group, target string, args []any) {
	l.gmu.Lock()
	var ids []string
	for id := range l.groups[group] {
		ids = append(ids, id)
	}
	l.gmu.Unlock()
	for _, id := range ids {
		l.InvokeClient(id, target, args)
	}
}

func (l *lifetime) AddToGroup(group, id string) {
	l.gmu.Lock()
	defer l.gmu.Unlock()
	if l.groups[group] == nil {
		l.groups[group] = map[string]bool{}
	}
	l.groups[group][id] = true
}

func (l *lifetime) RemoveFromGroup(group, id string) {
	l.gmu.Lock()
	defer l.gmu.Unlock()
	delete(l.groups[group], id)
}

func (s *Server) hubConnected(hc signalr.HubConnection) {
	tr, _ := hc.Context().Value(transportKey{}).(*transport)
	if tr == nil {
		hc.Abort() // not admitted by hubGate: cannot happen
		return
	}
	c := &hubConn{s: s, since: s.now(), id: hc.ConnectionID(), tr: tr, hc: hc, wake: make(chan struct{}, 1)}
	s.mu.Lock()
	t := s.tokenByID[tr.tokenID]
	if t == nil || t.disabled {
		s.mu.Unlock()
		tr.drop() // disabled while the connection was being set up
		return
	}
	s.conns[c.id] = c
	s.mu.Unlock()
	s.record(Event{Source: SourceHub, Action: "connected", DeviceID: tr.deviceID, TokenID: tr.tokenID, ConnectionID: c.id,
		Args: map[string]any{"transport": tr.kind}})
	go c.send()
}

func (s *Server) hubDisconnected(hc signalr.HubConnection) {
	s.mu.Lock()
	c := s.conns[hc.ConnectionID()]
	if c == nil {
		s.mu.Unlock()
		return
	}
	delete(s.conns, c.id)
	last := true
	for _, o := range s.conns {
		if o.tr.deviceID == c.tr.deviceID {
			last = false
			break
		}
	}
	if d := s.devices[c.tr.deviceID]; d != nil && last {
		d.dev.IsConnected = false
		d.dev.IsListening = false
	}
	s.mu.Unlock()
	s.record(Event{Source: SourceHub, Action: "disconnected", DeviceID: c.tr.deviceID, TokenID: c.tr.tokenID, ConnectionID: c.id,
		Args: map[string]any{"transport": c.tr.kind}})
}

// push sends target(args...) to every hub connection of a device and
// returns how many connections it was queued on.
func (s *Server) push(deviceID, target string, args ...any) (int, error) {
	return s.pushTo(deviceID, "", target, args...)
}

// pushTo is push to one connection of the device (all of them when
// connID is empty).
func (s *Server) pushTo(deviceID, connID, target string, args ...any) (int, error) {
	return s.pushCopies(deviceID, connID, push{target: target, args: args}, 1)
}

// pushCopies queues p copies times in a row on every hub connection of a
// device, or on its connection connID when not empty (an invocation id in
// p: see PushAwaiting), and returns how many connections it was queued on.
func (s *Server) pushCopies(deviceID, connID string, p push, copies int) (int, error) {
	if p.args == nil {
		p.args = []any{}
	}
	s.mu.Lock()
	if s.devices[deviceID] == nil {
		s.mu.Unlock()
		return 0, ErrUnknownDevice
	}
	var to []*hubConn
	for _, c := range s.conns {
		if c.tr.deviceID == deviceID && (connID == "" || c.id == connID) {
			to = append(to, c)
		}
	}
	s.mu.Unlock()
	if len(to) == 0 {
		if connID != "" {
			return 0, fmt.Errorf("%w: no connection %s", ErrNoConnection, connID)
		}
		return 0, ErrNoConnection
	}
	p.marshalOnce()
	for _, c := range to {
		if p.id != "" {
			c.tr.awaitResult(p.id)
		}
		for range copies {
			c.enqueue(p)
		}
	}
	return len(to), nil
}

// Connections returns how many hub connections a device has.
func (s *Server) Connections(deviceID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.conns {
		if c.tr.deviceID == deviceID {
			n++
		}
	}
	return n
}

// ---- the hub ------------------------------------------------------------

// deviceHub is the SignalR hub. The library makes one instance per call:
// it holds no state of its own.
type deviceHub struct {
	signalr.Hub
	s *Server
}

func (h *deviceHub) caller() *transport {
	tr, _ := h.Context().Value(transportKey{}).(*transport)
	if tr == nil {
		panic("mockhub: hub call without a device identity")
	}
	return tr
}

func (h *deviceHub) call(action string, returns bool, change func(*deviceapi.UserDevice)) deviceapi.UserDevice {
	tr := h.caller()
	h.s.mu.Lock()
	var dev deviceapi.UserDevice
	verified := false
	if d := h.s.devices[tr.deviceID]; d != nil {
		was := d.dev.IsVerified
		if change != nil {
			change(&d.dev)
		}
		dev = d.dev
		verified = dev.IsVerified && !was
	}
	h.s.mu.Unlock()
	if verified { // isVerified is kept in the state file
		h.s.saveState()
	}
	ev := Event{Source: SourceHub, Action: action, DeviceID: tr.deviceID, TokenID: tr.tokenID, ConnectionID: h.ConnectionID(),
		Payload: json.RawMessage("[]")}
	if returns {
		ev.Result = payload(dev)
	}
	h.s.record(ev)
	return dev
}

// VerifySelf identifies the device: it marks it verified and connected
// and returns it.
func (h *deviceHub) VerifySelf() deviceapi.UserDevice {
	return h.call("VerifySelf", true, func(d *deviceapi.UserDevice) { d.IsVerified, d.IsConnected = true, true })
}

// GetLatestDevice returns the device's current state.
func (h *deviceHub) GetLatestDevice() deviceapi.UserDevice {
	return h.call("GetLatestDevice", true, nil)
}

// DeviceStartedListening sets isListening.
func (h *deviceHub) DeviceStartedListening() {
	h.call("DeviceStartedListening", false, func(d *deviceapi.UserDevice) { d.IsListening = true })
}

// DeviceStoppedListening clears isListening.
func (h *deviceHub) DeviceStoppedListening() {
	h.call("DeviceStoppedListening", false, func(d *deviceapi.UserDevice) { d.IsListening = false })
}
