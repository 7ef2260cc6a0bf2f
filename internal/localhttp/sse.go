package localhttp

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"
)

// ErrStreamBroken is what an EventStream answers once a write or a flush
// has failed (the reader went away, a write deadline passed): the stream
// is over and every later write fails at once.
var ErrStreamBroken = errors.New("the event stream's reader went away")

// EventStream writes server-sent events (the text/event-stream format of
// the HTML standard) to one response, flushing each so that it leaves at
// once. The status line and headers go out with the first write: status
// 200, the headers the caller set on the ResponseWriter beforehand, and
// Content-Type text/event-stream unless the caller set one. It is not safe
// for concurrent use: a stream written from several goroutines is guarded
// by its caller.
type EventStream struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	buf     []byte
	started bool
	broken  bool
}

// NewEventStream returns a stream on w; nothing is written yet.
func NewEventStream(w http.ResponseWriter) *EventStream {
	return &EventStream{w: w, rc: http.NewResponseController(w)}
}

// Controller is the response's controller (for write deadlines).
func (s *EventStream) Controller() *http.ResponseController { return s.rc }

// Started reports whether the status line has been written.
func (s *EventStream) Started() bool { return s.started }

// Event writes one event: an id line and an event line where id and name
// are not empty, then data, one data line per line of it (a line ends at
// "\r\n", "\n" or "\r", as the reader splits them), then the blank line
// that dispatches it.
func (s *EventStream) Event(id, name string, data []byte) error {
	b := s.buf[:0]
	if id != "" {
		b = append(append(append(b, "id: "...), id...), '\n')
	}
	if name != "" {
		b = append(append(append(b, "event: "...), name...), '\n')
	}
	for {
		i := bytes.IndexAny(data, "\r\n")
		if i < 0 {
			break
		}
		b = append(append(append(b, "data: "...), data[:i]...), '\n')
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
	b = append(append(append(b, "data: "...), data...), "\n\n"...)
	s.buf = b
	return s.write(b)
}

// EventFrom writes one event named name whose data, one line, is written
// by write in pieces, so that a large payload (a long run's record) needs
// no buffer of its own. A line break in the data, or an error from write,
// breaks the stream before the blank line that would dispatch the event:
// a reader never sees half an event, and EventFrom returns the error.
func (s *EventStream) EventFrom(name string, write func(io.Writer) error) error {
	b := s.buf[:0]
	if name != "" {
		b = append(append(append(b, "event: "...), name...), '\n')
	}
	s.buf = append(b, "data: "...)
	if err := s.write(s.buf); err != nil {
		return err
	}
	if err := write(lineWriter{s}); err != nil {
		s.broken = true
		return err
	}
	return s.write([]byte("\n\n"))
}

// errLineBreak is EventFrom's error for data that is not one line.
var errLineBreak = errors.New("event data has a line break")

// lineWriter writes one data line of an event straight to the response.
type lineWriter struct{ s *EventStream }

func (l lineWriter) Write(p []byte) (int, error) {
	if l.s.broken {
		return 0, ErrStreamBroken
	}
	if bytes.ContainsAny(p, "\r\n") {
		return 0, errLineBreak
	}
	n, err := l.s.w.Write(p)
	if err != nil {
		l.s.broken = true
		return n, ErrStreamBroken
	}
	return n, nil
}

// Data writes an event of data alone (no id, the default event name).
func (s *EventStream) Data(data []byte) error { return s.Event("", "", data) }

// Comment writes a comment line (": text"), which a reader ignores: a
// keep-alive that stops proxies and idle timers from closing the stream.
func (s *EventStream) Comment(text string) error {
	s.buf = append(append(append(s.buf[:0], ": "...), text...), "\n\n"...)
	return s.write(s.buf)
}

// Retry tells the reader how long to wait before it reconnects (whole
// milliseconds).
func (s *EventStream) Retry(d time.Duration) error {
	s.buf = append(strconv.AppendInt(append(s.buf[:0], "retry: "...), d.Milliseconds(), 10), "\n\n"...)
	return s.write(s.buf)
}

func (s *EventStream) write(b []byte) error {
	if s.broken {
		return ErrStreamBroken
	}
	if !s.started {
		s.started = true
		if h := s.w.Header(); h.Get("Content-Type") == "" {
			h.Set("Content-Type", "text/event-stream")
		}
		s.w.WriteHeader(http.StatusOK)
	}
	if _, err := s.w.Write(b); err != nil {
		s.broken = true
		return ErrStreamBroken
	}
	if err := s.rc.Flush(); err != nil {
		s.broken = true
		return ErrStreamBroken
	}
	return nil
}
