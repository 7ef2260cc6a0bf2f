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
