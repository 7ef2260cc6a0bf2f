package mockhub

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// Client results: an ASP.NET Core hub can invoke a client method with an
// invocationId and await the client's completion. The SignalR library the
// mock runs on cannot await one: a completion for an id it did not issue
// ends its connection ("unknown invocationID"). PushAwaiting sends such
// invocations, and the mock takes the client's completions for them out
// of the WebSocket stream before the library reads it (each is replaced,
// in place, by a ping of the same length) and logs them as "result"
// events. Over Server-Sent Events a completion is a POST the mock does not
// filter: use WebSockets.

// PushAwaiting sends target(args...) with invocationID, as a hub that
// awaits the client's result does, copies times in a row on each of the
// device's hub connections (copies > 1 is a hub repeating one invocation
// on one connection), in order with every other push. It returns how
// many connections it was queued on.
func (s *Server) PushAwaiting(deviceID, invocationID string, copies int, target string, args ...any) (int, error) {
	if invocationID == "" {
		return 0, errors.New("mockhub: PushAwaiting needs an invocation id")
	}
	return s.pushCopies(deviceID, "", push{id: invocationID, target: target, args: args}, max(copies, 1))
}

// awaitResult marks id as an invocation of the mock awaiting a result on
// this transport.
func (t *transport) awaitResult(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.awaiting == nil {
		t.awaiting = map[string]bool{}
	}
	t.awaiting[id] = true
}

func (t *transport) awaits(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.awaiting[id]
}

// resultConn is a hijacked WebSocket connection whose reads lose the
// client's completions of the mock's awaited invocations (see above), and
// which refuses a handshake for another protocol than JSON (refuse).
type resultConn struct {
	net.Conn
	s   *Server
	tr  *transport
	mu  sync.Mutex
	r   *bufio.Reader
	out []byte // bytes of the current frame, ready for the reader
	raw int64  // payload bytes of a large frame still to pass unchanged
	// handshook: the client's first data frame (its SignalR handshake)
	// has gone by.
	handshook bool
}

// newResultConn filters what c reads, after read: the bytes net/http read
// ahead of the hijack (the client may have sent its first frames already,
// and a frame may have been cut anywhere: the filter must see the stream
// from its first byte).
func newResultConn(s *Server, tr *transport, c net.Conn, read []byte) *resultConn {
	return &resultConn{Conn: c, s: s, tr: tr, r: bufio.NewReader(io.MultiReader(bytes.NewReader(read), c))}
}

// maxFiltered bounds the frames looked into; larger ones pass unchanged
// (a completion is small).
const maxFiltered = 64 << 10

func (c *resultConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.out) == 0 && c.raw == 0 {
		if err := c.nextFrame(); err != nil {
			return 0, err
		}
	}
	if len(c.out) > 0 {
		n := copy(p, c.out)
		c.out = c.out[n:]
		return n, nil
	}
	if int64(len(p)) > c.raw {
		p = p[:c.raw]
	}
	n, err := c.r.Read(p)
	c.raw -= int64(n)
	return n, err
}

// nextFrame reads the next WebSocket frame header (RFC 6455 5.2) and, for
// a small final unfragmented text frame from the client, its payload,
// with the awaited completions in it replaced. The first data frame is
// the client's handshake: one for another protocol is refused there.
func (c *resultConn) nextFrame() error {
	head := make([]byte, 2, 14)
	if _, err := readFull(c.r, head); err != nil {
		return err
	}
	masked := head[1]&0x80 != 0
	n := int64(head[1] & 0x7f)
	switch n {
	case 126:
		ext := make([]byte, 2)
		if _, err := readFull(c.r, ext); err != nil {
			return err
		}
		head = append(head, ext...)
		n = int64(binary.BigEndian.Uint16(ext))
	case 127:
		ext := make([]byte, 8)
		if _, err := readFull(c.r, ext); err != nil {
			return err
		}
		head = append(head, ext...)
		n = int64(binary.BigEndian.Uint64(ext) & (1<<63 - 1))
	}
	var key []byte
	if masked {
		key = make([]byte, 4)
		if _, err := readFull(c.r, key); err != nil {
			return err
		}
		head = append(head, key...)
	}
	text := head[0] == 0x81                    // FIN, no RSV bits (no compression), opcode text
	first := head[0]&0x08 == 0 && !c.handshook // a data frame, not a control frame
	c.handshook = c.handshook || head[0]&0x08 == 0
	if !text || !masked || n > maxFiltered {
		c.out, c.raw = head, n
		return nil
	}
	payload := make([]byte, n)
	if _, err := readFull(c.r, payload); err != nil {
		return err
	}
	mask(payload, key)
	if first {
		if protocol, ok := otherProtocol(payload); ok {
			return c.refuse(protocol)
		}
	}
	c.dropResults(payload)
	mask(payload, key)
	c.out = append(head, payload...)
	return nil
}

// dropResults replaces each completion record of an awaited invocation
// in payload (unmasked) by a ping record of the same length.
func (c *resultConn) dropResults(payload []byte) {
	for start := 0; start < len(payload); {
		end := bytes.IndexByte(payload[start:], 0x1e)
		if end < 0 {
			break
		}
		rec := payload[start : start+end]
		start += end + 1
		if !bytes.Contains(rec, []byte(`"invocationId"`)) {
			continue
		}
		var m struct {
			Type         int    `json:"type"`
			InvocationID string `json:"invocationId"`
		}
		if json.Unmarshal(rec, &m) != nil || m.Type != 3 || !c.tr.awaits(m.InvocationID) {
			continue
		}
		ping := `{"type":6}`
		if len(rec) < len(ping) {
			continue
		}
		copy(rec, ping)
		for i := len(ping); i < len(rec); i++ {
			rec[i] = ' '
		}
		c.s.record(Event{Source: SourceHub, Action: "result", DeviceID: c.tr.deviceID, TokenID: c.tr.tokenID,
			Args: map[string]any{"invocationId": m.InvocationID}})
	}
}

// otherProtocol reports the protocol a SignalR handshake (the first record
// of payload) asks for when it is not "json". What is not a handshake
// goes to the library, which answers it.
func otherProtocol(payload []byte) (string, bool) {
	rec, _, _ := bytes.Cut(payload, []byte{0x1e})
	var hs struct {
		Protocol *string `json:"protocol"`
	}
	if json.Unmarshal(rec, &hs) != nil || hs.Protocol == nil || *hs.Protocol == "json" {
		return "", false
	}
	return *hs.Protocol, true
}

// errProtocolRefused is what the library's read of a refused handshake
// returns: the connection has ended.
var errProtocolRefused = errors.New("mockhub: the hub speaks the JSON protocol only")

// refuse answers a handshake for another protocol than JSON as a SignalR
// server without it does (SignalR's handshake error record; the text is
// the one philippseith/signalr writes for a protocol it does not have),
// closes the WebSocket and journals it. The upstream library has
// MessagePack and no option to leave it out (its protocols are a package
// variable), so the mock refuses it here, before the library reads the
// handshake. Like finish, the frames bypass the library's writer, which
// has written nothing yet: a server writes nothing before the handshake.
func (c *resultConn) refuse(protocol string) error {
	msg := "protocol " + protocol + " not supported"
	rec, _ := json.Marshal(map[string]string{"error": msg})
	_ = c.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = c.Conn.Write(append(serverFrame(0x81, append(rec, 0x1e)), closeFrame...))
	_ = c.Conn.Close()
	c.s.record(Event{Source: SourceHub, Action: "handshake", DeviceID: c.tr.deviceID, TokenID: c.tr.tokenID, Error: msg})
	return errProtocolRefused
}

// serverFrame is one unmasked WebSocket frame (RFC 6455 5.2) with the
// first byte b0 (FIN and opcode).
func serverFrame(b0 byte, payload []byte) []byte {
	f := []byte{b0}
	switch n := len(payload); {
	case n < 126:
		f = append(f, byte(n))
	case n < 1<<16:
		f = append(f, 126)
		f = binary.BigEndian.AppendUint16(f, uint16(n))
	default:
		f = append(f, 127)
		f = binary.BigEndian.AppendUint64(f, uint64(n))
	}
	return append(f, payload...)
}

// mask applies (or removes) a WebSocket masking key.
func mask(b, key []byte) {
	for i := range b {
		b[i] ^= key[i%4]
	}
}

func readFull(r *bufio.Reader, b []byte) (int, error) { return io.ReadFull(r, b) }
