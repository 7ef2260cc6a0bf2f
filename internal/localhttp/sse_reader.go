package localhttp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// Event is one server-sent event as a reader dispatches it.
type Event struct {
	ID   string
	Name string // "" is the default name, "message"
	Data []byte // the data lines joined with "\n"
}

// EventReader reads server-sent events (the HTML standard's
// text/event-stream parsing: lines end at "\r\n", "\n" or "\r"; comment
// lines and retry are skipped; an event with no data line is not
// dispatched). It is the reading side of EventStream.
type EventReader struct {
	r     *bufio.Reader
	max   int
	carry bool // the last line ended with "\r": a following "\n" belongs to it
}

// ErrEventTooLarge is returned for an event larger than the reader's limit.
var ErrEventTooLarge = errors.New("server-sent event exceeds the size limit")

// NewEventReader reads events from r; an event (or line) over max bytes
// is ErrEventTooLarge (max <= 0: 64 MiB).
func NewEventReader(r io.Reader, max int) *EventReader {
	if max <= 0 {
		max = 64 << 20
	}
	return &EventReader{r: bufio.NewReader(r), max: max}
}

// Next returns the next event; io.EOF once the stream ends between events,
// io.ErrUnexpectedEOF when it ends inside one.
func (er *EventReader) Next() (Event, error) {
	var ev Event
	var data []byte
	hasData, partial := false, false
	size := 0
	for {
		line, err := er.line()
		if err != nil {
			if errors.Is(err, io.EOF) && partial {
				return Event{}, io.ErrUnexpectedEOF
			}
			return Event{}, err
		}
		size += len(line)
		if size > er.max {
			return Event{}, ErrEventTooLarge
		}
		if len(line) == 0 {
			if hasData {
				ev.Data = data
				return ev, nil
			}
			ev, data, partial = Event{}, nil, false
			continue
		}
		partial = true
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			ev.Name = string(value)
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			hasData = true
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				ev.ID = string(value)
			}
		}
	}
}

// line reads one line without its end.
func (er *EventReader) line() ([]byte, error) {
	var b []byte
	for {
		c, err := er.r.ReadByte()
		if err != nil {
			if len(b) > 0 && errors.Is(err, io.EOF) {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if er.carry {
			er.carry = false
			if c == '\n' {
				continue
			}
		}
		switch c {
		case '\n':
			return b, nil
		case '\r':
			er.carry = true
			return b, nil
		}
		if len(b) >= er.max {
			return nil, fmt.Errorf("%w (%d bytes)", ErrEventTooLarge, er.max)
		}
		b = append(b, c)
	}
}
