package pairing

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// SecretStore is where Keep writes a pairing's secrets
// (configs.SecretStore satisfies it). Get and Delete of an account that
// holds nothing return an error matching KeepOptions.NotFound; errors
// never contain a secret.
type SecretStore interface {
	Get(ctx context.Context, account string) (string, error)
	Set(ctx context.Context, account, value string) error
	Delete(ctx context.Context, account string) error
}

// Secret is one value for one account of a SecretStore. Value is a secret.
type Secret struct{ Account, Value string }

// KeepOptions configures Result.Keep.
type KeepOptions struct {
	// Store receives the secrets. Required.
	Store SecretStore
	// NotFound is the error (errors.Is) Store returns for an account that
	// holds nothing (configs.ErrSecretNotFound). Required.
	NotFound error
	// RefreshTokenAccount and DeviceTokenAccount name the accounts of the
	// refresh token and the device token. Required.
	RefreshTokenAccount, DeviceTokenAccount string
	// Extra are more secrets written in the same step, after the two
	// tokens (`hubgate pair`: a client secret typed on stdin).
	Extra []Secret
}

// UndoError is a failure to put an account back as it was before Keep:
// the machine may keep some secrets of the failed pairing.
type UndoError struct{ Err error }

func (e *UndoError) Error() string { return e.Err.Error() }
func (e *UndoError) Unwrap() error { return e.Err }

// undoTimeout bounds an undo: it runs on a fresh context, since the
// caller's may be what failed.
const undoTimeout = 30 * time.Second

// Keep writes the refresh token, the device token and o.Extra to o.Store
// in one undoable step, once every remote step of the pairing succeeded.
// Each account's previous value is read before it is written. When a read
// or a write fails, what this step wrote is undone at once (the previous
// values put back, accounts that held nothing deleted) and the error is a
// *StepError ("storing the secrets") naming what was created on the
// service; it holds an *UndoError when the undo failed too. On success
// undo does the same, for a caller whose next local step (a state file)
// fails; it returns nil or an *UndoError, and does nothing a second time.
func (r *Result) Keep(ctx context.Context, o KeepOptions) (undo func() error, err error) {
	if o.Store == nil || o.NotFound == nil || o.RefreshTokenAccount == "" || o.DeviceTokenAccount == "" {
		return nil, errors.New("pairing: KeepOptions needs Store, NotFound and both account names")
	}
	if r.Token == nil {
		return nil, errors.New("pairing: Keep of a Result without a device token")
	}
	writes := append([]Secret{
		{o.RefreshTokenAccount, r.RefreshToken},
		{o.DeviceTokenAccount, r.Token.Token},
	}, o.Extra...)
	undo, err = storeSecrets(ctx, o.Store, o.NotFound, writes)
	if err != nil {
		if uerr := undo(); uerr != nil {
			err = errors.Join(err, uerr)
		}
		return nil, &StepError{Step: "storing the secrets", Created: append([]string(nil), r.Created...), Err: err}
	}
	return undo, nil
}

// storeSecrets writes each secret, remembering the previous values; undo
// puts back what was there before (or deletes what was not).
func storeSecrets(ctx context.Context, store SecretStore, notFound error, writes []Secret) (undo func() error, err error) {
	type before struct {
		account, value string
		had            bool
	}
	var done []before
	undo = func() error {
		var errs []error
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), undoTimeout)
		defer cancel()
		for i := len(done) - 1; i >= 0; i-- {
			b := done[i]
			var err error
			if b.had {
				err = store.Set(uctx, b.account, b.value)
			} else if err = store.Delete(uctx, b.account); errors.Is(err, notFound) {
				err = nil
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("could not undo the write of %q (run 'hubgate unpair'): %w", b.account, err))
			}
		}
		done = nil
		if len(errs) == 0 {
			return nil
		}
		return &UndoError{errors.Join(errs...)}
	}
	for _, w := range writes {
		old, gerr := store.Get(ctx, w.Account)
		had := gerr == nil
		if gerr != nil && !errors.Is(gerr, notFound) {
			return undo, fmt.Errorf("read the previous %q: %w", w.Account, gerr)
		}
		// Remembered before the write: a write that fails may have
		// landed (a timeout), so it is undone too.
		done = append(done, before{w.Account, old, had})
		if err := store.Set(ctx, w.Account, w.Value); err != nil {
			return undo, fmt.Errorf("store %q: %w", w.Account, err)
		}
	}
	return undo, nil
}
