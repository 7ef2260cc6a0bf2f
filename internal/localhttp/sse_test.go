package localhttp

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestEventStreamFraming(t *testing.T) {
	for _, c := range []struct {
		name  string
		write func(*EventStream) error
		want  string
	}{
		{"data alone", func(s *EventStream) error { return s.Data([]byte(`{"a":1}`)) }, "data: {\"a\":1}\n\n"},
		{"id, name and data", func(s *EventStream) error { return s.Event("7", "bridge", []byte(`{}`)) }, "id: 7\nevent: bridge\ndata: {}\n\n"},
		{"name without id", func(s *EventStream) error { return s.Event("", "ping", nil) }, "event: ping\ndata: \n\n"},
		{"lines of data", func(s *EventStream) error { return s.Data([]byte("one\ntwo\r\nthree\rfour")) },
			"data: one\ndata: two\ndata: three\ndata: four\n\n"},
		{"a trailing line end", func(s *EventStream) error { return s.Data([]byte("one\n")) }, "data: one\ndata: \n\n"},
		{"comment", func(s *EventStream) error { return s.Comment("keep-alive") }, ": keep-alive\n\n"},
		{"data in pieces", func(s *EventStream) error {
			return s.EventFrom("run.completed", func(w io.Writer) error {
				io.WriteString(w, `{"a":`)
				_, err := io.WriteString(w, `1}`)
				return err
			})
		}, "event: run.completed\ndata: {\"a\":1}\n\n"},
		{"retry", func(s *EventStream) error { return s.Retry(2 * time.Second) }, "retry: 2000\n\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			s := NewEventStream(rec)
			if s.Started() {
				t.Error("started before the first write")
			}
			if err := c.write(s); err != nil {
				t.Fatal(err)
			}
			if !s.Started() || rec.Code != 200 || !rec.Flushed || rec.Header().Get("Content-Type") != "text/event-stream" {
				t.Errorf("started %v, status %d, flushed %v, Content-Type %q", s.Started(), rec.Code, rec.Flushed, rec.Header().Get("Content-Type"))
			}
			if got := rec.Body.String(); got != c.want {
				t.Errorf("wrote %q, want %q", got, c.want)
			}
		})
	}
}

// TestEventStreamKeepsTheCallersHeaders: what the caller set before the
// first write goes out with it, its own Content-Type included.
func TestEventStreamKeepsTheCallersHeaders(t *testing.T) {
	rec := httptest.NewRecorder()
	rec.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	rec.Header().Set("Cache-Control", "no-store")
	s := NewEventStream(rec)
	if err := s.Data([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := s.Data([]byte("y")); err != nil {
		t.Fatal(err)
	}
	if rec.Header().Get("Content-Type") != "text/event-stream; charset=utf-8" || rec.Header().Get("Cache-Control") != "no-store" {
		t.Errorf("headers %v", rec.Header())
	}
	if rec.Body.String() != "data: x\n\ndata: y\n\n" {
		t.Errorf("wrote %q", rec.Body.String())
	}
}

// TestEventStreamFlushesEachEvent: over a real connection, each event
// reaches the reader before the handler writes the next one.
func TestEventStreamFlushesEachEvent(t *testing.T) {
	next := make(chan struct{})
	done := make(chan error, 1)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := NewEventStream(w)
		err := s.Retry(1500 * time.Millisecond)
		for i := 0; err == nil && i < 2; i++ {
			<-next
			err = s.Event(string(rune('1'+i)), "tick", []byte(`{"n":`+string(rune('1'+i))+`}`))
		}
		done <- err
	}))
	defer ts.Close()
	resp, err := ts.Client().Get(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Errorf("Content-Type %q", resp.Header.Get("Content-Type"))
	}
	br := bufio.NewReader(resp.Body)
	readEvent := func() string {
		t.Helper()
		var b strings.Builder
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("after %q: %v", b.String(), err)
			}
			b.WriteString(line)
			if line == "\n" {
				return b.String()
			}
		}
	}
	if got := readEvent(); got != "retry: 1500\n\n" {
		t.Errorf("first %q", got)
	}
	for i, want := range []string{"id: 1\nevent: tick\ndata: {\"n\":1}\n\n", "id: 2\nevent: tick\ndata: {\"n\":2}\n\n"} {
		next <- struct{}{} // the handler writes the next event only now
		if got := readEvent(); got != want {
			t.Errorf("event %d: %q, want %q", i, got, want)
		}
	}
	if err := <-done; err != nil {
		t.Errorf("handler: %v", err)
	}
	if rest, _ := io.ReadAll(br); len(rest) != 0 {
		t.Errorf("after the events: %q", rest)
	}
}

// failingWriter fails every write, as a connection whose reader went away.
type failingWriter struct {
	header  http.Header
	status  int
	writes  int
	flushes int
}

func (w *failingWriter) Header() http.Header { return w.header }
func (w *failingWriter) WriteHeader(s int)   { w.status = s }
func (w *failingWriter) Write([]byte) (int, error) {
	w.writes++
	return 0, errors.New("broken pipe")
}
func (w *failingWriter) Flush() { w.flushes++ }

// TestEventStreamBreaksOnce: a failed write breaks the stream; later
// writes fail at once, without touching the connection again.
func TestEventStreamBreaksOnce(t *testing.T) {
	w := &failingWriter{header: http.Header{}}
	s := NewEventStream(w)
	if err := s.Data([]byte("x")); !errors.Is(err, ErrStreamBroken) {
		t.Fatalf("first write: %v, want ErrStreamBroken", err)
	}
	if err := s.Comment("keep-alive"); !errors.Is(err, ErrStreamBroken) {
		t.Fatalf("later write: %v, want ErrStreamBroken", err)
	}
	if w.status != 200 || w.writes != 1 || w.flushes != 0 {
		t.Errorf("status %d, %d writes, %d flushes; want 200, 1, 0", w.status, w.writes, w.flushes)
	}
}

// TestEventFromNeverDispatchesHalfAnEvent: a line break or an error from
// the writer breaks the stream before the dispatching blank line.
func TestEventFromNeverDispatchesHalfAnEvent(t *testing.T) {
	boom := errors.New("boom")
	for _, c := range []struct {
		name  string
		write func(io.Writer) error
		want  error
	}{
		{"line break", func(w io.Writer) error { _, err := io.WriteString(w, "a\nb"); return err }, errLineBreak},
		{"writer error", func(w io.Writer) error { io.WriteString(w, `{"a":`); return boom }, boom},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			s := NewEventStream(rec)
			if err := s.EventFrom("x", c.write); !errors.Is(err, c.want) {
				t.Fatalf("EventFrom: %v, want %v", err, c.want)
			}
			if strings.HasSuffix(rec.Body.String(), "\n\n") {
				t.Errorf("dispatched: %q", rec.Body.String())
			}
			if err := s.Data([]byte("next")); !errors.Is(err, ErrStreamBroken) {
				t.Errorf("write after a broken event: %v", err)
			}
		})
	}
}
