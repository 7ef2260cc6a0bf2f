package pairing

// The commit protocol: a pairing lives in two stores, the state file
// (device id, token id...) and the secret store (refresh token, device
// token), and no operation spans both. So the secrets of a pairing are
// kept in one of two slots, two sets of accounts: slot A is the accounts'
// base names (what every pairing before slots used), slot B the same
// names with the suffix ".b". The state file names its slot
// (SlotA when it does not say). A new pairing:
//
//  1. writes every secret into the slot the committed pairing does NOT use
//     (nothing that is committed reads it);
//  2. writes the new state file, naming that slot, with one atomic rename
//     (internal/atomicfile): this is the single commit point;
//  3. deletes the other slot, the previous pairing's secrets.
//
// A kill -9 before the rename leaves the old state file, whose slot was
// never touched: the old pairing. After it, the new state file, whose slot
// was complete before the rename: the new pairing. What a kill leaves in
// the unused slot is deleted by the next pairing before it starts
// (Collect); only `pair` collects, under its lock (a daemon starting
// meanwhile could otherwise delete the slot a pairing is writing). A
// reader takes the state file, then its slot's token, then the state file
// again (ReadCommitted): a pairing committed in between is seen and read
// anew, so a device id never goes with another device's token.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
)

// Slots of the secret store (see the commit protocol above).
const (
	SlotA = ""  // the base account names
	SlotB = "b" // the base names + ".b"
)

// SlotAccount is the account of base in slot.
func SlotAccount(base, slot string) string {
	if slot == SlotA {
		return base
	}
	return base + "." + slot
}

// OtherSlot is the slot a new pairing writes while slot is committed.
func OtherSlot(slot string) string {
	if slot == SlotB {
		return SlotA
	}
	return SlotB
}

// CommitOptions configures Result.Commit.
type CommitOptions struct {
	// Store receives the secrets. Required.
	Store SecretStore
	// RefreshTokenAccount and DeviceTokenAccount are the base names of
	// the two slotted accounts. Zero: AccountRefreshToken and
	// AccountDeviceToken.
	RefreshTokenAccount, DeviceTokenAccount string
	// Committed is the slot of the pairing the state file holds now (SlotA
	// for a state file that names none). When none is paired, pass SlotB:
	// the new pairing then takes SlotA, the base names, as before slots.
	Committed string
	// Extra are secrets outside the slots (`hubgate pair`: a client secret
	// typed on stdin), written before the commit point and put back as
	// they were when it is not reached.
	Extra []Secret
	// Save writes the new state file naming slot, atomically: the commit
	// point. Required.
	Save func(slot string) error
	// Step, when set, is called before each write of the protocol with
	// its name ("secret <account>", "state", "delete <account>"): a test
	// hook that lets a test stop the process at each instant.
	Step func(name string)
}

// Commit stores r through the commit protocol: r's secrets into the slot
// the committed pairing does not use, then o.Save (the commit point), then
// the other slot is deleted. It returns the slot of the new pairing. A
// failure before the commit point deletes what was written to the new
// slot and puts back o.Extra, and is a *StepError naming what was created
// on the service (holding an *UndoError when that cleanup failed too). A
// failure to delete the previous slot after the commit is not an error of
// the pairing: it is returned as leftover (the next pairing collects it).
func (r *Result) Commit(ctx context.Context, o CommitOptions) (slot string, leftover error, err error) {
	if o.Store == nil || o.Save == nil {
		return "", nil, errors.New("pairing: CommitOptions needs Store and Save")
	}
	if o.RefreshTokenAccount == "" {
		o.RefreshTokenAccount = AccountRefreshToken
	}
	if o.DeviceTokenAccount == "" {
		o.DeviceTokenAccount = AccountDeviceToken
	}
	if r.Token == nil {
		return "", nil, errors.New("pairing: Commit of a Result without a device token")
	}
	step := func(name string) {
		if o.Step != nil {
			o.Step(name)
		}
	}
	slot = OtherSlot(o.Committed)
	bases := []string{o.RefreshTokenAccount, o.DeviceTokenAccount}
	values := []string{r.RefreshToken, r.Token.Token}
	fail := func(err error) (string, error, error) {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), undoTimeout)
		defer cancel()
		if derr := deleteAccounts(uctx, o.Store, slotAccounts(bases, slot)); derr != nil {
			err = errors.Join(err, &UndoError{derr})
		}
		return "", nil, &StepError{Step: "storing the secrets", Created: append([]string(nil), r.Created...), Err: err}
	}
	for i, base := range bases {
		acct := SlotAccount(base, slot)
		step("secret " + acct)
		if err := o.Store.Set(ctx, acct, values[i]); err != nil {
			return fail(fmt.Errorf("store %q: %w", acct, err))
		}
	}
	var undoExtra func() error
	if len(o.Extra) > 0 {
		for _, x := range o.Extra {
			step("secret " + x.Account)
		}
		u, err := storeSecrets(ctx, o.Store, o.Extra)
		undoExtra = u
		if err != nil {
			if uerr := undoExtra(); uerr != nil {
				err = errors.Join(err, uerr)
			}
			return fail(err)
		}
	}
	step("state")
	if err := o.Save(slot); err != nil {
		err = fmt.Errorf("writing the state file: %w", err)
		if undoExtra != nil {
			if uerr := undoExtra(); uerr != nil {
				err = errors.Join(err, uerr)
			}
		}
		return fail(err)
	}
	for _, acct := range slotAccounts(bases, o.Committed) {
		step("delete " + acct)
	}
	leftover = deleteAccounts(ctx, o.Store, slotAccounts(bases, o.Committed))
	return slot, leftover, nil
}

// Collect deletes the secrets of the slots no committed pairing uses:
// the other slot of committed, or both when paired is false. It returns
// the accounts it found and deleted (an account that holds nothing is one
// whose Delete fails with fs.ErrNotExist). `pair` calls it before it starts,
// under its lock, to remove what an interrupted pairing left.
func Collect(ctx context.Context, store SecretStore, bases []string, paired bool, committed string) ([]string, error) {
	var accounts []string
	if !paired {
		accounts = append(slotAccounts(bases, SlotA), slotAccounts(bases, SlotB)...)
	} else {
		accounts = slotAccounts(bases, OtherSlot(committed))
	}
	var removed []string
	var errs []error
	for _, a := range accounts {
		err := store.Delete(ctx, a)
		switch {
		case err == nil:
			removed = append(removed, a)
		case !errors.Is(err, fs.ErrNotExist):
			errs = append(errs, fmt.Errorf("delete %q: %w", a, err))
		}
	}
	return removed, errors.Join(errs...)
}

// Committed is what ReadCommitted read: a device and its token, from one
// committed pairing.
type Committed struct {
	DeviceID, APIURL, Slot string
	Token                  string // a secret
}

// ReadCommitted reads the committed pairing's device and device token
// consistently: the state (load), the token of its slot, then the state
// again; when another pairing was committed in between, it starts over
// (a few times). load returns the device id, the api url and the slot of
// the state file.
func ReadCommitted(ctx context.Context, store SecretStore, deviceTokenAccount string, load func() (deviceID, apiURL, slot string, err error)) (Committed, error) {
	const tries = 5
	for range tries {
		id, api, slot, err := load()
		if err != nil {
			return Committed{}, err
		}
		acct := SlotAccount(deviceTokenAccount, slot)
		tok, terr := store.Get(ctx, acct)
		id2, api2, slot2, err := load()
		if err != nil {
			return Committed{}, err
		}
		if id2 != id || slot2 != slot || api2 != api {
			continue // a pairing committed meanwhile: read it
		}
		if terr != nil {
			return Committed{}, fmt.Errorf("the device token of the paired device %s (%q): %w", id, acct, terr)
		}
		return Committed{DeviceID: id, APIURL: api, Slot: slot, Token: tok}, nil
	}
	return Committed{}, errors.New("the pairing kept changing while it was read; try again")
}

// ReadDeviceToken is ReadCommitted of the state file at statePath ("":
// DefaultStatePath) and the device token's account: what the daemon
// presents to the hub. No state file is ErrNoState.
func ReadDeviceToken(ctx context.Context, store SecretStore, statePath string) (Committed, error) {
	return ReadCommitted(ctx, store, AccountDeviceToken, func() (string, string, string, error) {
		st, err := LoadState(statePath)
		if err != nil {
			return "", "", "", err
		}
		return st.DeviceID, st.APIURL, st.SecretSlot, nil
	})
}

func slotAccounts(bases []string, slot string) []string {
	out := make([]string, len(bases))
	for i, b := range bases {
		out[i] = SlotAccount(b, slot)
	}
	return out
}

// deleteAccounts deletes each account; one that holds nothing is fine.
func deleteAccounts(ctx context.Context, store SecretStore, accounts []string) error {
	var errs []error
	for _, a := range accounts {
		if err := store.Delete(ctx, a); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("delete %q: %w", a, err))
		}
	}
	return errors.Join(errs...)
}
