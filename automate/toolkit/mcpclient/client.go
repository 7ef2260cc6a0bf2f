package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
)

// ProtocolVersion is the version this client asks for in initialize.
const ProtocolVersion = "2025-06-18"

// SupportedVersions are the protocol versions a server may answer with,
// newest first.
var SupportedVersions = []string{"2025-06-18", "2025-03-26", "2024-11-05"}

// DefaultMaxMessageSize bounds one message read from a server when
// Options.MaxMessageSize is zero.
const DefaultMaxMessageSize = 16 << 20

// JSON-RPC error codes this client sends.
const (
	CodeMethodNotFound = -32601
)

var (
	// ErrClosed is wrapped by every call on a connection that is gone
	// (the server closed it, or Close was called).
	ErrClosed = errors.New("the MCP connection is closed")
	// ErrUnsupportedVersion is wrapped by Connect when the server answers
	// initialize with a protocol version this client does not speak.
	ErrUnsupportedVersion = errors.New("unsupported MCP protocol version")
	// ErrMessageTooLarge is wrapped when a server's message exceeds the
	// size limit.
	ErrMessageTooLarge = errors.New("an MCP message exceeds the size limit")
)

// RPCError is a JSON-RPC error answered by the server.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("MCP error %d: %s", e.Code, e.Message) }

// Options configures Connect.
type Options struct {
	// ClientName and ClientVersion are the clientInfo of initialize.
	// Zero: "hubgate" and "dev".
	ClientName, ClientVersion string
	// MaxMessageSize bounds one message read from the server. Zero:
	// DefaultMaxMessageSize.
	MaxMessageSize int
	// Logger receives debug lines (notifications, ignored messages). Nil:
	// slog.Default().
	Logger *slog.Logger
}

// Transport is one of Stdio, StreamableHTTP and SSE. A transport value
// serves one session.
type Transport interface {
	// open starts the connection; ctx bounds opening only.
	open(ctx context.Context, s *Session) error
	// send writes one message. For a request (id != 0) a transport that
	// answers on the same exchange (streamable HTTP) hands the messages
	// it reads to s.handle until the response to id came.
	send(ctx context.Context, msg []byte, id int64) error
	// initialized tells the transport the negotiated protocol version.
	initialized(version string)
	// close ends the connection and every goroutine of the transport.
	close() error
}

// ServerInfo is what the server said about itself in initialize.
type ServerInfo struct {
	ProtocolVersion string
	Name, Version   string
	Instructions    string
}

// Session is an initialized MCP session. Its methods are safe for
// concurrent use.
type Session struct {
	t      Transport
	log    *slog.Logger
	maxMsg int
	info   ServerInfo

	// ctx ends at Close: it bounds what outlives a call (the SSE stream,
	// notifications/cancelled) and aborts exchanges in flight.
	ctx    context.Context
	cancel context.CancelFunc

	nextID atomic.Int64

	mu      sync.Mutex
	pending map[int64]chan *wireMsg
	err     error         // why the connection is gone, once it is
	done    chan struct{} // closed with err
	closing bool
	bg      sync.WaitGroup // notifications/cancelled and answers in flight

	closeOnce sync.Once
	closeErr  error
}

type wireMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

type implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Connect opens t and performs the initialize handshake. ctx bounds
// connecting only; the session lives until Close. On error, everything t
// opened is closed again.
func Connect(ctx context.Context, t Transport, opts Options) (*Session, error) {
	if opts.ClientName == "" {
		opts.ClientName = "hubgate"
	}
	if opts.ClientVersion == "" {
		opts.ClientVersion = "dev"
	}
	if opts.MaxMessageSize <= 0 {
		opts.MaxMessageSize = DefaultMaxMessageSize
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	s := &Session{t: t, log: opts.Logger, maxMsg: opts.MaxMessageSize, pending: map[int64]chan *wireMsg{}, done: make(chan struct{})}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	if err := t.open(ctx, s); err != nil {
		s.Close()
		return nil, err
	}
	params := struct {
		ProtocolVersion string         `json:"protocolVersion"`
		Capabilities    struct{}       `json:"capabilities"`
		ClientInfo      implementation `json:"clientInfo"`
	}{ProtocolVersion: ProtocolVersion, ClientInfo: implementation{opts.ClientName, opts.ClientVersion}}
	var res struct {
		ProtocolVersion string         `json:"protocolVersion"`
		ServerInfo      implementation `json:"serverInfo"`
		Instructions    string         `json:"instructions"`
	}
	if err := s.call(ctx, "initialize", params, &res, false); err != nil {
		s.Close()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	if !slices.Contains(SupportedVersions, res.ProtocolVersion) {
		s.Close()
		return nil, fmt.Errorf("%w: the server answered %q; this client speaks %v", ErrUnsupportedVersion, res.ProtocolVersion, SupportedVersions)
	}
	s.info = ServerInfo{ProtocolVersion: res.ProtocolVersion, Name: res.ServerInfo.Name, Version: res.ServerInfo.Version, Instructions: res.Instructions}
	t.initialized(res.ProtocolVersion)
	if err := s.notify(ctx, "notifications/initialized", struct{}{}); err != nil {
		s.Close()
		return nil, fmt.Errorf("notifications/initialized: %w", err)
	}
	return s, nil
}

// Server is what the server said about itself.
func (s *Session) Server() ServerInfo { return s.info }

// Close ends the session: pending calls fail with ErrClosed, the transport
// closes (a stdio server's stdin, the HTTP session, the SSE stream) and no
// goroutine of the session survives. It is safe to call more than once.
func (s *Session) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closing = true
		s.mu.Unlock()
		s.fail(errors.New("closed by the client"))
		s.cancel()
		// The transport first: closing a stdio server's stdin unblocks
		// a background write to it.
		s.closeErr = s.t.close()
		s.bg.Wait()
	})
	return s.closeErr
}

// fail marks the connection gone and fails every pending call; the first
// reason wins.
func (s *Session) fail(reason error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = fmt.Errorf("%w: %w", ErrClosed, reason)
		close(s.done)
	}
}

// Err is why the connection is gone, nil while it is up.
func (s *Session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// call sends a request and waits for its response, decoded into out.
func (s *Session) call(ctx context.Context, method string, params, out any, cancellable bool) error {
	id := s.nextID.Add(1)
	ch := make(chan *wireMsg, 1)
	s.mu.Lock()
	if s.err != nil {
		s.mu.Unlock()
		return s.err
	}
	s.pending[id] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.pending, id)
		s.mu.Unlock()
	}()
	p, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	msg, err := json.Marshal(wireMsg{JSONRPC: "2.0", ID: json.RawMessage(strconv.FormatInt(id, 10)), Method: method, Params: p})
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	var resp *wireMsg
	sendErr := s.t.send(ctx, msg, id)
	select {
	case resp = <-ch:
	default:
	}
	if resp == nil {
		if sendErr == nil {
			select {
			case resp = <-ch:
			case <-ctx.Done():
			case <-s.done:
				select {
				case resp = <-ch:
				default:
					return s.Err()
				}
			}
		}
		if resp == nil {
			if ctx.Err() != nil {
				if cancellable {
					s.cancelRequest(id, context.Cause(ctx))
				}
				return ctx.Err()
			}
			if err := s.Err(); err != nil {
				return err
			}
			return sendErr
		}
	}
	if resp.Error != nil {
		return resp.Error
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(resp.Result, out); err != nil {
		return fmt.Errorf("%s: the server's result: %w", method, err)
	}
	return nil
}

// background runs f in a goroutine that Close waits for, unless the
// session is closing. Answers and notifications/cancelled go out this way:
// the caller returns at once, and a reader never blocks on a write (a
// stdio server blocked writing to us would never read our answer).
func (s *Session) background(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing || s.err != nil {
		return
	}
	s.bg.Go(f)
}

// cancelRequest tells the server that the caller gave up on request id.
func (s *Session) cancelRequest(id int64, reason error) {
	s.background(func() {
		params := struct {
			RequestID int64  `json:"requestId"`
			Reason    string `json:"reason,omitempty"`
		}{id, reason.Error()}
		if err := s.notify(s.ctx, "notifications/cancelled", params); err != nil {
			s.log.Debug("mcpclient: notifications/cancelled not sent", "id", id, "err", err)
		}
	})
}

func (s *Session) notify(ctx context.Context, method string, params any) error {
	p, err := json.Marshal(params)
	if err != nil {
		return err
	}
	msg, err := json.Marshal(wireMsg{JSONRPC: "2.0", Method: method, Params: p})
	if err != nil {
		return err
	}
	return s.t.send(ctx, msg, 0)
}

// handle takes one message (or batch) from the server and reports whether
// it held the response to request want (0: none wanted).
func (s *Session) handle(data []byte, want int64) bool {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return false
	}
	if data[0] == '[' {
		var batch []json.RawMessage
		if err := json.Unmarshal(data, &batch); err != nil {
			s.log.Debug("mcpclient: ignored a message that is not JSON-RPC", "err", err)
			return false
		}
		got := false
		for _, m := range batch {
			if s.handle(m, want) {
				got = true
			}
		}
		return got
	}
	var m wireMsg
	if err := json.Unmarshal(data, &m); err != nil {
		s.log.Debug("mcpclient: ignored a message that is not JSON-RPC", "err", err)
		return false
	}
	hasID := len(m.ID) > 0 && string(m.ID) != "null"
	switch {
	case m.Method != "" && hasID:
		s.background(func() { s.answer(&m) })
	case m.Method != "":
		s.log.Debug("mcpclient: notification from the server", "method", m.Method)
	case hasID:
		id, err := strconv.ParseInt(string(m.ID), 10, 64)
		if err != nil {
			s.log.Debug("mcpclient: ignored a response to no request of ours", "id", string(m.ID))
			return false
		}
		s.mu.Lock()
		ch := s.pending[id]
		s.mu.Unlock()
		if ch == nil {
			s.log.Debug("mcpclient: ignored a response to no pending request", "id", id)
			return false
		}
		select {
		case ch <- &m:
		default: // a duplicate response
		}
		return id == want
	default:
		s.log.Debug("mcpclient: ignored a message with neither method nor id")
	}
	return false
}

// answer answers a request from the server: ping with an empty result,
// anything else with method not found.
func (s *Session) answer(m *wireMsg) {
	resp := wireMsg{JSONRPC: "2.0", ID: m.ID}
	if m.Method == "ping" {
		resp.Result = json.RawMessage("{}")
	} else {
		s.log.Debug("mcpclient: refused a request from the server", "method", m.Method)
		resp.Error = &RPCError{Code: CodeMethodNotFound, Message: "method not found: " + m.Method}
	}
	b, err := json.Marshal(resp)
	if err == nil {
		err = s.t.send(s.ctx, b, 0)
	}
	if err != nil {
		s.log.Debug("mcpclient: could not answer the server", "method", m.Method, "err", err)
	}
}

// Ping checks that the server answers.
func (s *Session) Ping(ctx context.Context) error {
	return s.call(ctx, "ping", struct{}{}, nil, true)
}
