package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hubgate/hubgate/bridge/daemon/demo"
)

type demoFailingWriter struct{ n int }

func (f *demoFailingWriter) Write(b []byte) (int, error) { f.n++; return 0, errors.New("closed") }

// Text prints the step's text; JSON one object per step with its fields;
// the first write error is reported once and stops the printing.
func TestDemoPrinter(t *testing.T) {
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	step := demo.Step{At: at, Name: "push", Text: "  pushed hello  ", Fields: map[string]any{"command": "hello"}}
	var b strings.Builder
	(&demoPrinter{W: &b}).Print(step)
	if b.String() != "  pushed hello  \n" {
		t.Errorf("text: %q", b.String())
	}
	b.Reset()
	(&demoPrinter{W: &b, JSON: true}).Print(step)
	var obj map[string]any
	if err := json.Unmarshal([]byte(b.String()), &obj); err != nil || obj["event"] != "push" || obj["message"] != "pushed hello" ||
		obj["command"] != "hello" || obj["time"] != "2026-11-26T12:00:00Z" {
		t.Errorf("JSON line: %q %v", b.String(), err)
	}
	w := &demoFailingWriter{}
	var failures []error
	p := &demoPrinter{W: w, Failed: func(err error) { failures = append(failures, err) }}
	p.Print(step)
	p.Print(step)
	if len(failures) != 1 || w.n != 1 {
		t.Errorf("after a failed write: %d failures, %d writes", len(failures), w.n)
	}
}
