package pairing

import (
	"context"
	"fmt"
	"sync"
)

// Follower follows the paired device for a running daemon: the device its
// current hub client is for (the state file's at the start, then the one
// each Read found), and that device's token on every (re)connect, so that
// a token replaced by `hubgate pair --reuse` is picked up without a
// restart.
type Follower struct {
	store     SecretStore
	statePath string // "": DefaultStatePath
	mu        sync.Mutex
	id        string
}

// NewFollower follows from deviceID, the device of the first hub client.
func NewFollower(store SecretStore, statePath, deviceID string) *Follower {
	return &Follower{store: store, statePath: statePath, id: deviceID}
}

// Read reads the paired device from the state file again (after `pair`
// or `unpair`): the next device tokens are that device's. No state file
// is ErrNoState.
func (f *Follower) Read(context.Context) (deviceID, apiURL string, err error) {
	st, err := LoadState(f.statePath)
	if err != nil {
		return "", "", err
	}
	f.mu.Lock()
	f.id = st.DeviceID
	f.mu.Unlock()
	return st.DeviceID, st.APIURL, nil
}

// DeviceToken reads the committed pairing as a whole (ReadDeviceToken: the
// state file, its slot's token, the state file again) and gives its token
// only when that pairing is the followed device: a client of the previous
// device, reconnecting between a new pairing's commit and the daemon's
// switch to it (Read), waits instead of presenting the new device's token
// as its own.
func (f *Follower) DeviceToken(ctx context.Context) (string, error) {
	c, err := ReadDeviceToken(ctx, f.store, f.statePath)
	if err != nil {
		return "", fmt.Errorf("read the device token: %w", err)
	}
	f.mu.Lock()
	want := f.id
	f.mu.Unlock()
	if c.DeviceID != want {
		return "", fmt.Errorf("the paired device is now %s, not %s: 'hubgate pair' tells the daemon to switch (else restart it)", c.DeviceID, want)
	}
	return c.Token, nil
}
