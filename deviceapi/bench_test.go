package deviceapi

import (
	"encoding/json"
	"testing"
)

// benchMacroJSON is a macro as the vendor's sample data sends it: a
// KeyPress with every field null, and a Type event.
const benchMacroJSON = `{"id":"1","name":"Space","commands":["space"],"events":[{"eventType":"KeyPress","keys":["space"],"holdTimeMilliseconds":0,"isKeyLatch":false,"typedPhrase":null,"mouseMoveX":null,"mouseMoveY":null,"mouseMoveScroll":null,"joystickLeftMoveX":null,"joystickLeftMoveY":null,"joystickRightMoveX":null,"joystickRightMoveY":null,"outputSpeech":null,"audioFileUrl":null,"deviceTypeCustomActionId":null,"deviceTypeId":null,"additionalInputContent":null},{"eventType":"Type","typedPhrase":"water the plants"}]}`

// BenchmarkMacroDecode is the cost of one macro through json.Unmarshal
// (the REST client's way).
func BenchmarkMacroDecode(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		var m Macro
		if err := json.Unmarshal([]byte(benchMacroJSON), &m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMacroDecodeDirect is the hub's cost of one DeviceCommand's
// macro: the argument is already known to be valid JSON, so the hub calls
// the decoder itself, without encoding/json's scan before it.
func BenchmarkMacroDecodeDirect(b *testing.B) {
	raw := []byte(benchMacroJSON)
	b.ReportAllocs()
	for b.Loop() {
		var m Macro
		if err := m.UnmarshalJSON(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMacroEncode is the journal's cost of recording that macro.
func BenchmarkMacroEncode(b *testing.B) {
	var m Macro
	if err := json.Unmarshal([]byte(benchMacroJSON), &m); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(m); err != nil {
			b.Fatal(err)
		}
	}
}

// benchUnityMacroJSON is the same macro as the Unity models type it: the
// event type as the enum's number and numbers in strings, the decoder's
// converting path.
const benchUnityMacroJSON = `{"id":1,"name":"Space","commands":["space"],"events":[{"eventType":0,"keys":["space"],"holdTimeMilliseconds":"0","isKeyLatch":"false","typedPhrase":null,"mouseMoveX":null,"mouseMoveY":null,"mouseMoveScroll":null,"joystickLeftMoveX":null,"joystickLeftMoveY":null,"joystickRightMoveX":null,"joystickRightMoveY":null,"outputSpeech":null,"audioFileUrl":null,"deviceTypeCustomActionId":null,"deviceTypeId":null,"additionalInputContent":null},{"eventType":2,"typedPhrase":"water the plants"}]}`

// BenchmarkMacroDecodeUnityShaped is BenchmarkMacroDecode on the Unity
// shape.
func BenchmarkMacroDecodeUnityShaped(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		var m Macro
		if err := json.Unmarshal([]byte(benchUnityMacroJSON), &m); err != nil || m.IsOdd() {
			b.Fatal(err, m.Oddities())
		}
	}
}
