package mockcli

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/hub/mockhub/mockhubtest"
)

// A payload nested 5,000 deep in the journal prints bounded, in every
// form of `mock events`, and says what it cut.
func TestEventsPrintADeepPayloadBounded(t *testing.T) {
	m := mockhubtest.Start(t, mockhubtest.Options{})
	dev, _, err := m.CreateDevice(mockhub.DefaultDeviceTypeID, "deep")
	if err != nil {
		t.Fatal(err)
	}
	deep := strings.Repeat(`{"a":`, 5000) + `1` + strings.Repeat("}", 5000)
	resp, err := http.Post(m.URL+"/mock/devices/"+dev.ID+"/settings", "application/json", strings.NewReader(deep))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !strings.Contains(string(m.Events(0)[len(m.Events(0))-1].Payload), strings.Repeat(`{"a":`, 100)) {
		t.Fatalf("the journal does not hold the deep payload: %.200s", m.Events(0)[len(m.Events(0))-1].Payload)
	}
	for _, args := range [][]string{{"events", "--json"}, {"events"}} {
		out, err := run(t, Options{}, nil, append(args, "--url", m.URL)...)
		if err != nil {
			t.Fatalf("%v: %v\n%.300s", args, err, out)
		}
		if len(out) > 32<<10 {
			t.Errorf("%v printed %d bytes", args, len(out))
		}
		if !strings.Contains(out, "nested deeper than 64 levels") {
			t.Errorf("%v does not say what it cut: %.300s", args, out)
		}
		if args[len(args)-1] == "--json" && !json.Valid([]byte(out)) {
			t.Errorf("%v: not JSON: %.300s", args, out)
		}
	}
}
