package pairing_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/configs"
	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/deviceapi/pairing"
)

var errBroken = errors.New("store broken")

// faultyStore is a MemoryStore whose Set of one account, or every
// Delete, fails.
type faultyStore struct {
	*configs.MemoryStore
	failSet     string
	failDeletes bool
}

func (f *faultyStore) Set(ctx context.Context, account, value string) error {
	if account == f.failSet {
		return errBroken
	}
	return f.MemoryStore.Set(ctx, account, value)
}

func (f *faultyStore) Delete(ctx context.Context, account string) error {
	if f.failDeletes {
		return errBroken
	}
	return f.MemoryStore.Delete(ctx, account)
}

func get(t *testing.T, s pairing.SecretStore, account string) string {
	t.Helper()
	v, err := s.Get(context.Background(), account)
	if errors.Is(err, configs.ErrSecretNotFound) {
		return "<none>"
	}
	if err != nil {
		t.Fatalf("get %s: %v", account, err)
	}
	return v
}

// world is the two stores of a pairing: the secret store and a state
// "file" (the committed device and slot).
type world struct {
	store     *configs.MemoryStore
	device    string // "" : nothing paired
	slot      string
	saveFails bool
}

func newWorld(*testing.T) *world { return &world{store: configs.NewMemoryStore()} }

// commit pairs device with its tokens through the protocol (steps, when
// not nil, collects the Step names).
func (w *world) commit(t *testing.T, device string, steps *[]string) error {
	t.Helper()
	res := &pairing.Result{
		Token:        &deviceapi.DeviceToken{ID: "t-" + device, Token: "token-" + device},
		RefreshToken: "refresh-" + device,
		Created:      []string{"device " + device},
	}
	committed := w.slot
	if w.device == "" {
		committed = pairing.SlotB
	}
	_, _, err := res.Commit(context.Background(), pairing.CommitOptions{
		Store: w.store, RefreshTokenAccount: "refresh", DeviceTokenAccount: "device",
		Committed: committed,
		Save: func(slot string) error {
			if w.saveFails {
				return errors.New("disk full")
			}
			w.device, w.slot = device, slot
			return nil
		},
		Step: func(s string) {
			if steps != nil {
				*steps = append(*steps, s)
			}
		},
	})
	return err
}

// read is what a daemon reads: the committed device and its token.
func (w *world) read(t *testing.T) pairing.Committed {
	t.Helper()
	c, err := pairing.ReadCommitted(context.Background(), w.store, "device", func() (string, string, string, error) {
		if w.device == "" {
			return "", "", "", errors.New("not paired")
		}
		return w.device, "https://api", w.slot, nil
	})
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return c
}

func TestCommitAlternatesSlotsAndRemovesThePreviousPairing(t *testing.T) {
	w := newWorld(t)
	var steps []string
	if err := w.commit(t, "d1", &steps); err != nil {
		t.Fatal(err)
	}
	// A first pairing takes the base names, as before slots.
	if w.slot != pairing.SlotA || get(t, w.store, "device") != "token-d1" || get(t, w.store, "refresh") != "refresh-d1" {
		t.Fatalf("first pairing: slot %q, device %q", w.slot, get(t, w.store, "device"))
	}
	if want := []string{"secret refresh", "secret device", "state", "delete refresh.b", "delete device.b"}; !slices.Equal(steps, want) {
		t.Errorf("steps %q, want %q", steps, want)
	}
	for i, dev := range []string{"d2", "d3"} {
		if err := w.commit(t, dev, nil); err != nil {
			t.Fatal(err)
		}
		wantSlot := []string{pairing.SlotB, pairing.SlotA}[i]
		other := pairing.OtherSlot(wantSlot)
		if w.slot != wantSlot || w.read(t).Token != "token-"+dev {
			t.Fatalf("%s: slot %q, read %+v", dev, w.slot, w.read(t))
		}
		if get(t, w.store, pairing.SlotAccount("device", other)) != "<none>" || get(t, w.store, pairing.SlotAccount("refresh", other)) != "<none>" {
			t.Errorf("%s: the previous pairing's secrets remain", dev)
		}
	}
}

// A failure before the commit point leaves the old pairing whole and the
// new slot empty.
func TestCommitFailureKeepsTheOldPairing(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(w *world, fs *faultyStore)
	}{
		{"a secret write fails", func(w *world, fs *faultyStore) { fs.failSet = "device.b" }},
		{"the state file cannot be written", func(w *world, fs *faultyStore) { w.saveFails = true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			if err := w.commit(t, "old", nil); err != nil {
				t.Fatal(err)
			}
			fs := &faultyStore{MemoryStore: w.store}
			tc.setup(w, fs)
			res := &pairing.Result{Token: &deviceapi.DeviceToken{ID: "t", Token: "token-new"}, RefreshToken: "refresh-new", Created: []string{"device new"}}
			_, _, err := res.Commit(context.Background(), pairing.CommitOptions{
				Store: fs, RefreshTokenAccount: "refresh", DeviceTokenAccount: "device",
				Committed: w.slot,
				Extra:     []pairing.Secret{{Account: "client", Value: "new-client"}},
				Save: func(slot string) error {
					if w.saveFails {
						return errors.New("disk full")
					}
					w.device, w.slot = "new", slot
					return nil
				},
			})
			var se *pairing.StepError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), "device new") {
				t.Fatalf("err = %v, want a StepError naming what was created", err)
			}
			if c := w.read(t); c.DeviceID != "old" || c.Token != "token-old" {
				t.Errorf("after the failure: %+v, want the old pairing", c)
			}
			for _, a := range []string{"device.b", "refresh.b", "client"} {
				if v := get(t, w.store, a); v != "<none>" {
					t.Errorf("%s holds %q after the failure", a, v)
				}
			}
		})
	}
}

// Killed at any step, what remains is the old pairing or the new one, and
// the reader never pairs a device with another device's token; Collect
// then removes what the interrupted pairing left.
func TestCommitInterruptedAtEachStep(t *testing.T) {
	var all []string
	probe := newWorld(t)
	probe.commit(t, "old", nil)
	probe.commit(t, "new", &all)
	// A Step hook that panics at step i stands for the kill: nothing
	// after it runs. (cmd/hubgate's sweep kills the real binary.)
	for i, name := range all {
		t.Run("killed before "+name, func(t *testing.T) {
			w := newWorld(t)
			w.commit(t, "old", nil)
			res := &pairing.Result{Token: &deviceapi.DeviceToken{ID: "t", Token: "token-new"}, RefreshToken: "refresh-new"}
			n := 0
			func() {
				defer func() { recover() }()
				res.Commit(context.Background(), pairing.CommitOptions{
					Store: w.store, RefreshTokenAccount: "refresh", DeviceTokenAccount: "device",
					Committed: w.slot,
					Save:      func(slot string) error { w.device, w.slot = "new", slot; return nil },
					Step: func(string) {
						if n == i {
							panic("killed")
						}
						n++
					},
				})
			}()
			c := w.read(t)
			if c.Token != "token-"+c.DeviceID {
				t.Fatalf("device %s with token %q", c.DeviceID, c.Token)
			}
			removed, err := pairing.Collect(context.Background(), w.store, []string{"refresh", "device"}, true, w.slot)
			if err != nil {
				t.Fatal(err)
			}
			other := pairing.OtherSlot(w.slot)
			for _, a := range []string{"refresh", "device"} {
				if v := get(t, w.store, pairing.SlotAccount(a, other)); v != "<none>" {
					t.Errorf("after Collect (removed %v), %s still holds %q", removed, pairing.SlotAccount(a, other), v)
				}
			}
			if c2 := w.read(t); c2 != c {
				t.Errorf("Collect changed the committed pairing: %+v -> %+v", c, c2)
			}
		})
	}
}

// A pairing committed between the reader's two looks at the state is
// read anew, never mixed.
func TestReadCommittedRereadsAPairingCommittedMeanwhile(t *testing.T) {
	w := newWorld(t)
	w.commit(t, "old", nil)
	loads := 0
	c, err := pairing.ReadCommitted(context.Background(), w.store, "device", func() (string, string, string, error) {
		loads++
		if loads == 2 { // after the token of "old" was read
			w.commit(t, "new", nil)
		}
		return w.device, "https://api", w.slot, nil
	})
	if err != nil || c.DeviceID != "new" || c.Token != "token-new" || loads != 4 {
		t.Fatalf("read %+v after %d loads (err %v), want device new with its token", c, loads, err)
	}
}

func TestCollectWithoutAPairingRemovesBothSlots(t *testing.T) {
	w := newWorld(t)
	w.commit(t, "d1", nil)
	w.commit(t, "d2", nil)
	w.store.Set(context.Background(), "device", "junk")
	removed, err := pairing.Collect(context.Background(), w.store, []string{"refresh", "device"}, false, "")
	if err != nil || !slices.Contains(removed, "device") || !slices.Contains(removed, "device.b") {
		t.Fatalf("removed %v, err %v", removed, err)
	}
	if _, err := pairing.Collect(context.Background(), &faultyStore{MemoryStore: w.store, failDeletes: true}, []string{"device"}, false, ""); !errors.Is(err, errBroken) {
		t.Errorf("a failing delete: %v", err)
	}
}
