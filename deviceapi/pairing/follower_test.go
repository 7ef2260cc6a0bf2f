package pairing_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/configs"
	"github.com/hubgate/hubgate/deviceapi/pairing"
)

// The follower gives the token of the device it follows only; after Read
// it follows the state file's device; no state file is ErrNoState.
func TestFollowerGivesTheFollowedDevicesTokenOnly(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.json")
	store := configs.NewMemoryStore()
	if err := store.Set(ctx, pairing.AccountDeviceToken, "token-of-b"); err != nil {
		t.Fatal(err)
	}
	if err := pairing.SaveState(path, pairing.State{DeviceID: "dev-b", APIURL: "http://127.0.0.1:1"}); err != nil {
		t.Fatal(err)
	}
	f := pairing.NewFollower(store, path, "dev-a")
	if _, err := f.DeviceToken(ctx); err == nil || !strings.Contains(err.Error(), "the paired device is now dev-b, not dev-a") {
		t.Fatalf("the token of another device: %v", err)
	}
	if id, apiURL, err := f.Read(ctx); err != nil || id != "dev-b" || apiURL != "http://127.0.0.1:1" {
		t.Fatalf("Read: %q %q %v", id, apiURL, err)
	}
	if tok, err := f.DeviceToken(ctx); err != nil || tok != "token-of-b" {
		t.Fatalf("the followed device's token: %q %v", tok, err)
	}
	gone := pairing.NewFollower(store, filepath.Join(t.TempDir(), "none.json"), "dev-a")
	if _, _, err := gone.Read(ctx); !errors.Is(err, pairing.ErrNoState) {
		t.Errorf("Read without a state file: %v", err)
	}
}
