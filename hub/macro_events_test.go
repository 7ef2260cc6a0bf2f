package hub

import (
	"bytes"
	"encoding/json"
	"testing"
)

// DeviceCommand arguments as the vendor's clients and sample data show
// them (docs/deviceapi.md): one argument or two, macros with ids
// like "1", "commands": [], every vendor field null, members hubgate does
// not know. Each decodes without error, and the macro encodes back to the
// argument as it came (the journal keeps that encoding).
func TestDeviceCommandAsTheAppSendsIt(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		cmd   string
		macro string // "" for none
		text  string // the macro's first event's Text()
	}{
		{"one argument (dotnet and browser samples)", []string{`"water the plants"`}, "water the plants", "", ""},
		{"Type macro", []string{`"water"`, `{"id":"1","name":"Water","commands":["water"],"events":[{"eventType":"Type","typedPhrase":"water the plants"}]}`},
			"water", "1", "water the plants"},
		{"vendor KeyPress with every field null", []string{`"space"`, `{"id":"1","name":"Space","commands":["space"],"events":[{"eventType":"KeyPress","keys":["space"],` +
			`"holdTimeMilliseconds":0,"isKeyLatch":false,"typedPhrase":null,"mouseMoveX":null,"mouseMoveY":null,"mouseMoveScroll":null,"joystickLeftMoveX":null,` +
			`"joystickLeftMoveY":null,"joystickRightMoveX":null,"joystickRightMoveY":null,"outputSpeech":null,"audioFileUrl":null,"deviceTypeCustomActionId":null,` +
			`"deviceTypeId":null,"additionalInputContent":null}]}`}, "space", "1", ""},
		{"commands [] and a JoystickMove", []string{`"run"`, `{"id":"2","name":"Run","commands":[],"events":[{"eventType":"JoystickMove","joystickLeftMoveY":100}]}`}, "run", "2", ""},
		{"unknown members everywhere", []string{`"ask"`, `{"id":"3","createdDate":"2026-01-01","events":[{"eventType":"DeviceTypeCustomAction",` +
			`"deviceTypeCustomActionId":"ask-agent","additionalInputContent":"summarise","futureField":{"a":[1,null]},"isCustomToggle":null}],"owner":{"id":7}}`, `{"extra":"argument"}`},
			"ask", "3", ""},
		{"legacy text member", []string{`"hello"`, `{"id":"m","events":[{"eventType":"Type","text":"hi there"}]}`}, "hello", "m", "hi there"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := Event{Target: "DeviceCommand", Kind: KindDeviceCommand}
			for _, a := range tc.args {
				e.Args = append(e.Args, json.RawMessage(a))
			}
			decodeEvent(&e)
			if e.DecodeErr != nil || e.Command != tc.cmd {
				t.Fatalf("decoded %q, err %v", e.Command, e.DecodeErr)
			}
			if tc.macro == "" {
				if e.Macro != nil {
					t.Fatalf("macro %+v from one argument", e.Macro)
				}
				return
			}
			if e.Macro == nil || e.Macro.ID != tc.macro || len(e.Macro.Events) != 1 || e.Macro.Events[0].Text() != tc.text {
				t.Fatalf("macro %+v", e.Macro)
			}
			out, err := json.Marshal(e.Macro)
			var want bytes.Buffer
			json.Compact(&want, []byte(tc.args[1]))
			if err != nil || string(out) != want.String() {
				t.Fatalf("macro re-encodes as\n%s (%v)\nwant\n%s", out, err, want.String())
			}
		})
	}

	// A macro whose vendor field has a type no client sends is kept as it
	// came, with the oddity noted in it: never an error of the event,
	// never a panic.
	in := `{"id":"1","events":[{"eventType":"Type","typedPhrase":{"text":"x"}}]}`
	e := Event{Target: "DeviceCommand", Kind: KindDeviceCommand, Args: []json.RawMessage{json.RawMessage(`"type"`), json.RawMessage(in)}}
	decodeEvent(&e)
	if e.Command != "type" || e.Macro == nil || e.DecodeErr != nil || !e.Macro.IsOdd() {
		t.Fatalf("odd macro: %q %+v %v", e.Command, e.Macro, e.DecodeErr)
	}
	if odd := e.Macro.Oddities(); len(odd) != 1 || odd[0].Path != "events[0].typedPhrase" || odd[0].Item != `macro "1"` {
		t.Fatalf("oddities %+v", odd)
	}
	if out, err := json.Marshal(e.Macro); err != nil || string(out) != in {
		t.Fatalf("odd macro re-encodes as %s (%v)", out, err)
	}
}
