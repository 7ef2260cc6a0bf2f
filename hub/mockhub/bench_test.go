package mockhub_test

import (
	"testing"

	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/hub/mockhub/mockhubtest"
)

// BenchmarkPushCommand measures a DeviceCommand from PushCommand to its
// arrival at a WebSocket client, one at a time.
func BenchmarkPushCommand(b *testing.B) {
	s, ts := newMock(b, mockhub.Config{})
	dev, tok, _ := s.CreateDevice("", "")
	c, err := rawDial(b, ts.URL, hubHeaders(tok.Token))
	if err != nil {
		b.Fatal(err)
	}
	mockhubtest.WaitEvent(b, s, 0, "the connection", action("connected", dev.ID))
	for b.Loop() {
		if err := s.PushCommand(dev.ID, "bench", nil); err != nil {
			b.Fatal(err)
		}
		if f, err := c.next(wait); err != nil || f.Target != "DeviceCommand" {
			b.Fatalf("%+v %v", f, err)
		}
	}
}

// BenchmarkVerifySelf measures a hub invocation round trip.
func BenchmarkVerifySelf(b *testing.B) {
	s, ts := newMock(b, mockhub.Config{})
	_, tok, _ := s.CreateDevice("", "")
	c, err := rawDial(b, ts.URL, hubHeaders(tok.Token))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		c.invoke("1", "VerifySelf")
		if f, err := c.next(wait); err != nil || f.Type != 3 {
			b.Fatalf("%+v %v", f, err)
		}
	}
}

// BenchmarkSignIn measures the authorization page plus the code exchange.
func BenchmarkSignIn(b *testing.B) {
	_, ts := newMock(b, mockhub.Config{})
	for b.Loop() {
		signIn(b, ts.URL)
	}
}
