package localhttp

import (
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestEventReaderReadsWhatEventStreamWrites round-trips events, multi-line
// data in every line-end style included, and skips comments.
func TestEventReaderReadsWhatEventStreamWrites(t *testing.T) {
	rec := httptest.NewRecorder()
	es := NewEventStream(rec)
	want := []Event{
		{Name: "run.started", Data: []byte(`{"a":1}`)},
		{ID: "7", Name: "run.step", Data: []byte("one\ntwo\nthree\nfour")},
		{Data: []byte("")},
	}
	if err := es.Event(want[0].ID, want[0].Name, want[0].Data); err != nil {
		t.Fatal(err)
	}
	_ = es.Comment("keep-alive")
	_ = es.Event("7", "run.step", []byte("one\r\ntwo\rthree\nfour"))
	_ = es.Data(nil)
	er := NewEventReader(strings.NewReader(rec.Body.String()), 0)
	for i, w := range want {
		got, err := er.Next()
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if got.ID != w.ID || got.Name != w.Name || string(got.Data) != string(w.Data) {
			t.Fatalf("event %d = %+v (%q), want %+v (%q)", i, got, got.Data, w, w.Data)
		}
	}
	if _, err := er.Next(); err != io.EOF {
		t.Fatalf("after the last event: %v, want io.EOF", err)
	}
}

func TestEventReaderLimitsAndTruncation(t *testing.T) {
	if _, err := NewEventReader(strings.NewReader("data: "+strings.Repeat("x", 100)+"\n\n"), 50).Next(); !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("oversized event: %v", err)
	}
	if _, err := NewEventReader(strings.NewReader("event: x\ndata: y\n"), 0).Next(); err != io.ErrUnexpectedEOF {
		t.Fatalf("stream cut inside an event: %v", err)
	}
	// CRLF line ends and no space after the colon.
	ev, err := NewEventReader(strings.NewReader("event:a\r\ndata:b\r\n\r\n"), 0).Next()
	if err != nil || ev.Name != "a" || string(ev.Data) != "b" {
		t.Fatalf("CRLF event = %+v %v", ev, err)
	}
}
