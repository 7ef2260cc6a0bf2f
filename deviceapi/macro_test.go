package deviceapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
)

// vendorFile is the shape of the vendor's sample data files.
type vendorFile struct {
	Description string            `json:"description"`
	Steps       []json.RawMessage `json:"steps"`
}

func readVendorSteps(t testing.TB, name string) []json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "vendor", name))
	if err != nil {
		t.Fatal(err)
	}
	var f vendorFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Steps) == 0 {
		t.Fatalf("%s: no steps", name)
	}
	return f.Steps
}

func compact(t testing.TB, raw []byte) string {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// Every macro of the vendor's sample data comes back byte for byte (after
// whitespace is removed): same members, same order, same nulls and [].
func TestVendorSampleMacrosRoundTripExactly(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "vendor", "*.json"))
	if err != nil || len(files) != 5 {
		t.Fatalf("vendor files %v %v", files, err)
	}
	for _, path := range files {
		for i, raw := range readVendorSteps(t, filepath.Base(path)) {
			var m Macro
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatalf("%s step %d: %v", path, i, err)
			}
			out, err := json.Marshal(m)
			if err != nil {
				t.Fatalf("%s step %d: %v", path, i, err)
			}
			if want := compact(t, raw); string(out) != want {
				t.Errorf("%s step %d:\n got %s\nwant %s", path, i, out, want)
			}
			if len(m.Extra) != 0 {
				t.Errorf("%s step %d: untyped members %v", path, i, m.Extra)
			}
			for j, e := range m.Events {
				if len(e.Extra) != 0 {
					t.Errorf("%s step %d event %d: untyped members %v", path, i, j, e.Extra)
				}
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }

// The typed fields of the vendor's events, field by field.
func TestVendorSampleEventsDecode(t *testing.T) {
	space := readVendorSteps(t, "basicKeys.json")[0]
	var m Macro
	if err := json.Unmarshal(space, &m); err != nil {
		t.Fatal(err)
	}
	if m.ID != "1" || m.Name != "Space" || !reflect.DeepEqual(m.Commands, []string{"space"}) || len(m.Events) != 1 {
		t.Fatalf("macro %+v", m)
	}
	e := m.Events[0]
	if e.EventType != EventKeyPress || !reflect.DeepEqual(e.Keys, []string{"space"}) || e.HoldTimeMilliseconds == nil || *e.HoldTimeMilliseconds != 0 ||
		e.IsKeyLatch == nil || *e.IsKeyLatch {
		t.Errorf("KeyPress fields %+v", e)
	}
	for name, p := range map[string]any{
		"typedPhrase": e.TypedPhrase, "mouseMoveX": e.MouseMoveX, "mouseMoveY": e.MouseMoveY, "mouseMoveScroll": e.MouseMoveScroll,
		"joystickLeftMoveX": e.JoystickLeftMoveX, "joystickLeftMoveY": e.JoystickLeftMoveY, "joystickRightMoveX": e.JoystickRightMoveX,
		"joystickRightMoveY": e.JoystickRightMoveY, "outputSpeech": e.OutputSpeech, "audioFileUrl": e.AudioFileURL,
		"deviceTypeCustomActionId": e.DeviceTypeCustomActionID, "deviceTypeId": e.DeviceTypeID, "additionalInputContent": e.AdditionalInputContent,
	} {
		if !reflect.ValueOf(p).IsNil() {
			t.Errorf("%s: want nil (null), got %v", name, reflect.ValueOf(p).Elem())
		}
	}
	if _, ok := e.CustomAction(); ok {
		t.Error("a KeyPress with a null deviceTypeCustomActionId is not a custom action")
	}

	steps := readVendorSteps(t, "fps_controller_complex.json")
	cases := []struct {
		step  int
		check func(m Macro) bool
	}{
		{0, func(m Macro) bool {
			e := m.Events[0]
			return m.ID == "1" && e.EventType == EventJoystickMove && e.Is(EventJoysticksMove) && e.Is(EventJoystickMove) &&
				*e.JoystickLeftMoveY == 100 && e.JoystickLeftMoveX == nil && e.JoystickRightMoveX == nil
		}},
		{1, func(m Macro) bool {
			return m.Commands != nil && len(m.Commands) == 0 && m.Events[0].EventType == EventPause && *m.Events[0].HoldTimeMilliseconds == 2000
		}},
		{4, func(m Macro) bool {
			return len(m.Events) == 2 && m.Events[0].EventType == EventKeyToggle && m.Events[1].Keys[0] == "gamepad_button_3" &&
				m.Events[1].HoldTimeMilliseconds == nil
		}},
		{5, func(m Macro) bool { return *m.Events[0].JoystickLeftMoveX == -100 }},
		{6, func(m Macro) bool { return m.Events[0].JoystickLeftMoveY != nil && *m.Events[0].JoystickLeftMoveY == 0 }},
	}
	for _, c := range cases {
		var m Macro
		if err := json.Unmarshal(steps[c.step], &m); err != nil {
			t.Fatal(err)
		}
		if !c.check(m) {
			t.Errorf("fps_controller_complex step %d decoded as %+v / %+v", c.step, m, m.Events)
		}
	}
}

// Round trips of shapes the sample data does not show: each input comes
// back exactly.
func TestMacroEventRoundTripKeepsWhatCame(t *testing.T) {
	for _, in := range []string{
		`{}`,
		`null`,
		`{"eventType":null}`,
		`{"eventType":"Type","typedPhrase":"water the plants"}`,
		`{"typedPhrase":"x","eventType":"Type"}`,
		`{"keys":[]}`,
		`{"keys":null}`,
		`{"keys":["a",null,"b"]}`,
		`{"keys":[""]}`,
		`{"holdTimeMilliseconds":0,"isKeyLatch":false,"isCustomToggle":null,"isCustomRelease":true}`,
		`{"EventType":"Type","TypedPhrase":"case as sent"}`,
		`{"eventType":"Type","EventType":"Other"}`,
		`{"z":1,"eventType":"DeviceTypeCustomAction","a":[1,{"b":null}],"deviceTypeCustomActionId":"lights","additionalInputContent":"kitchen"}`,
		`{"mouseMoveX":-5,"mouseMoveY":12.5,"mouseMoveZ":null,"mouseMoveScroll":3}`,
		`{"joystickLeftMoveX":-100,"joystickLeftMoveY":100,"joystickRightMoveX":0,"joystickRightMoveY":null}`,
		`{"eventType":"PlayAudio","audioFileUrl":"https://example.com/a.mp3","outputSpeech":"done"}`,
		`{"eventType":"Type","text":"legacy","typedPhrase":null}`,
	} {
		var e MacroEvent
		if err := json.Unmarshal([]byte(in), &e); err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		out, err := json.Marshal(e)
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if string(out) != in {
			t.Errorf("round trip\n got %s\nwant %s", out, in)
		}
	}
}

func TestMacroRoundTripKeepsWhatCame(t *testing.T) {
	for _, in := range []string{
		`{"id":"1","name":"Space","commands":[],"events":[]}`,
		`{"id":"1"}`,
		`{"commands":null,"events":null,"id":null,"name":null}`,
		`{"events":[null,{}]}`,
		`{"id":"m","extra":{"nested":[true]},"commands":["a",null]}`,
	} {
		var m Macro
		if err := json.Unmarshal([]byte(in), &m); err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if out, err := json.Marshal(m); err != nil || string(out) != in {
			t.Errorf("round trip\n got %s (%v)\nwant %s", out, err, in)
		}
	}
	// A device with a profile, nested all the way.
	dev := `{"id":"d","currentProfile":{"id":"p","configuration":{"macros":[{"id":"1","events":[{"eventType":"Type","typedPhrase":"hi"}]}],"hotkeys":[null],"future":1}},"isVerified":null,"ownerId":"u"}`
	var d UserDevice
	if err := json.Unmarshal([]byte(dev), &d); err != nil {
		t.Fatal(err)
	}
	if out, err := json.Marshal(d); err != nil || string(out) != dev {
		t.Errorf("device round trip\n got %s (%v)\nwant %s", out, err, dev)
	}
	if d.CurrentProfile.Configuration.Macros[0].Events[0].Text() != "hi" {
		t.Errorf("nested event %+v", d.CurrentProfile.Configuration.Macros[0].Events[0])
	}
}

// Changes made after decoding are written, in place of what came; values
// built in Go follow their tags.
func TestEncodingChangedAndBuiltValues(t *testing.T) {
	var e MacroEvent
	if err := json.Unmarshal([]byte(`{"eventType":"Type","typedPhrase":null,"keys":["a",null],"x":1}`), &e); err != nil {
		t.Fatal(err)
	}
	e.TypedPhrase = ptr("hi")
	e.Keys = []string{"b"}
	e.OutputSpeech = ptr("said")
	e.Extra["y"] = json.RawMessage(`2`)
	delete(e.Extra, "x")
	out, _ := json.Marshal(e)
	if want := `{"eventType":"Type","typedPhrase":"hi","keys":["b"],"outputSpeech":"said","y":2}`; string(out) != want {
		t.Errorf("changed event\n got %s\nwant %s", out, want)
	}

	built := MacroEvent{EventType: EventType, TypedPhrase: ptr("water the plants")}
	if out, _ := json.Marshal(built); string(out) != `{"eventType":"Type","typedPhrase":"water the plants"}` {
		t.Errorf("built event %s", out)
	}
	m := Macro{ID: "m", Events: []MacroEvent{{EventType: EventStopOutputs, Extra: map[string]json.RawMessage{"eventType": json.RawMessage(`"dup"`), "k": json.RawMessage(`true`)}}}}
	if out, _ := json.Marshal(m); string(out) != `{"id":"m","name":"","commands":null,"events":[{"eventType":"StopOutputs","k":true}]}` {
		t.Errorf("built macro %s", out)
	}
}

// Only JSON that is not JSON is an error; a value of the wrong type is an
// Oddity (lenient_test.go).
func TestMacroEventDecodeErrorsAreSyntaxErrors(t *testing.T) {
	for _, in := range []string{`{"typedPhrase":}`, `{"keys":["a"}`, `[1`, ``} {
		var e MacroEvent
		var syntax *json.SyntaxError
		if err := json.Unmarshal([]byte(in), &e); !errors.As(err, &syntax) {
			t.Errorf("%s: err %v, want a syntax error", in, err)
		}
		if !reflect.DeepEqual(e, MacroEvent{}) {
			t.Errorf("%s: a failed decode left %+v", in, e)
		}
	}
}

func TestMacroEventText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"eventType":"Type","typedPhrase":"water the plants"}`, "water the plants"},
		{`{"eventType":"Type","typedPhrase":"new","text":"old"}`, "new"},
		{`{"eventType":"Type","typedPhrase":null,"text":"legacy text"}`, "legacy text"},
		{`{"eventType":"Type","value":"legacy value"}`, "legacy value"},
		{`{"eventType":"Type","typedText":"legacy typedText"}`, "legacy typedText"},
		{`{"eventType":"Type","text":5,"value":"v"}`, "v"},
		{`{"eventType":"Type","typedPhrase":""}`, ""},
		{`{"eventType":"Type"}`, ""},
	} {
		var e MacroEvent
		if err := json.Unmarshal([]byte(c.in), &e); err != nil {
			t.Fatal(err)
		}
		if got := e.Text(); got != c.want {
			t.Errorf("%s: Text() = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestMacroEventCustomAction(t *testing.T) {
	for _, c := range []struct {
		in   string
		want CustomAction
		ok   bool
	}{
		{`{"eventType":"DeviceTypeCustomAction","deviceTypeCustomActionId":"ask","deviceTypeId":"dt-1","additionalInputContent":"water the plants","isCustomToggle":true,"isCustomRelease":false}`,
			CustomAction{ID: "ask", DeviceTypeID: "dt-1", Content: "water the plants", Toggle: true}, true},
		{`{"eventType":"DeviceTypeCustomAction","deviceTypeCustomActionId":null,"isCustomRelease":true}`, CustomAction{Release: true}, true},
		{`{"eventType":"KeyPress","deviceTypeCustomActionId":"x"}`, CustomAction{ID: "x"}, true},
		{`{"eventType":"KeyPress","deviceTypeCustomActionId":null,"additionalInputContent":null}`, CustomAction{}, false},
		{`{"eventType":"KeyPress","deviceTypeCustomActionId":""}`, CustomAction{}, false},
	} {
		var e MacroEvent
		if err := json.Unmarshal([]byte(c.in), &e); err != nil {
			t.Fatal(err)
		}
		got, ok := e.CustomAction()
		if got != c.want || ok != c.ok {
			t.Errorf("%s: CustomAction() = %+v, %v; want %+v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestEventTypeSpellings(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{EventJoystickMove, EventJoysticksMove, true},
		{EventJoysticksMove, EventJoystickMove, true},
		{EventJoystickMove, EventJoystickMove, true},
		{EventType, EventType, true},
		{EventType, "type", false},
		{EventJoystickMove, EventMouseMove, false},
	} {
		if got := SameEventType(c.a, c.b); got != c.same {
			t.Errorf("SameEventType(%q, %q) = %v", c.a, c.b, got)
		}
	}
	for _, k := range append(MacroEventTypes, EventJoystickMove) {
		if !KnownEventType(k) {
			t.Errorf("%s unknown", k)
		}
	}
	if KnownEventType("Joystick") || KnownEventType("") || KnownEventType("keypress") {
		t.Error("an unknown type is known")
	}
}

// jsonEqual reports whether a and b are the same JSON document: same
// members (order aside), same values; numbers equal as written or as
// float64 (a typed number is re-encoded by Go: 1.0 comes back as 1).
func jsonEqual(a, b []byte) (bool, error) {
	decode := func(raw []byte) (any, error) {
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		var v any
		err := d.Decode(&v)
		return v, err
	}
	va, err := decode(a)
	if err != nil {
		return false, err
	}
	vb, err := decode(b)
	if err != nil {
		return false, err
	}
	return sameValue(va, vb), nil
}

func sameValue(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			w, ok := b[k]
			if !ok || !sameValue(v, w) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !sameValue(a[i], b[i]) {
				return false
			}
		}
		return true
	case json.Number:
		b, ok := b.(json.Number)
		if !ok {
			return false
		}
		if a == b {
			return true
		}
		fa, errA := strconv.ParseFloat(string(a), 64)
		fb, errB := strconv.ParseFloat(string(b), 64)
		return errA == nil && errB == nil && fa == fb
	default:
		return a == b
	}
}

// FuzzMacroRoundTrip: all valid JSON decodes as a Macro (odd or not),
// encodes without error to the same JSON document, and a second round
// trip changes no byte.
func FuzzMacroRoundTrip(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "vendor", "*.json"))
	for _, path := range files {
		for _, raw := range readVendorSteps(f, filepath.Base(path)) {
			f.Add([]byte(raw))
		}
	}
	for _, s := range []string{
		`{"id":"1","commands":[],"events":[{"eventType":"Type","typedPhrase":"water the plants"}]}`,
		`{"id":"2","events":[{"eventType":"DeviceTypeCustomAction","deviceTypeCustomActionId":"ask","additionalInputContent":"hi","isCustomToggle":null}]}`,
		`{"ID":"x","Events":[null,{"EventType":"a","eventtype":"b"}],"commands":["a",null]}`,
		`null`, `{}`, `{"events":[{"keys":[null]}],"x":1e400}`,
		`{"id":7,"commands":"jump","events":[{"eventType":0,"holdTimeMilliseconds":"100","isKeyLatch":"TRUE"},{"eventType":"4","joystickLeftMoveX":"-100"}]}`,
		`{"id":"8","events":[42,{"eventType":12},{"eventType":"Type","typedPhrase":{"t":1}}]}`, `[1,2]`, `"macro"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var m Macro
		if err := json.Unmarshal(in, &m); err != nil {
			if json.Valid(in) {
				t.Fatalf("valid JSON %s did not decode: %v", in, err)
			}
			return
		}
		if odd := m.Oddities(); m.IsOdd() != (len(odd) > 0) {
			t.Fatalf("IsOdd %v, oddities %v", m.IsOdd(), odd)
		}
		out, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("%s decoded but does not encode: %v", in, err)
		}
		same, err := jsonEqual(in, out)
		if err != nil {
			t.Fatalf("%s -> %s: %v", in, out, err)
		}
		if !same {
			t.Fatalf("round trip changed the document\n in %s\nout %s", in, out)
		}
		var again Macro
		if err := json.Unmarshal(out, &again); err != nil {
			t.Fatalf("%s does not decode again: %v", out, err)
		}
		out2, err := json.Marshal(again)
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("second round trip\n first %s\nsecond %s (%v)", out, out2, err)
		}
	})
}

// The member scanner finds the boundaries of every kind of value,
// escapes and nesting included.
func TestMembersOfTrickyObjects(t *testing.T) {
	in := " {\n \"x\" : \"a\\\"}{[,\" , \"eventType\":\"Type\",\"n\":[{\"a\":\"]\"},[1,2]],\"k\\u0065y\":-1.5e3,\"t\":true,\n\"z\":null,\"typedPhrase\":\"\\u00e9\\n\"}\t"
	var e MacroEvent
	if err := json.Unmarshal([]byte(in), &e); err != nil {
		t.Fatal(err)
	}
	if e.EventType != EventType || e.Text() != "é\n" || string(e.Extra["x"]) != `"a\"}{[,"` || string(e.Extra["n"]) != `[{"a":"]"},[1,2]]` ||
		string(e.Extra["key"]) != "-1.5e3" || string(e.Extra["t"]) != "true" || string(e.Extra["z"]) != "null" {
		t.Fatalf("decoded %+v extra %q", e, e.Extra)
	}
	out, _ := json.Marshal(e)
	if want := `{"x":"a\"}{[,","eventType":"Type","n":[{"a":"]"},[1,2]],"key":-1.5e3,"t":true,"z":null,"typedPhrase":"é\n"}`; string(out) != want {
		t.Errorf("encoded\n got %s\nwant %s", out, want)
	}
	for _, bad := range []string{`{"a":}`, `{"a":1`, `{"a" 1}`, ``, ` `} {
		if err := e.UnmarshalJSON([]byte(bad)); err == nil {
			t.Errorf("%q decoded", bad)
		}
	}
}

// TestDeviceTokenUnderEitherName: a token answer is read from `token`, or
// from `deviceToken` as one vendor sample reads it; `token` wins when both
// are there. The answer re-encodes with every member it came with (one
// read under `deviceToken` is also written as `token`).
func TestDeviceTokenUnderEitherName(t *testing.T) {
	for _, tc := range []struct{ in, want, out string }{
		{`{"id":"t1","userDeviceId":"d1","token":"abc","isDisabled":false}`, "abc", ""},
		{`{"id":"t1","userDeviceId":"d1","deviceToken":"xyz","isDisabled":false}`, "xyz",
			`{"id":"t1","userDeviceId":"d1","deviceToken":"xyz","isDisabled":false,"token":"xyz"}`},
		{`{"id":"t1","token":"abc","deviceToken":"xyz"}`, "abc", ""},
		{`{"id":"t1","deviceToken":null}`, "", ""},
	} {
		if tc.out == "" {
			tc.out = tc.in
		}
		var tok DeviceToken
		if err := json.Unmarshal([]byte(tc.in), &tok); err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if tok.Token != tc.want {
			t.Errorf("%s: token %q, want %q", tc.in, tok.Token, tc.want)
		}
		out, err := json.Marshal(tok)
		if err != nil || string(out) != tc.out {
			t.Errorf("%s re-encodes as %s (%v)", tc.in, out, err)
		}
	}
}
