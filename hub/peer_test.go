package hub

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/hubgate/hubgate/internal/testutil"
)

// peer is a scripted SignalR hub speaking the JSON protocol the way ASP.NET
// Core does: negotiate (v1, connection token), WebSocket upgrade, handshake
// response, invocations without invocationId for pushes, completions for
// the client's invocations, pings, close messages. Tests drive it record
// by record.
type peer struct {
	t        testing.TB
	base     string       // http://host:port
	client   *http.Client // reaches the peer; nil: a loopback peer, any client
	deviceID string

	tokMu  sync.Mutex
	tokens map[string]bool // accepted device tokens

	// Scripted behaviour, read at each request/connection.
	negotiateStatus atomic.Int32 // non-zero: answer negotiate with it
	upgradeStatus   atomic.Int32 // non-zero: answer the upgrade with it
	retryAfter      atomic.Value // string Retry-After of refusals
	verifyAs        atomic.Value // string device id VerifySelf answers (default deviceID)
	verifyProfile   atomic.Value // string JSON of the currentProfile VerifySelf answers ("": null)
	latestProfile   atomic.Value // string JSON of the currentProfile GetLatestDevice answers ("": null)
	handshakeExtra  atomic.Value // []byte records sent in the same message as the handshake response
	autoAnswer      atomic.Bool  // answer VerifySelf, GetLatestDevice, listening calls (default true)
	pingEvery       atomic.Int64 // server keep-alive interval in ns (0: none)
	stall           atomic.Value // string: "negotiate" or "handshake" is never answered ("": none)
	devicePad       atomic.Int64 // bytes of padding in the device VerifySelf and GetLatestDevice answer (0: none)
	devicePadFirst  atomic.Bool  // the padding comes before the device's "id"

	mu          sync.Mutex
	negotiates  []http.Header
	upgrades    []*http.Request
	conns       chan *peerConn
	connCount   int
	connTokens  map[string]bool
	refusedAuth int
}

// newPeer serves a peer on an in-memory network (testutil.PipeNet): call
// it inside the test's synctest bubble and give the client p.client.
func newPeer(t testing.TB, deviceID string, tokens ...string) *peer {
	p := makePeer(t, deviceID, tokens...)
	var pn testutil.PipeNet
	ln, err := pn.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(p.serve)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	p.base, p.client = "http://"+ln.Addr().String(), pn.Client(t)
	return p
}

// newLoopbackPeer serves a peer on a loopback port, for the benchmarks
// that measure real time.
func newLoopbackPeer(t testing.TB, deviceID string, tokens ...string) *peer {
	p := makePeer(t, deviceID, tokens...)
	srv := httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(srv.Close)
	p.base = srv.URL
	return p
}

func makePeer(t testing.TB, deviceID string, tokens ...string) *peer {
	p := &peer{t: t, deviceID: deviceID, tokens: map[string]bool{}, conns: make(chan *peerConn, 100), connTokens: map[string]bool{}}
	for _, tok := range tokens {
		p.tokens[tok] = true
	}
	p.autoAnswer.Store(true)
	p.retryAfter.Store("")
	p.verifyAs.Store("")
	p.handshakeExtra.Store([]byte(nil))
	p.stall.Store("")
	return p
}

func (p *peer) url() string { return p.base + "/device" }

func (p *peer) allow(tok string) {
	p.tokMu.Lock()
	p.tokens[tok] = true
	p.tokMu.Unlock()
}

func (p *peer) authorized(r *http.Request) bool {
	auth := r.Header.Get("Authorization")
	x := r.Header.Get("X-Device-Token")
	tok, ok := strings.CutPrefix(auth, "Bearer ")
	p.tokMu.Lock()
	defer p.tokMu.Unlock()
	return ok && tok == x && p.tokens[tok]
}

func (p *peer) refuse(w http.ResponseWriter, status int) {
	if ra := p.retryAfter.Load().(string); ra != "" {
		w.Header().Set("Retry-After", ra)
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"status":%d,"title":"refused"}`, status)
}

func (p *peer) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/device/negotiate":
		p.mu.Lock()
		p.negotiates = append(p.negotiates, r.Header.Clone())
		n := len(p.negotiates)
		p.mu.Unlock()
		if p.stall.Load() == "negotiate" {
			<-r.Context().Done()
			return
		}
		if st := p.negotiateStatus.Load(); st != 0 {
			p.refuse(w, int(st))
			return
		}
		if !p.authorized(r) {
			p.mu.Lock()
			p.refusedAuth++
			p.mu.Unlock()
			p.refuse(w, http.StatusUnauthorized)
			return
		}
		if r.URL.Query().Get("negotiateVersion") != "1" {
			http.Error(w, "negotiateVersion must be 1", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"negotiateVersion":1,"connectionId":"cid-%d","connectionToken":"ctok-%d","availableTransports":[{"transport":"WebSockets","transferFormats":["Text","Binary"]},{"transport":"ServerSentEvents","transferFormats":["Text"]}]}`, n, n)
	case r.Method == http.MethodGet && r.URL.Path == "/device":
		p.mu.Lock()
		p.upgrades = append(p.upgrades, r)
		p.mu.Unlock()
		if st := p.upgradeStatus.Load(); st != 0 {
			p.refuse(w, int(st))
			return
		}
		if !p.authorized(r) {
			p.refuse(w, http.StatusUnauthorized)
			return
		}
		if !strings.HasPrefix(r.URL.Query().Get("id"), "ctok-") {
			http.Error(w, "unknown connection token", http.StatusNotFound)
			return
		}
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		ws.SetReadLimit(1 << 24)
		pc := p.newConn(r, ws)
		pc.run()
	default:
		http.NotFound(w, r)
	}
}

// rec is one record the client sent.
type rec struct {
	Type         int               `json:"type"`
	Target       string            `json:"target"`
	InvocationID *string           `json:"invocationId"`
	Arguments    []json.RawMessage `json:"arguments"`
	Result       json.RawMessage   `json:"result"`
	Error        string            `json:"error"`
	Protocol     string            `json:"protocol"`
	Version      int               `json:"version"`
	raw          string
}

func (r rec) id() string {
	if r.InvocationID == nil {
		return ""
	}
	return *r.InvocationID
}

// peerConn is one accepted WebSocket.
type peerConn struct {
	p      *peer
	ws     *websocket.Conn
	req    *http.Request
	ctx    context.Context
	cancel context.CancelFunc
	frozen atomic.Bool
	in     chan rec // records other than pings and auto-answered calls
	done   chan struct{}

	writeMu sync.Mutex // a record split over two messages stays whole

	mu        sync.Mutex
	all       []rec
	pings     int
	handshake rec
	closeErr  error
}

func (p *peer) newConn(r *http.Request, ws *websocket.Conn) *peerConn {
	ctx, cancel := context.WithCancel(context.Background())
	return &peerConn{p: p, ws: ws, req: r, ctx: ctx, cancel: cancel, in: make(chan rec, 100000), done: make(chan struct{})}
}

func (pc *peerConn) run() {
	defer close(pc.done)
	defer pc.cancel()
	// Handshake request.
	_, data, err := pc.ws.Read(pc.ctx)
	if err != nil {
		return
	}
	var hs rec
	_ = json.Unmarshal(bytes.TrimSuffix(data, []byte{0x1e}), &hs)
	hs.raw = string(data)
	pc.mu.Lock()
	pc.handshake = hs
	pc.mu.Unlock()
	if pc.p.stall.Load() == "handshake" {
		for {
			if _, _, err := pc.ws.Read(pc.ctx); err != nil {
				return
			}
		}
	}
	resp := []byte("{}\x1e")
	if extra := pc.p.handshakeExtra.Load().([]byte); extra != nil {
		resp = append(resp, extra...)
	}
	if pc.sendRaw(resp) != nil {
		return
	}
	if every := time.Duration(pc.p.pingEvery.Load()); every > 0 {
		go func() {
			t := time.NewTicker(every)
			defer t.Stop()
			for {
				select {
				case <-pc.ctx.Done():
					return
				case <-t.C:
					if pc.frozen.Load() {
						continue
					}
					_ = pc.sendRaw([]byte("{\"type\":6}\x1e"))
				}
			}
		}()
	}
	pc.p.mu.Lock()
	pc.p.connCount++
	pc.p.mu.Unlock()
	pc.p.conns <- pc
	for {
		_, data, err := pc.ws.Read(pc.ctx)
		if err != nil {
			pc.mu.Lock()
			pc.closeErr = err
			pc.mu.Unlock()
			return
		}
		for _, part := range bytes.Split(data, []byte{0x1e}) {
			if len(part) == 0 {
				continue
			}
			var r rec
			if err := json.Unmarshal(part, &r); err != nil {
				pc.p.t.Errorf("peer: the client sent a record that is not JSON: %q", part)
				continue
			}
			r.raw = string(part)
			pc.mu.Lock()
			pc.all = append(pc.all, r)
			if r.Type == 6 {
				pc.pings++
			}
			pc.mu.Unlock()
			if pc.frozen.Load() || r.Type == 6 {
				continue
			}
			if r.Type == 1 && pc.p.autoAnswer.Load() && pc.answer(r) {
				continue
			}
			pc.in <- r
		}
	}
}

// answer auto-answers the calls every session makes; it reports whether
// it did.
func (pc *peerConn) answer(r rec) bool {
	id := pc.p.deviceID
	if v := pc.p.verifyAs.Load().(string); v != "" {
		id = v
	}
	pad := ""
	if n := pc.p.devicePad.Load(); n > 0 {
		pad = fmt.Sprintf(`,"peerPad":%q`, strings.Repeat("p", int(n)))
	}
	dev := func(profile *atomic.Value) string {
		p, _ := profile.Load().(string)
		d := fmt.Sprintf(`{"id":%q,"nameOverride":"peer","isVerified":true,"isConnected":true,"isListening":false,"isAutoListen":false,"isOptimisticModel":false,"currentProfile":%s,"peerExtra":7%s}`,
			id, cmp.Or(p, "null"), pad)
		if pad != "" && pc.p.devicePadFirst.Load() {
			d = `{` + pad[1:] + `,` + strings.Replace(d[1:], pad, "", 1)
		}
		return d
	}
	switch r.Target {
	case "VerifySelf":
		pc.complete(r.id(), dev(&pc.p.verifyProfile))
	case "GetLatestDevice":
		pc.complete(r.id(), dev(&pc.p.latestProfile))
	case "DeviceStartedListening", "DeviceStoppedListening":
		pc.complete(r.id(), "")
		pc.in <- r // tests look at these
	default:
		return false
	}
	return true
}

// complete sends a completion (result "" = void).
func (pc *peerConn) complete(id, result string) {
	if id == "" {
		return
	}
	msg := fmt.Sprintf(`{"type":3,"invocationId":%q}`, id)
	if result != "" {
		msg = fmt.Sprintf(`{"type":3,"invocationId":%q,"result":%s}`, id, result)
	}
	pc.send(msg)
}

// send writes records (separators added) as one WebSocket message.
func (pc *peerConn) send(records ...string) {
	var b bytes.Buffer
	for _, r := range records {
		b.WriteString(r)
		b.WriteByte(0x1e)
	}
	pc.sendRaw(b.Bytes())
}

// sendRaw writes each of msgs as one WebSocket message, back to back:
// nothing the peer sends (a completion, a ping) comes between them.
func (pc *peerConn) sendRaw(msgs ...[]byte) error {
	pc.writeMu.Lock()
	defer pc.writeMu.Unlock()
	for _, m := range msgs {
		if err := pc.ws.Write(pc.ctx, websocket.MessageText, m); err != nil {
			return err
		}
	}
	return nil
}

// invocation is a hub push record without invocationId, as ASP.NET Core
// writes it.
func invocation(target string, args ...string) string {
	if args == nil {
		args = []string{}
	}
	return fmt.Sprintf(`{"type":1,"target":%q,"arguments":[%s]}`, target, strings.Join(args, ","))
}

// expect waits for the next record accepted by match (others are kept
// in order for later calls... no: they are skipped and returned).
func (pc *peerConn) expect(t testing.TB, what string, timeout time.Duration, match func(rec) bool) rec {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case r := <-pc.in:
			if match(r) {
				return r
			}
		case <-deadline:
			t.Fatalf("peer: timed out waiting for %s", what)
			return rec{}
		}
	}
}

func (pc *peerConn) records() []rec {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return append([]rec(nil), pc.all...)
}

func (pc *peerConn) pingCount() int {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return pc.pings
}

// checkNoBadCompletion fails if the client ever sent a completion without
// an invocationId (ASP.NET Core closes the connection on it).
func (pc *peerConn) checkNoBadCompletion(t testing.TB) {
	t.Helper()
	for _, r := range pc.records() {
		if r.Type == 3 && r.id() == "" {
			t.Errorf("the client sent a completion without invocationId: %s", r.raw)
		}
	}
}

// abort closes the TCP connection without a close frame.
func (pc *peerConn) abort() {
	_ = pc.ws.CloseNow()
	pc.cancel()
}

// nextConn waits for the next accepted connection.
func (p *peer) nextConn(t testing.TB, timeout time.Duration) *peerConn {
	t.Helper()
	select {
	case pc := <-p.conns:
		return pc
	case <-time.After(timeout):
		t.Fatalf("peer: no connection within %s", timeout)
		return nil
	}
}

func (p *peer) negotiateHeaders() []http.Header {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]http.Header(nil), p.negotiates...)
}

func (p *peer) upgradeRequests() []*http.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*http.Request(nil), p.upgrades...)
}

func queryOf(r *http.Request) url.Values { return r.URL.Query() }
