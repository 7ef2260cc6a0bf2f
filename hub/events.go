package hub

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hubgate/hubgate/deviceapi"
)

// Kind is the kind of a hub-to-client event: the canonical name of the
// target the hub invoked.
type Kind string

// Kinds.
const (
	KindDeviceCommand        Kind = "DeviceCommand"
	KindDeviceProfileUpdate  Kind = "DeviceProfileUpdate"
	KindDeviceSettingsUpdate Kind = "DeviceSettingsUpdate"
	KindDeviceType           Kind = "DeviceType"
	KindStartListening       Kind = "StartListening"
	KindStopListening        Kind = "StopListening"
	KindOther                Kind = "Other" // a target the spec does not name; see Event.Target
	// KindDeviceRecord is not an invocation: it is the device record the
	// hub answered to the client's VerifySelf or GetLatestDevice (Target
	// names the method, Device holds the device; Seq is 0), queued in
	// wire order with the invocations, so that the consumer learns the
	// device's current profile at every connect (the real service hands
	// it over there, not only in DeviceProfileUpdate). No hub target maps
	// to it.
	KindDeviceRecord Kind = "DeviceRecord"
	// KindTooLarge: a message over Config.MaxMessageSize, skipped unread
	// (Event.TooLarge says what it was and its size). It is not a wire
	// target.
	KindTooLarge Kind = "TooLarge"
)

var kindByTarget = map[string]Kind{
	"devicecommand":        KindDeviceCommand,
	"deviceprofileupdate":  KindDeviceProfileUpdate,
	"devicesettingsupdate": KindDeviceSettingsUpdate,
	"devicetype":           KindDeviceType,
	"startlistening":       KindStartListening,
	"stoplistening":        KindStopListening,
}

func kindOf(target string) Kind {
	switch k := Kind(target); k { // the usual spelling, without allocating
	case KindDeviceCommand, KindDeviceProfileUpdate, KindDeviceSettingsUpdate, KindDeviceType, KindStartListening, KindStopListening:
		return k
	}
	if k, ok := kindByTarget[strings.ToLower(target)]; ok {
		return k
	}
	return KindOther
}

// Event is one hub-to-client invocation, or a device record the hub
// answered (KindDeviceRecord), in wire order.
type Event struct {
	// Seq is the arrival sequence number: it grows by one for every
	// invocation read from the wire, across reconnections, for the life
	// of the Client. Events reach the consumer in Seq order; a gap means
	// events were dropped (Stats.Dropped). A KindDeviceRecord is not an
	// invocation: its Seq is 0, and the invocations' numbers (rule
	// templates show them as .Seq) stay as they were without it.
	Seq      uint64
	Kind     Kind
	Target   string            // the target as the hub spelled it (KindDeviceRecord: the method answered)
	Args     []json.RawMessage // every argument, unchanged (KindDeviceRecord: the answer)
	Received time.Time         // when it was read (Config.Now)
	Session  uint64            // the WebSocket connection it arrived on (see State.Session)
	// InvocationID is set when the hub awaited a result (the client
	// answered with an empty completion on arrival).
	InvocationID string

	Command string                // DeviceCommand: the command string (KindTooLarge: also of a record whose target could not be read, its first string argument)
	Macro   *deviceapi.Macro      // DeviceCommand: its macro; nil when absent or null
	Device  *deviceapi.UserDevice // DeviceProfileUpdate: the device, nil when absent or null; KindDeviceRecord: the device answered
	// Payload is the first argument of DeviceSettingsUpdate, DeviceType and
	// any other target (nil when none); all arguments stay in Args.
	Payload json.RawMessage
	// DecodeErr is set when a known argument did not decode into its type;
	// the event is delivered anyway with the raw arguments.
	DecodeErr error

	// TooLarge is set on a KindTooLarge event: the message was over the
	// receive limit and was skipped. Target, InvocationID and (for a
	// DeviceCommand) Command are what its first bytes said, empty when
	// they did not say it; a Command over 256 bytes is cut and ends
	// with "…". Args, Macro and Device are empty.
	TooLarge *TooLarge
}

// TooLarge describes a message over Config.MaxMessageSize that the client
// skipped without reading it whole, keeping the connection.
type TooLarge struct {
	// Of is what the message was: the kind of its target
	// (KindDeviceCommand, KindDeviceProfileUpdate...); also
	// KindDeviceProfileUpdate for an answer of VerifySelf or
	// GetLatestDevice (a device with its profile; Event.Target names the
	// method); KindOther when its target could not be read.
	Of Kind
	// Size is the message's size in bytes (without its record separator);
	// with Unterminated, what arrived before its WebSocket message ended
	// (an answer's size is what the hub sent).
	Size  int64
	Limit int64 // Config.MaxMessageSize
	// Unterminated: the WebSocket message ended before the record did.
	Unterminated bool
}

func isNull(raw json.RawMessage) bool {
	s := bytes.TrimSpace(raw)
	return len(s) == 0 || string(s) == "null"
}

// decodeEvent fills the typed fields of e from its arguments. Decoding is
// liberal (package deviceapi): a macro or device of an unexpected shape
// is kept as it came, with its oddities noted in it, and never sets
// DecodeErr; only an argument that cannot be the type at all does (a
// command that is an object, a device that is not an object).
func decodeEvent(e *Event) {
	switch e.Kind {
	case KindDeviceCommand:
		if len(e.Args) > 0 && !isNull(e.Args[0]) {
			if cmd, ok := commandText(e.Args[0]); ok {
				e.Command = cmd
			} else {
				e.DecodeErr = fmt.Errorf("hub: DeviceCommand command: got %s, want a string", excerpt(e.Args[0]))
			}
		}
		if len(e.Args) > 1 && !isNull(e.Args[1]) {
			// The argument is valid JSON (the record it came in was
			// decoded); its own decoder reads it without encoding/json
			// scanning it once more first.
			m := new(deviceapi.Macro)
			if err := m.UnmarshalJSON(e.Args[1]); err != nil {
				if e.DecodeErr == nil {
					e.DecodeErr = fmt.Errorf("hub: DeviceCommand macro: %w", err)
				}
			} else {
				e.Macro = m
			}
		}
	case KindDeviceProfileUpdate:
		if len(e.Args) > 0 && !isNull(e.Args[0]) {
			d := new(deviceapi.UserDevice)
			if err := json.Unmarshal(e.Args[0], d); err != nil {
				e.DecodeErr = fmt.Errorf("hub: DeviceProfileUpdate device: %w", err)
			} else if !isObject(e.Args[0]) {
				e.DecodeErr = fmt.Errorf("hub: DeviceProfileUpdate device: got %s, want an object", excerpt(e.Args[0]))
			} else {
				e.Device = d
			}
		}
	case KindStartListening, KindStopListening:
	default:
		if len(e.Args) > 0 {
			e.Payload = e.Args[0]
		}
	}
}

// commandText reads a command string; a number is read as its text.
func commandText(raw json.RawMessage) (string, bool) {
	if s, ok := plainString(raw); ok {
		return s, true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String(), true
	}
	return "", false
}

// plainString reads a JSON string of printable ASCII without escapes (the
// usual command) without encoding/json; ok is false for anything else.
func plainString(raw json.RawMessage) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	for _, b := range body {
		if b < 0x20 || b >= 0x7f || b == '"' || b == '\\' {
			return "", false
		}
	}
	return string(body), true
}

func isObject(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s != "" && s[0] == '{'
}

// excerpt is at most 40 bytes of raw, for an error message.
func excerpt(raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}

// queue holds decoded events between the reader and the dispatcher.
type queue struct {
	mu      sync.Mutex
	items   []Event
	spare   []Event
	limit   int
	signal  chan struct{} // one pending wake-up
	closed  bool
	dropped uint64
}

func newQueue(limit int) *queue {
	return &queue{limit: limit, signal: make(chan struct{}, 1)}
}

// push appends e; it reports false when the queue is full or closed.
func (q *queue) push(e Event) bool {
	q.mu.Lock()
	if q.closed || len(q.items) >= q.limit {
		q.dropped++
		q.mu.Unlock()
		return false
	}
	q.items = append(q.items, e)
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
	return true
}

// take returns every queued event (the slice is reused by the next take)
// and whether the queue is closed.
func (q *queue) take() ([]Event, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.items
	q.items = q.spare[:0]
	q.spare = out
	return out, q.closed
}

func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

func (q *queue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

// dispatch forwards queued events to the consumer channel in order until
// the queue is closed and empty; then it closes the channel.
func (c *Client) dispatch() {
	defer close(c.events)
	for {
		batch, closed := c.q.take()
		for i := range batch {
			if batch[i].Kind == KindDeviceCommand {
				c.decode(&batch[i])
			}
			c.events <- batch[i]
			c.stats.delivered.Add(1)
			batch[i] = Event{}
		}
		if len(batch) > 0 {
			continue
		}
		if closed {
			return
		}
		<-c.q.signal
	}
}
