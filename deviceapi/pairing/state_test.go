package pairing

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func sampleState() State {
	return State{
		DeviceID:     "dev-1",
		DeviceName:   "desk",
		APIURL:       "https://api.example.com",
		DeviceTypeID: "type-1",
		TokenID:      "tok-1",
		PairedAt:     time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC),
	}
}

func TestStateRoundTripAndPermissions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "hubgate", "state.json")
	if err := SaveState(path, sampleState()); err != nil {
		t.Fatal(err)
	}
	got, err := LoadState(path)
	if err != nil {
		t.Fatal(err)
	}
	want := sampleState()
	want.Version = StateVersion
	if *got != want {
		t.Fatalf("got %+v want %+v", *got, want)
	}
	if runtime.GOOS != "windows" {
		fi, _ := os.Stat(path)
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("file mode %v", fi.Mode().Perm())
		}
		di, _ := os.Stat(filepath.Dir(path))
		if di.Mode().Perm() != 0o700 {
			t.Errorf("dir mode %v", di.Mode().Perm())
		}
	}
	raw, _ := os.ReadFile(path)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"device_id", "device_name", "api_url", "device_type_id", "token_id", "paired_at", "version"} {
		if _, ok := m[k]; !ok {
			t.Errorf("state file lacks %q: %s", k, raw)
		}
	}
	if len(m) != 7 {
		t.Errorf("unexpected members in %s", raw)
	}
}

func TestSaveStateReplacesAtomicallyAndLeavesNoTempFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	s := sampleState()
	if err := SaveState(path, s); err != nil {
		t.Fatal(err)
	}
	s.DeviceID = "dev-2"
	if err := SaveState(path, s); err != nil {
		t.Fatal(err)
	}
	got, err := LoadState(path)
	if err != nil || got.DeviceID != "dev-2" {
		t.Fatalf("%+v %v", got, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("files left in the directory: %v", names)
	}
}

func TestSaveStateFailureKeepsTheOldFile(t *testing.T) {
	if runtime.GOOS == "windows" || os.Geteuid() == 0 {
		t.Skip("needs a non-root user on a POSIX system for a read-only directory")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	if err := SaveState(path, sampleState()); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o500)
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
	s := sampleState()
	s.DeviceID = "dev-2"
	if err := SaveState(path, s); err == nil {
		t.Fatal("saved into a read-only directory")
	}
	got, err := LoadState(path)
	if err != nil || got.DeviceID != "dev-1" {
		t.Fatalf("old state damaged: %+v %v", got, err)
	}
}

// A rename over a directory fails after the temp file was written: the
// temp file must not be left behind.
func TestSaveStateCleansUpItsTempFileOnFailure(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path, "x"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := SaveState(path, sampleState()); err == nil {
		t.Fatal("renamed over a non-empty directory")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("a temp file was left behind: %d entries", len(entries))
	}
}

func TestLoadStateMissingCorruptAndIncomplete(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	_, err := LoadState(path)
	if !errors.Is(err, ErrNoState) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing: %v", err)
	}
	os.WriteFile(path, []byte("{not json"), 0o600)
	if _, err := LoadState(path); err == nil || errors.Is(err, ErrNoState) || !strings.Contains(err.Error(), path) {
		t.Fatalf("corrupt: %v", err)
	}
	os.WriteFile(path, []byte(`{"device_name":"x","future_member":1}`), 0o600)
	_, err = LoadState(path)
	if err == nil || !strings.Contains(err.Error(), "device_id") || !strings.Contains(err.Error(), "api_url") {
		t.Fatalf("incomplete: %v", err)
	}
	os.WriteFile(path, []byte(`{"device_id":"d","api_url":"https://a","future_member":1}`), 0o600)
	if s, err := LoadState(path); err != nil || s.DeviceID != "d" {
		t.Fatalf("unknown member: %+v %v", s, err)
	}
}

func TestSaveStateRequiresDeviceAndAPI(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	if err := SaveState(path, State{DeviceID: "d"}); err == nil {
		t.Error("saved without api url")
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Error("a refused save wrote a file")
	}
}

func TestRemoveState(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	if err := RemoveState(path); !errors.Is(err, ErrNoState) {
		t.Fatalf("remove missing: %v", err)
	}
	SaveState(path, sampleState())
	if err := RemoveState(path); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadState(path); !errors.Is(err, ErrNoState) {
		t.Fatalf("after remove: %v", err)
	}
}

func TestDefaultStatePathHonoursXDGConfigHome(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("XDG_CONFIG_HOME is the Linux rule")
	}
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	p, err := DefaultStatePath()
	if err != nil || p != filepath.Join(dir, "hubgate", "state.json") {
		t.Fatalf("%q %v", p, err)
	}
	if err := SaveState("", sampleState()); err != nil {
		t.Fatal(err)
	}
	if s, err := LoadState(""); err != nil || s.DeviceID != "dev-1" {
		t.Fatalf("%+v %v", s, err)
	}
	if err := RemoveState(""); err != nil {
		t.Fatal(err)
	}
}
