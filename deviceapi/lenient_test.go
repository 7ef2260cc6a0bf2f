package deviceapi

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// roundTrip decodes in as T, checks that it encodes back to the same
// bytes (whitespace aside) and returns the decoded value.
func roundTrip[T any](t *testing.T, in string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(in), &v); err != nil {
		t.Fatalf("%s: %v", in, err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%s: encode: %v", in, err)
	}
	if want := compact(t, []byte(in)); string(out) != want {
		t.Errorf("round trip\n got %s\nwant %s", out, want)
	}
	return v
}

// Shapes the vendor's clients may send that hubgate reads: each decodes
// to the field values shown, with no Oddity, and comes back as it came.
func TestLenientEventShapes(t *testing.T) {
	for _, c := range []struct {
		in    string
		check func(e MacroEvent) bool
	}{
		// eventType: the Unity enum's number, in the spec's order.
		{`{"eventType":0,"keys":["space"]}`, func(e MacroEvent) bool { return e.EventType == EventKeyPress }},
		{`{"eventType":1}`, func(e MacroEvent) bool { return e.EventType == EventPause }},
		{`{"eventType":4}`, func(e MacroEvent) bool { return e.EventType == EventJoysticksMove }},
		{`{"eventType":7}`, func(e MacroEvent) bool { return e.EventType == EventStopOutputs }},
		{`{"eventType":9}`, func(e MacroEvent) bool { return e.EventType == EventDeviceTypeCustomAction }},
		{`{"eventType":2.0}`, func(e MacroEvent) bool { return e.EventType == EventType }},
		{`{"eventType":"0"}`, func(e MacroEvent) bool { return e.EventType == EventKeyPress }},
		{`{"eventType":" 8 "}`, func(e MacroEvent) bool { return e.EventType == EventKeyToggle }},
		// eventType: a name in any case; both joystick spellings.
		{`{"eventType":"keypress"}`, func(e MacroEvent) bool { return e.EventType == EventKeyPress }},
		{`{"eventType":"STOPOUTPUTS"}`, func(e MacroEvent) bool { return e.EventType == EventStopOutputs }},
		{`{"eventType":"joystickmove"}`, func(e MacroEvent) bool { return e.EventType == EventJoystickMove && e.Is(EventJoysticksMove) }},
		{`{"eventType":"JoystickMove"}`, func(e MacroEvent) bool { return e.EventType == EventJoystickMove }},
		{`{"eventType":"joysticksMove"}`, func(e MacroEvent) bool { return e.EventType == EventJoysticksMove }},
		// An event type hubgate does not know is kept as it is (not odd).
		{`{"eventType":"Teleport"}`, func(e MacroEvent) bool { return e.EventType == "Teleport" }},
		// Numbers in strings.
		{`{"eventType":"Pause","holdTimeMilliseconds":"100"}`, func(e MacroEvent) bool { return *e.HoldTimeMilliseconds == 100 }},
		{`{"holdTimeMilliseconds":" 2.5e2 "}`, func(e MacroEvent) bool { return *e.HoldTimeMilliseconds == 250 }},
		{`{"mouseMoveX":"5","mouseMoveY":"-3","mouseMoveScroll":1}`, func(e MacroEvent) bool {
			return *e.MouseMoveX == 5 && *e.MouseMoveY == -3 && *e.MouseMoveScroll == 1
		}},
		{`{"joystickLeftMoveX":"-100","joystickRightMoveY":"0"}`, func(e MacroEvent) bool {
			return *e.JoystickLeftMoveX == -100 && *e.JoystickRightMoveY == 0
		}},
		// Booleans as strings in any case, and as 0 or 1.
		{`{"isKeyLatch":"true","isCustomToggle":"FALSE","isCustomRelease":1}`, func(e MacroEvent) bool {
			return *e.IsKeyLatch && !*e.IsCustomToggle && *e.IsCustomRelease
		}},
		{`{"isKeyLatch":0,"isCustomRelease":"1"}`, func(e MacroEvent) bool { return !*e.IsKeyLatch && *e.IsCustomRelease }},
		// Strings as numbers.
		{`{"eventType":"Type","typedPhrase":42}`, func(e MacroEvent) bool { return e.Text() == "42" }},
		{`{"eventType":9,"deviceTypeCustomActionId":7,"deviceTypeId":12}`, func(e MacroEvent) bool {
			a, ok := e.CustomAction()
			return ok && a.ID == "7" && a.DeviceTypeID == "12"
		}},
		// A lone key for a list of keys; numbers among keys.
		{`{"keys":"space"}`, func(e MacroEvent) bool { return slices.Equal(e.Keys, []string{"space"}) }},
		{`{"keys":["a",5]}`, func(e MacroEvent) bool { return slices.Equal(e.Keys, []string{"a", "5"}) }},
		// Null anywhere.
		{`{"eventType":null,"keys":null,"holdTimeMilliseconds":null,"isKeyLatch":null,"typedPhrase":null}`, func(e MacroEvent) bool {
			return e.EventType == "" && e.Keys == nil && e.HoldTimeMilliseconds == nil && e.IsKeyLatch == nil && e.TypedPhrase == nil
		}},
	} {
		e := roundTrip[MacroEvent](t, c.in)
		if !c.check(e) {
			t.Errorf("%s decoded as %+v", c.in, e)
		}
		if odd := e.Oddities(); len(odd) != 0 {
			t.Errorf("%s: oddities %v", c.in, odd)
		}
	}
}

func TestLenientMacroShapes(t *testing.T) {
	for _, c := range []struct {
		in    string
		check func(m Macro) bool
	}{
		{`{"id":1,"name":"Space","commands":["space"]}`, func(m Macro) bool { return m.ID == "1" }},
		{`{"id":"1","commands":"water plants"}`, func(m Macro) bool { return slices.Equal(m.Commands, []string{"water plants"}) }},
		{`{"id":"1","commands":null,"events":null}`, func(m Macro) bool { return m.Commands == nil && m.Events == nil }},
		{`{"id":"1","commands":[],"events":[]}`, func(m Macro) bool { return m.Commands != nil && len(m.Events) == 0 && m.Events != nil }},
		// The macro: an enum-numbered, string-timed event.
		{`{"id":"7","name":"Jump","commands":["jump"],"events":[{"eventType":0,"keys":["space"],"holdTimeMilliseconds":"100"},{"eventType":"1","holdTimeMilliseconds":"50"}]}`,
			func(m Macro) bool {
				return m.Events[0].Is(EventKeyPress) && *m.Events[0].HoldTimeMilliseconds == 100 && m.Events[1].Is(EventPause) && *m.Events[1].HoldTimeMilliseconds == 50
			}},
	} {
		m := roundTrip[Macro](t, c.in)
		if !c.check(m) {
			t.Errorf("%s decoded as %+v", c.in, m)
		}
		if m.IsOdd() || len(m.Oddities()) != 0 {
			t.Errorf("%s: odd %v", c.in, m.Oddities())
		}
	}
}

// Values hubgate cannot read: each is one Oddity naming where it is and
// what came, the field is left zero, everything else decodes, and the
// round trip gives back what came.
func TestOddEventShapes(t *testing.T) {
	for _, c := range []struct {
		in, path, want string
	}{
		{`{"eventType":"Type","typedPhrase":{"text":"hi"}}`, "typedPhrase", "a string"},
		{`{"eventType":"Type","typedPhrase":true}`, "typedPhrase", "a string"},
		{`{"eventType":"JoysticksMove","joystickLeftMoveX":"left"}`, "joystickLeftMoveX", "a number"},
		{`{"eventType":"Pause","holdTimeMilliseconds":[100]}`, "holdTimeMilliseconds", "a number"},
		{`{"eventType":"Pause","holdTimeMilliseconds":"NaN"}`, "holdTimeMilliseconds", "a number"},
		{`{"eventType":"Pause","holdTimeMilliseconds":"0x10"}`, "holdTimeMilliseconds", "a number"},
		{`{"eventType":"MouseMove","mouseMoveX":1e400}`, "mouseMoveX", "a number"},
		{`{"eventType":"MouseMove","mouseMoveX":"1e400"}`, "mouseMoveX", "a number"},
		{`{"eventType":9,"isCustomToggle":"yes"}`, "isCustomToggle", "a boolean"},
		{`{"eventType":"KeyPress","keys":{"a":1}}`, "keys", "a list of strings"},
		{`{"eventType":"KeyPress","keys":["a",["b"]]}`, "keys", "a list of strings"},
		{`{"eventType":10}`, "eventType", "an event type: a name or a number 0..9"},
		{`{"eventType":-1}`, "eventType", "an event type: a name or a number 0..9"},
		{`{"eventType":1.5}`, "eventType", "an event type: a name or a number 0..9"},
		{`{"eventType":true}`, "eventType", "an event type: a name or a number 0..9"},
		{`42`, "", "an object"},
		{`"KeyPress"`, "", "an object"},
		{`[{"eventType":"KeyPress"}]`, "", "an object"},
	} {
		e := roundTrip[MacroEvent](t, c.in)
		odd := e.Oddities()
		if len(odd) != 1 || odd[0].Path != c.path || odd[0].Want != c.want || odd[0].Got == "" {
			t.Errorf("%s: oddities %+v, want one at %q wanting %q", c.in, odd, c.path, c.want)
		}
		if c.path != "" && e.EventType == "" && c.path != "eventType" {
			t.Errorf("%s: the readable members were not read: %+v", c.in, e)
		}
	}
}

// One odd item costs only itself: the good macros of a profile stay
// usable, the device keeps its id when its profile is odd.
func TestOddItemsCostOnlyThemselves(t *testing.T) {
	good := `{"id":"1","name":"Space","commands":["space"],"events":[{"eventType":0,"keys":["space"],"holdTimeMilliseconds":"100"}]}`
	cfg := roundTrip[Configuration](t, `{"macros":[`+good+`,42,{"id":"3","name":"Broken","events":"oops"},{"id":"4","events":[{"eventType":"Pause","holdTimeMilliseconds":{}}]},null],"hotkeys":[{"x":1}]}`)
	if len(cfg.Macros) != 5 {
		t.Fatalf("macros %d", len(cfg.Macros))
	}
	usable := cfg.UsableMacros()
	if len(usable) != 2 || usable[0].ID != "1" || usable[1].ID != "" {
		t.Errorf("usable macros %+v", usable)
	}
	if cfg.Macros[2].Name != "Broken" || cfg.Macros[2].Events != nil {
		t.Errorf("the odd macro's readable members: %+v", cfg.Macros[2])
	}
	odd := cfg.Oddities()
	want := []Oddity{
		{Item: "macro", In: "macros[1]", Got: "42", Want: "an object"},
		{Item: `macro "3" ("Broken")`, In: "macros[2]", Path: "events", Got: `"oops"`, Want: "a list of objects"},
		{Item: `macro "4"`, In: "macros[3]", Path: "events[0].holdTimeMilliseconds", Got: "{}", Want: "a number"},
	}
	if !reflect.DeepEqual(odd, want) {
		t.Errorf("oddities\n got %+v\nwant %+v", odd, want)
	}
	if got := odd[2].Error(); got != `macro "4": macros[3].events[0].holdTimeMilliseconds: got {}, want a number` {
		t.Errorf("Error() = %s", got)
	}

	for _, c := range []struct{ in, path, want string }{
		{`{"id":"d1","isAutoListen":true,"currentProfile":42}`, "currentProfile", "an object"},
		{`{"id":"d1","isAutoListen":"true","currentProfile":{"id":"p","configuration":"x"}}`, "currentProfile.configuration", "an object"},
		{`{"id":"d1","isAutoListen":true,"currentProfile":{"id":"p","configuration":{"macros":{"id":"1"}}}}`, "currentProfile.configuration.macros", "a list of objects"},
		{`{"id":"d1","isAutoListen":1,"currentProfile":{"id":"p","configuration":{"macros":[` + good + `,{"events":[7]}]}}}`, "currentProfile.configuration.macros[1].events[0]", "an object"},
	} {
		d := roundTrip[UserDevice](t, c.in)
		if d.ID != "d1" || !d.IsAutoListen {
			t.Errorf("%s: device %+v", c.in, d)
		}
		odd := d.Oddities()
		if len(odd) != 1 || odd[0].Where() != c.path || odd[0].Want != c.want {
			t.Errorf("%s: oddities %+v, want one at %s", c.in, odd, c.path)
		}
		if p := d.CurrentProfile; p != nil && p.Configuration.Macros != nil {
			if u := p.Configuration.UsableMacros(); len(u) != 1 || u[0].ID != "1" {
				t.Errorf("%s: usable %+v", c.in, u)
			}
		}
	}
}

// A member read in another shape is written back as it came while its
// field is unchanged, and as the field's value once changed.
func TestConvertedMembersAfterAChange(t *testing.T) {
	var e MacroEvent
	in := `{"eventType":0,"holdTimeMilliseconds":"100","keys":"space","isKeyLatch":"true","typedPhrase":{"odd":1}}`
	if err := json.Unmarshal([]byte(in), &e); err != nil {
		t.Fatal(err)
	}
	if out, _ := json.Marshal(e); string(out) != in {
		t.Errorf("unchanged\n got %s\nwant %s", out, in)
	}
	e.EventType = EventKeyRelease
	e.HoldTimeMilliseconds = ptr(200.0)
	e.Keys = []string{"a", "b"}
	*e.IsKeyLatch = false // in place, through the pointer
	e.TypedPhrase = ptr("now typed")
	want := `{"eventType":"KeyRelease","holdTimeMilliseconds":200,"keys":["a","b"],"isKeyLatch":false,"typedPhrase":"now typed"}`
	if out, _ := json.Marshal(e); string(out) != want {
		t.Errorf("changed\n got %s\nwant %s", out, want)
	}
}

// FuzzDeviceRoundTrip: whatever JSON decodes as a UserDevice encodes to
// the same document, again byte for byte, and its oddities can be listed.
func FuzzDeviceRoundTrip(f *testing.F) {
	for _, s := range []string{
		`{"id":"d","currentProfile":{"id":"p","configuration":{"macros":[{"id":1,"events":[{"eventType":0,"holdTimeMilliseconds":"100"}]},42,{"events":"oops"}]}}}`,
		`{"id":"d","isAutoListen":"TRUE","currentProfile":7}`,
		`{"id":"d","currentProfile":{"configuration":{"hotkeys":{},"macros":[null,{"commands":"x","events":[null,5,{"keys":[1,null]}]}]}}}`,
		`[]`, `null`, `"d"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var d UserDevice
		// UnmarshalJSON itself, not json.Unmarshal: its own check of the
		// input must agree with json.Valid.
		if err := d.UnmarshalJSON(in); err != nil {
			if json.Valid(in) {
				t.Fatalf("valid JSON %s did not decode: %v", in, err)
			}
			return
		} else if !json.Valid(in) {
			t.Fatalf("invalid JSON %q decoded as %+v", in, d)
		}
		for _, o := range d.Oddities() {
			if o.Item == "" || o.Want == "" || len(o.Got) > 40 {
				t.Fatalf("oddity %+v", o)
			}
		}
		if p := d.CurrentProfile; p != nil {
			for _, m := range p.Configuration.UsableMacros() {
				if m.IsOdd() {
					t.Fatalf("usable odd macro %+v", m)
				}
			}
		}
		out, err := json.Marshal(d)
		if err != nil {
			t.Fatalf("%s decoded but does not encode: %v", in, err)
		}
		if same, err := jsonEqual(in, out); err != nil || !same {
			t.Fatalf("round trip changed the document (%v)\n in %s\nout %s", err, in, out)
		}
		var again UserDevice
		if err := json.Unmarshal(out, &again); err != nil {
			t.Fatalf("%s does not decode again: %v", out, err)
		}
		if out2, err := json.Marshal(again); err != nil || string(out) != string(out2) {
			t.Fatalf("second round trip\n first %s\nsecond %s (%v)", out, out2, err)
		}
	})
}

// The decoder's own check of its input agrees with json.Valid.
func TestInputCheckAgreesWithJSONValid(t *testing.T) {
	deep := strings.Repeat("[", maxDepth+2) + strings.Repeat("]", maxDepth+2)
	for _, in := range []string{
		`{}`, ` {"a" : [1, -0.5e+3, "x\u00e9\n\"", true, false, null, {}] } `, `{"a":"\uZZZZ"}`, `{"a":"\x"}`, `{"a":"` + "\x01" + `"}`,
		`{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":1e}`, `{"a":.5}`, `{"a":+1}`, `{"a":tru}`, `{"a":nul}`, `{"a" 1}`, `{"a":1,}`, `[1,]`, `[,1]`,
		`{"a":1}}`, `{"a":1} x`, `{1:2}`, `{"a":1 "b":2}`, `"\ud800"`, "\"\xff\"", `[` + deep + `]`, deep[1 : len(deep)-1], ``, `  `,
	} {
		var d UserDevice
		err := d.UnmarshalJSON([]byte(in))
		if valid := json.Valid([]byte(in)); (err == nil) != valid {
			t.Errorf("%.60q: json.Valid %v, decode error %v", in, valid, err)
		}
	}
}
