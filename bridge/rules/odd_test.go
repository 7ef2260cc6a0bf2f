package rules

import (
	"encoding/json"
	"testing"

	"github.com/hubgate/hubgate/deviceapi"
)

// A macro of an unexpected shape is kept out of the catalogue; the good
// macros around it, enum-numbered events and string times included, are
// found.
func TestCatalogLeavesOutOddMacros(t *testing.T) {
	var cfg deviceapi.Configuration
	in := `{"macros":[{"id":"1","commands":["jump"],"events":[{"eventType":0,"holdTimeMilliseconds":"100"}]},
		{"id":"2","commands":["broken"],"events":"oops"},42,{"id":"3","commands":["broken","water"],"events":[]}]}`
	if err := json.Unmarshal([]byte(in), &cfg); err != nil {
		t.Fatal(err)
	}
	c := NewCatalog(cfg.Macros)
	if c.Len() != 2 {
		t.Fatalf("catalogue of %d macros, want 2: %+v", c.Len(), c.Macros())
	}
	if m, ok := c.ByCommand("jump"); !ok || m.ID != "1" {
		t.Errorf("jump: %+v %v", m, ok)
	}
	if m, ok := c.ByCommand("broken"); !ok || m.ID != "3" {
		t.Errorf("broken found %+v %v, want the good macro 3", m, ok)
	}
	if _, ok := c.ByID("2"); ok {
		t.Error("the odd macro is found by id")
	}
}

// A command that carries an odd macro matches no rule by its macro (its
// name, id or events), only by its text; the macro stays on the command
// as it came, for the journal.
func TestOddDeliveredMacroIsNotMatched(t *testing.T) {
	s := mustCompile(t, []Spec{
		rule("by-name", MatchSpec{MacroName: "Broken"}),
		rule("by-text", MatchSpec{Command: "broken"}),
	}, nil, UnmatchedSpec{})
	var odd, good deviceapi.Macro
	if err := json.Unmarshal([]byte(`{"id":"3","name":"Broken","events":[{"eventType":"Pause","holdTimeMilliseconds":[1]}]}`), &odd); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(`{"id":"3","name":"Broken","events":[{"eventType":1,"holdTimeMilliseconds":"1"}]}`), &good); err != nil {
		t.Fatal(err)
	}
	if r, ok := s.Match(Command{Text: "broken", Macro: &odd}); !ok || r.Name() != "by-text" {
		t.Errorf("odd macro matched %v %v, want by-text", r, ok)
	}
	if r, ok := s.Match(Command{Text: "other", Macro: &odd}); ok {
		t.Errorf("odd macro matched %s by its macro", r.Name())
	}
	if r, ok := s.Match(Command{Text: "broken", Macro: &good}); !ok || r.Name() != "by-name" {
		t.Errorf("good macro matched %v %v, want by-name", r, ok)
	}
	if got := s.Complete(Command{Text: "broken", Macro: &odd}); got.Macro != &odd {
		t.Error("Complete replaced the odd macro the command carried")
	}
}
