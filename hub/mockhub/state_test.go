package mockhub_test

import (
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/hub/mockhub"
)

// TestStateRoundTrip: what one mock wrote, the next one knows: devices
// with their profile and verification, device tokens (a disabled one stays
// disabled), access and refresh tokens; the live flags start false. The
// file is private and holds no secret in clear.
func TestStateRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	s1, ts1 := newMock(t, mockhub.Config{StateFile: path})
	a := signIn(t, ts1.URL)
	var dev deviceapi.UserDevice
	call(t, "POST", ts1.URL+"/api/Device/userDevices/new/mock-controller?name=Kept", a.AccessToken, nil, &dev)
	var tok, old deviceapi.DeviceToken
	call(t, "POST", ts1.URL+"/api/Device/userDevices/"+dev.ID+"/tokens", a.AccessToken, nil, &old)
	call(t, "POST", ts1.URL+"/api/Device/userDevices/"+dev.ID+"/tokens", a.AccessToken, nil, &tok)
	if _, err := s1.DisableToken(old.ID); err != nil {
		t.Fatal(err)
	}
	profile := deviceapi.Profile{ID: "p", Name: "Garden", Configuration: deviceapi.Configuration{Macros: []deviceapi.Macro{{ID: "m", Name: "Water", Commands: []string{"water"}}}}}
	if _, err := s1.PushProfile(dev.ID, profile); err != nil {
		t.Fatal(err)
	}
	hc, err := rawDial(t, ts1.URL, hubHeaders(tok.Token))
	if err != nil {
		t.Fatal(err)
	}
	hc.invoke("1", "VerifySelf")
	hc.next(wait)
	hc.invoke("2", "DeviceStartedListening")
	hc.next(wait)

	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("state file %v %v", fi, err)
	}
	b, _ := os.ReadFile(path)
	for _, sec := range []string{a.AccessToken, a.RefreshToken, tok.Token, old.Token} {
		if strings.Contains(string(b), sec) {
			t.Errorf("the state file holds a secret in clear (%d chars)", len(sec))
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	hc.close()
	s1.Close()

	s2, ts2 := newMock(t, mockhub.Config{StateFile: path})
	got, ok := s2.Device(dev.ID)
	if !ok || !got.IsVerified || got.IsConnected || got.IsListening || got.CurrentProfile == nil || got.CurrentProfile.Name != "Garden" || got.NameOverride != "Kept" {
		t.Fatalf("the device after a restart: %+v", got)
	}
	// The user's access token still works, and its refresh token rotates.
	var again deviceapi.UserDevice
	if st, _, body := call(t, "GET", ts2.URL+"/api/Device/userDevices/"+dev.ID, a.AccessToken, nil, &again); st != 200 || again.ID != dev.ID {
		t.Errorf("the access token after a restart: %d %s", st, body)
	}
	if r := token(t, ts2.URL, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {a.RefreshToken}}, true, mockhub.DefaultClientSecret); r.status != 200 {
		t.Errorf("the refresh token after a restart: %d %s", r.status, r.raw)
	}
	// The device token connects; the disabled one does not.
	hc2, err := rawDial(t, ts2.URL, hubHeaders(tok.Token))
	if err != nil {
		t.Fatalf("the device token after a restart: %v", err)
	}
	hc2.invoke("1", "VerifySelf")
	if f, err := hc2.next(wait); err != nil || f.Error != "" {
		t.Errorf("VerifySelf after a restart: %+v %v", f, err)
	}
	if _, err := rawDial(t, ts2.URL, hubHeaders(old.Token)); err == nil {
		t.Error("the disabled token connects after a restart")
	}
	if err := s2.PushMacro(dev.ID, "water"); err != nil {
		t.Errorf("a macro of the kept profile: %v", err)
	}
	infos := s2.Devices()
	if len(infos) != 1 || len(infos[0].Tokens) != 2 || !infos[0].Tokens[0].IsDisabled || infos[0].Tokens[1].IsDisabled {
		t.Errorf("devices after a restart: %+v", infos)
	}
}

// TestStateWriteFailureLeavesTheFile: a write that fails (the folder is
// gone, a file in its place) leaves the last good file whole, is
// journaled, and the mock runs on; the next good write has everything.
func TestStateWriteFailureLeavesTheFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	os.Mkdir(dir, 0o700)
	path := filepath.Join(dir, "state.json")
	s, _ := newMock(t, mockhub.Config{StateFile: path})
	s.CreateDevice("", "first")
	before, _ := os.ReadFile(path)
	away := dir + ".away"
	if err := os.Rename(dir, away); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(dir, nil, 0o600) // the folder is now a file: every write fails
	s.CreateDevice("", "second")
	failed := false
	for _, e := range s.Events(0) {
		failed = failed || e.Source == mockhub.SourceMock && e.Action == "state-write-failed" && e.Error != ""
	}
	if !failed {
		t.Error("the failed write is not in the journal")
	}
	os.Remove(dir)
	os.Rename(away, dir)
	if after, _ := os.ReadFile(path); string(after) != string(before) || strings.Contains(string(after), "second") {
		t.Errorf("the state file changed after a failed write:\n%s", after)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	s.CreateDevice("", "third")
	if after, _ := os.ReadFile(path); !strings.Contains(string(after), "second") || !strings.Contains(string(after), "third") {
		t.Errorf("the next write lacks a device:\n%s", after)
	}
}

// TestStateCorruptFileIsAnError: New refuses a file it cannot trust, and
// leaves it alone.
func TestStateCorruptFileIsAnError(t *testing.T) {
	digest := strings.Repeat("ab", 32)
	for name, content := range map[string]string{
		"empty":             ``,
		"not JSON":          `{"version":1,`,
		"trailing data":     `{"version":1} {}`,
		"other version":     `{"version":2}`,
		"unknown member":    `{"version":1,"users":[]}`,
		"device without id": `{"version":1,"devices":[{"device":{"id":""},"deviceTypeId":"t","tokens":[]}]}`,
		"bad digest":        `{"version":1,"devices":[{"device":{"id":"d"},"deviceTypeId":"t","tokens":[{"id":"k","sha256":"xyz"}]}]}`,
		"repeated token":    `{"version":1,"devices":[{"device":{"id":"d"},"deviceTypeId":"t","tokens":[{"id":"k","sha256":"` + digest + `"},{"id":"k","sha256":"` + digest + `"}]}]}`,
		"orphan access":     `{"version":1,"accessTokens":[{"sha256":"` + digest + `","grantId":"g","expires":"2030-01-01T00:00:00Z"}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.json")
			os.WriteFile(path, []byte(content), 0o600)
			_, err := mockhub.New(mockhub.Config{StateFile: path})
			if !errors.Is(err, mockhub.ErrCorruptState) || !strings.Contains(err.Error(), path) {
				t.Errorf("New = %v, want ErrCorruptState naming the file", err)
			}
			if b, _ := os.ReadFile(path); string(b) != content {
				t.Errorf("the file was changed: %s", b)
			}
		})
	}
	// A missing file is created at once (empty); a missing folder fails now.
	path := filepath.Join(t.TempDir(), "state.json")
	s, err := mockhub.New(mockhub.Config{StateFile: path})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	var st map[string]json.RawMessage
	if b, err := os.ReadFile(path); err != nil || json.Unmarshal(b, &st) != nil || string(st["version"]) != "1" {
		t.Errorf("the new state file: %s %v", b, err)
	}
	if _, err := mockhub.New(mockhub.Config{StateFile: filepath.Join(t.TempDir(), "missing", "state.json")}); err == nil {
		t.Error("a state file in a missing folder was accepted")
	}
}
