package demo

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

type failingWriter struct{ n int }

func (f *failingWriter) Write(b []byte) (int, error) { f.n++; return 0, errors.New("closed") }

// Text prints the step's text; JSON one object per step with its fields;
// the first write error is reported once and stops the printing.
func TestPrinter(t *testing.T) {
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	step := Step{At: at, Name: "push", Text: "  pushed hello  ", Fields: map[string]any{"command": "hello"}}
	var b strings.Builder
	(&Printer{W: &b}).Print(step)
	if b.String() != "  pushed hello  \n" {
		t.Errorf("text: %q", b.String())
	}
	b.Reset()
	(&Printer{W: &b, JSON: true}).Print(step)
	var obj map[string]any
	if err := json.Unmarshal([]byte(b.String()), &obj); err != nil || obj["event"] != "push" || obj["message"] != "pushed hello" ||
		obj["command"] != "hello" || obj["time"] != "2026-11-26T12:00:00Z" {
		t.Errorf("JSON line: %q %v", b.String(), err)
	}
	w := &failingWriter{}
	var failures []error
	p := &Printer{W: w, Failed: func(err error) { failures = append(failures, err) }}
	p.Print(step)
	p.Print(step)
	if len(failures) != 1 || w.n != 1 {
		t.Errorf("after a failed write: %d failures, %d writes", len(failures), w.n)
	}
}
