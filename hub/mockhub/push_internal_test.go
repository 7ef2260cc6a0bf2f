package mockhub

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/hubgate/hubgate/deviceapi"
)

// TestMarshalOnce: a push's arguments marshalled once write the same
// JSON as before and give the journal the same payload.
func TestMarshalOnce(t *testing.T) {
	macro := &deviceapi.Macro{ID: "m1", Name: "jump <now>", Commands: []string{"jump"},
		Events: []deviceapi.MacroEvent{{EventType: deviceapi.EventKeyPress, Keys: []string{"A"}}}}
	args := []any{"jump", macro}
	p := push{target: "DeviceCommand", args: args}
	p.marshalOnce()

	if string(p.journal) != string(payload(args)) {
		t.Errorf("journal payload %s, want %s", p.journal, payload(args))
	}
	want, _ := json.Marshal(invocation(args))
	got, err := json.Marshal(invocation(p.args))
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("JSON %s (%v), want %s", got, err, want)
	}

	// An argument that does not marshal leaves the push as it was: the
	// send reports the error.
	bad := push{args: []any{"x", make(chan int)}}
	bad.marshalOnce()
	if bad.journal != nil || bad.args[0] != "x" {
		t.Errorf("unmarshallable push changed: %+v", bad)
	}
}

// invocation is the part of the library's invocation message that holds
// the arguments.
func invocation(args []any) any {
	return struct {
		Type      int    `json:"type"`
		Target    string `json:"target"`
		Arguments []any  `json:"arguments"`
	}{1, "DeviceCommand", args}
}
