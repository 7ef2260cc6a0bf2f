package pairing

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"
)

// SecretStore is where a pairing's secrets live (configs' stores satisfy
// it). Get and Delete of an account that holds nothing return an error
// matching fs.ErrNotExist (configs.ErrSecretNotFound does); errors never
// contain a secret.
type SecretStore interface {
	Get(ctx context.Context, account string) (string, error)
	Set(ctx context.Context, account, value string) error
	Delete(ctx context.Context, account string) error
}

// Secret is one value for one account of a SecretStore. Value is a secret.
type Secret struct{ Account, Value string }

// UndoError is a failure to put an account back as it was before Commit:
// the machine may keep some secrets of the failed pairing.
type UndoError struct{ Err error }

func (e *UndoError) Error() string { return e.Err.Error() }
func (e *UndoError) Unwrap() error { return e.Err }

// undoTimeout bounds an undo: it runs on a fresh context, since the
// caller's may be what failed.
const undoTimeout = 30 * time.Second

// storeSecrets writes each secret, remembering the previous values; undo
// puts back what was there before (or deletes what was not).
func storeSecrets(ctx context.Context, store SecretStore, writes []Secret) (undo func() error, err error) {
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
			} else if err = store.Delete(uctx, b.account); errors.Is(err, fs.ErrNotExist) {
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
		if gerr != nil && !errors.Is(gerr, fs.ErrNotExist) {
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
