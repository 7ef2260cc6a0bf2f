package mockhub

import (
	"testing"
	"time"

	"github.com/hubgate/hubgate/deviceapi"
)

// BenchmarkJournalPush measures journaling one push (its arguments made
// into a redacted payload, entered in a full ring): the journal's cost on
// every hub frame.
func BenchmarkJournalPush(b *testing.B) {
	j := newJournal(DefaultMaxEvents, DefaultMaxJournalBytes, time.Now)
	args := []any{"water the plants", deviceapi.Macro{ID: "m-1", Name: "Water", Commands: []string{"water the plants"},
		Events: []deviceapi.MacroEvent{{EventType: "Type"}, {EventType: deviceapi.EventKeyPress, Keys: []string{"ControlLeft", "S"}}}}}
	for range DefaultMaxEvents {
		j.add(Event{Source: SourceHub, Direction: DirectionOut, Action: "DeviceCommand", Payload: payload(args)})
	}
	for b.Loop() {
		j.add(Event{Source: SourceHub, Direction: DirectionOut, Action: "DeviceCommand", DeviceID: "d", Payload: payload(args)})
	}
}
