package mockhub

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"
)

// Journal entry kinds (Event.Source).
const (
	SourceOAuth = "oauth"
	SourceREST  = "rest"
	SourceHub   = "hub"
	SourceAdmin = "admin" // a state-changing admin API call (POST)
	SourceMock  = "mock"  // the mock's own doings (a failed state file write)
)

// Journal directions (Event.Direction).
const (
	// DirectionIn is a client's request or hub invocation, with the mock's
	// answer (connections, disconnections and rejections are "in" too).
	DirectionIn = "in"
	// DirectionOut is a hub invocation the mock sent to a connection (a
	// push), entered just before it is written to the connection (so a
	// client's answer always comes after it); a write that failed is a
	// second entry with the error ("not delivered: ..."), and a push still
	// queued when its connection ends is one entry with that error.
	DirectionOut = "out"
)

// Journal bounds (Config.MaxEvents, Config.MaxJournalBytes) and the cap of
// one payload.
const (
	DefaultMaxJournalBytes = 16 << 20
	// MaxPayloadBytes caps each entry's Payload and Result; a larger one
	// is kept as {"truncated":true,"bytes":N}.
	MaxPayloadBytes = 64 << 10
)

// Event is one entry of the mock's journal: one thing a client did or the
// mock sent, typed so that a recorder can replay it (Source is the kind,
// Direction in or out, Action the target: the hub method, the REST or
// OAuth operation, the admin route's name; Payload its arguments). It
// never holds a token, code, verifier or secret: every payload passes
// through the redaction of the journal (see docs/mockhub.md).
type Event struct {
	Seq          int64     `json:"seq"`
	Time         time.Time `json:"time"`
	Source       string    `json:"source"`    // oauth, rest, hub, admin, mock
	Direction    string    `json:"direction"` // in, out
	Action       string    `json:"action"`    // e.g. "token", "CreateUserDevice", "VerifySelf", "connected", "DeviceCommand", "PushCommand"
	DeviceID     string    `json:"deviceId,omitempty"`
	TokenID      string    `json:"tokenId,omitempty"`
	ConnectionID string    `json:"connectionId,omitempty"`
	Status       int       `json:"status,omitempty"` // HTTP status of REST, OAuth and admin calls, 401/503 of refused hub requests
	Error        string    `json:"error,omitempty"`
	// Args are a few facts worth a glance (the transport, the grant type).
	Args map[string]any `json:"args,omitempty"`
	// Payload is what was sent: a hub invocation's arguments (a JSON
	// array), an HTTP request's JSON body or its parameters (an object).
	Payload json.RawMessage `json:"payload,omitempty"`
	// Result is what came back: the result of a client's hub call, the
	// JSON answer of an HTTP request.
	Result json.RawMessage `json:"result,omitempty"`
	// Began, on an admin call's entry, is the journal's last sequence
	// number when the call began. The entry is entered once the call has
	// answered, so what the call caused (a push's hub entries, the
	// device's answer, a reconnection after a drop) may come before it:
	// it comes after Began.
	Began int64 `json:"began,omitempty"`
}

// journal is a ring of Events bounded by count and by payload bytes.
type journal struct {
	mu       sync.Mutex
	seq      int64
	buf      []Event // ring; len(buf) is its current capacity
	head, n  int
	bytes    int
	max      int
	maxBytes int
	now      func() time.Time
	notify   chan struct{} // closed and replaced on every add
}

func newJournal(max, maxBytes int, now func() time.Time) *journal {
	return &journal{max: max, maxBytes: maxBytes, now: now, notify: make(chan struct{})}
}

// entrySize is what an entry counts against the byte bound: its payloads
// and a flat allowance for the rest.
func entrySize(e *Event) int { return 256 + len(e.Payload) + len(e.Result) }

func (l *journal) add(e Event) Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	e.Seq = l.seq
	e.Time = l.now().UTC()
	size := entrySize(&e)
	for l.n > 0 && (l.n == l.max || l.bytes+size > l.maxBytes) {
		l.bytes -= entrySize(&l.buf[l.head])
		l.buf[l.head] = Event{}
		l.head = (l.head + 1) % len(l.buf)
		l.n--
	}
	if l.n == len(l.buf) { // grow, in order
		grown := make([]Event, min(l.max, max(16, 2*len(l.buf))))
		for i := range l.n {
			grown[i] = l.buf[(l.head+i)%len(l.buf)]
		}
		l.buf, l.head = grown, 0
	}
	l.buf[(l.head+l.n)%len(l.buf)] = e
	l.n++
	l.bytes += size
	close(l.notify)
	l.notify = make(chan struct{})
	return e
}

// last is the sequence number of the latest entry (0: none yet).
func (l *journal) last() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seq
}

// since returns the entries with Seq > after (of one device when device is
// not empty), the last sequence number, how many entries after `after`
// the ring has dropped, and a channel closed at the next add.
func (l *journal) since(after int64, device string) (out []Event, last, missed int64, next <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	first := l.seq - int64(l.n) + 1 // the oldest entry kept
	start := 0
	if after >= first {
		start = int(after - first + 1)
	} else if after < first-1 {
		missed = first - 1 - after
	}
	for i := start; i < l.n; i++ {
		e := &l.buf[(l.head+i)%len(l.buf)]
		if device == "" || e.DeviceID == device {
			out = append(out, *e)
		}
	}
	return out, l.seq, missed, l.notify
}

// Events returns the journal's entries with a sequence number above
// since, in order (0: all that are kept).
func (s *Server) Events(since int64) []Event {
	evs, _, _, _ := s.events.since(since, "")
	return evs
}

// WaitEvents returns the entries above since, waiting until there is at
// least one or ctx ends.
func (s *Server) WaitEvents(ctx context.Context, since int64) ([]Event, error) {
	for {
		evs, _, _, ch := s.events.since(since, "")
		if len(evs) > 0 {
			return evs, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// WaitEvent waits for the first entry above since that match accepts,
// and returns it.
func (s *Server) WaitEvent(ctx context.Context, since int64, match func(Event) bool) (Event, error) {
	for {
		evs, err := s.WaitEvents(ctx, since)
		if err != nil {
			return Event{}, err
		}
		for _, e := range evs {
			if match(e) {
				return e, nil
			}
			since = e.Seq
		}
	}
}

func (s *Server) record(e Event) {
	if e.Direction == "" {
		e.Direction = DirectionIn
	}
	s.events.add(e)
	s.log.Debug("mockhub event", "source", e.Source, "direction", e.Direction, "action", e.Action, "device", e.DeviceID, "status", e.Status, "error", e.Error)
}

// ---- payloads and redaction ---------------------------------------------

// redacted replaces a secret's value in the journal.
const redacted = "[redacted]"

// secretKey reports whether a JSON member or parameter of this name holds
// a secret: tokens of every kind, codes, verifiers, client secrets,
// passwords and the OAuth state (a client's CSRF secret). Names compare
// without case, "_" or "-".
func secretKey(name string) bool {
	n := strings.Map(func(r rune) rune {
		if r == '_' || r == '-' {
			return -1
		}
		return unicode.ToLower(r)
	}, name)
	switch n {
	case "token", "accesstoken", "refreshtoken", "idtoken", "devicetoken", "connectiontoken",
		"code", "codeverifier", "codechallenge", "clientsecret", "secret", "password", "state", "authorization":
		return true
	}
	return false
}

// mayNameSecret reports whether a text holds a word every secret name
// contains (without case): a text without one has nothing to redact.
func mayNameSecret(b []byte) bool {
	l := bytes.ToLower(b)
	for _, w := range []string{"token", "code", "secret", "password", "state", "authorization"} {
		if bytes.Contains(l, []byte(w)) {
			return true
		}
	}
	return false
}

// redactValue replaces, in a decoded JSON value, the values of secret
// members (at any depth) with "[redacted]".
func redactValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if secretKey(k) && x != nil && x != "" {
				t[k] = redacted
			} else {
				t[k] = redactValue(x)
			}
		}
	case []any:
		for i, x := range t {
			t[i] = redactValue(x)
		}
	}
	return v
}

// payload is v as journal JSON: marshalled, redacted and capped. nil is
// no payload.
func payload(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return rawPayload(b)
}

// rawPayload is a body as journal JSON: JSON redacted and capped, any
// other text as a JSON string (capped), an empty body as none.
func rawPayload(b []byte) json.RawMessage {
	if len(strings.TrimSpace(string(b))) == 0 {
		return nil
	}
	if len(b) > MaxPayloadBytes {
		return truncatedPayload(len(b))
	}
	if !mayNameSecret(b) { // nothing to redact: kept as sent, compacted
		var out bytes.Buffer
		if json.Compact(&out, b) == nil {
			return out.Bytes()
		}
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		out, _ := json.Marshal(string(b))
		return out
	}
	out, err := json.Marshal(redactValue(v))
	if err != nil {
		return nil
	}
	return out
}

// paramsPayload is a parameter list (a query or a form) as a JSON object
// of first values, secrets redacted.
func paramsPayload(p map[string][]string) json.RawMessage {
	if len(p) == 0 {
		return nil
	}
	m := make(map[string]any, len(p))
	for k, v := range p {
		if len(v) > 0 {
			m[k] = v[0]
		}
	}
	return payload(m)
}

// truncatedPayload stands for a payload of n bytes, too long to keep.
func truncatedPayload(n int) json.RawMessage {
	return fmt.Appendf(nil, `{"truncated":true,"bytes":%d}`, n)
}
