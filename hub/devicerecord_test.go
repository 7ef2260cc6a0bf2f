package hub

import (
	"testing"
	"testing/synctest"
	"time"
)

// profileJSON is a current profile with one macro of the given name.
func profileJSON(id, macro string) string {
	return `{"id":"` + id + `","name":"P","configuration":{"macros":[{"id":"1","name":"` + macro + `","commands":["` + macro + ` now"],"events":[]}]}}`
}

// macroOf is the name of the first macro of a record's profile ("" when
// the record has none).
func macroOf(e Event) string {
	if e.Device == nil || e.Device.CurrentProfile == nil || len(e.Device.CurrentProfile.Configuration.Macros) == 0 {
		return ""
	}
	return e.Device.CurrentProfile.Configuration.Macros[0].Name
}

// The device records of VerifySelf and GetLatestDevice reach the consumer
// as events, in order before the commands that follow them, at every
// connect: a profile changed between two connections arrives with the
// second. The probe's GetLatestDevice is delivered only when its answer
// changed.
func TestWireDeviceRecordsAtEveryConnect(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPeer(t, testDevice, testToken)
		p.verifyProfile.Store(profileJSON("p1", "Water Plants"))
		cfg := wireConfig(t, p, nil)
		c := start(t, must(New(cfg)))
		pc := p.nextConn(t, wait)
		waitState(t, c.Client, "connected", wait, isStatus(StatusConnected))
		pc.send(invocation("DeviceCommand", `"water plants"`, `null`))

		verify := nextAny(t, c.Client, wait)
		if verify.Kind != KindDeviceRecord || verify.Target != "VerifySelf" || macroOf(verify) != "Water Plants" ||
			verify.Device.ID != testDevice || len(verify.Args) != 1 || verify.Session == 0 || verify.Seq != 0 {
			t.Fatalf("first event %s %q %+v, want VerifySelf's device with its profile", verify.Kind, verify.Target, verify.Device)
		}
		// GetLatestDevice answered no profile: delivered as it came (the
		// consumer decides what a record without a profile means).
		latest := nextAny(t, c.Client, wait)
		if latest.Kind != KindDeviceRecord || latest.Target != "GetLatestDevice" || latest.Device == nil ||
			latest.Device.CurrentProfile != nil || latest.Seq != 0 {
			t.Fatalf("second event %s %q %+v, want GetLatestDevice's device", latest.Kind, latest.Target, latest.Device)
		}
		// The records are not numbered: the first invocation is number 1.
		if e := nextAny(t, c.Client, wait); e.Kind != KindDeviceCommand || e.Command != "water plants" || e.Seq != 1 {
			t.Fatalf("third event %s %q seq %d, want the command, seq 1", e.Kind, e.Command, e.Seq)
		}

		// The person edits the profile while the device is offline.
		p.verifyProfile.Store(profileJSON("p2", "Feed The Cat"))
		p.latestProfile.Store(profileJSON("p2", "Feed The Cat"))
		pc.abort()
		p.nextConn(t, wait)
		verify2 := nextAny(t, c.Client, wait)
		if verify2.Kind != KindDeviceRecord || verify2.Target != "VerifySelf" || macroOf(verify2) != "Feed The Cat" || verify2.Session == verify.Session {
			t.Fatalf("after the reconnect %s %q session %d: %+v, want VerifySelf's new profile on the new connection",
				verify2.Kind, verify2.Target, verify2.Session, verify2.Device)
		}
		if e := nextAny(t, c.Client, wait); e.Kind != KindDeviceRecord || e.Target != "GetLatestDevice" || macroOf(e) != "Feed The Cat" {
			t.Fatalf("after the reconnect %s %q %+v, want GetLatestDevice's new profile", e.Kind, e.Target, e.Device)
		}
		if d := c.Device(); d == nil || d.CurrentProfile == nil || d.CurrentProfile.ID != "p2" {
			t.Errorf("Device() = %+v, want the new profile", d)
		}
	})
}

func TestWireProbeDeliversOnlyAChangedRecord(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPeer(t, testDevice, testToken)
		p.pingEvery.Store(int64(50 * time.Millisecond))
		p.verifyProfile.Store(profileJSON("p1", "Water Plants"))
		p.latestProfile.Store(profileJSON("p1", "Water Plants"))
		cfg := wireConfig(t, p, nil)
		cfg.ProbeInterval = time.Second
		c := start(t, must(New(cfg)))
		pc := p.nextConn(t, wait)
		waitState(t, c.Client, "connected", wait, isStatus(StatusConnected))
		for _, method := range []string{"VerifySelf", "GetLatestDevice"} {
			if e := nextAny(t, c.Client, wait); e.Kind != KindDeviceRecord || e.Target != method || macroOf(e) != "Water Plants" {
				t.Fatalf("event %s %q %+v, want %s's record", e.Kind, e.Target, e.Device, method)
			}
		}
		// Probes answer the same device: none is delivered, the
		// command after them is the next event.
		time.Sleep(2*cfg.ProbeInterval + cfg.ProbeInterval/4)
		synctest.Wait()
		probes := 0
		for _, r := range pc.records() {
			if r.Target == "GetLatestDevice" {
				probes++
			}
		}
		if probes < 4 {
			t.Fatalf("%d GetLatestDevice calls, want the resync and probes", probes)
		}
		pc.send(invocation("DeviceCommand", `"after the probes"`))
		if e := nextAny(t, c.Client, wait); e.Kind != KindDeviceCommand || e.Command != "after the probes" {
			t.Fatalf("event %s %q, want the command: an unchanged probe answer was delivered", e.Kind, e.Target)
		}
		// The profile changes without an update: the next probe delivers it.
		p.latestProfile.Store(profileJSON("p2", "Feed The Cat"))
		if e := nextAny(t, c.Client, wait); e.Kind != KindDeviceRecord || e.Target != "GetLatestDevice" || macroOf(e) != "Feed The Cat" {
			t.Fatalf("event %s %q %+v, want the probe's changed record", e.Kind, e.Target, e.Device)
		}
	})
}

// A VerifySelf answer whose profile is of an unexpected shape costs
// neither the connection nor the record: the device is delivered with
// no profile (the consumer keeps what it had), its oddity noted.
func TestWireOddProfileInVerifySelfKeepsTheConnection(t *testing.T) {
	for _, profile := range []string{`5`, `"Garden"`, `[]`, `{"id":"p","configuration":{"macros":"x"}}`} {
		synctest.Test(t, func(t *testing.T) {
			p := newPeer(t, testDevice, testToken)
			p.verifyProfile.Store(profile)
			c := start(t, must(New(wireConfig(t, p, nil))))
			pc := p.nextConn(t, wait)
			waitState(t, c.Client, "connected", wait, isStatus(StatusConnected))
			e := nextAny(t, c.Client, wait)
			if e.Kind != KindDeviceRecord || e.Target != "VerifySelf" || e.Device == nil || e.Device.ID != testDevice || macroOf(e) != "" {
				t.Fatalf("%s: event %s %q %+v, want VerifySelf's device without a usable profile", profile, e.Kind, e.Target, e.Device)
			}
			pc.send(invocation("DeviceCommand", `"still here"`))
			if e := nextEvent(t, c.Client, wait); e.Command != "still here" {
				t.Fatalf("%s: event %+v, want the command", profile, e)
			}
			if s := c.Stats(); s.Sessions != 1 || s.Attempts != 1 {
				t.Errorf("%s: stats %+v: the odd profile cost the connection", profile, s)
			}
		})
	}
}
