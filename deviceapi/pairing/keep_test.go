package pairing_test

import (
	"context"
	"errors"
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

func keepResult() *pairing.Result {
	return &pairing.Result{
		Token:        &deviceapi.DeviceToken{ID: "t1", Token: "new-device-token"},
		RefreshToken: "new-refresh",
		Created:      []string{"device d1", "device token t1"},
	}
}

func keepOptions(store pairing.SecretStore) pairing.KeepOptions {
	return pairing.KeepOptions{
		Store: store, NotFound: configs.ErrSecretNotFound,
		RefreshTokenAccount: "refresh", DeviceTokenAccount: "device",
		Extra: []pairing.Secret{{Account: "client", Value: "new-client"}},
	}
}

func get(t *testing.T, s pairing.SecretStore, account string) string {
	t.Helper()
	v, err := s.Get(context.Background(), account)
	if errors.Is(err, configs.ErrSecretNotFound) {
		return "<none>"
	}
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Keep writes every secret; its undo puts back what each account held
// before and deletes what it did not hold.
func TestKeepWritesTheSecretsAndItsUndoRestoresThePreviousOnes(t *testing.T) {
	ctx := context.Background()
	mem := configs.NewMemoryStore()
	mem.Set(ctx, "refresh", "old-refresh")
	undo, err := keepResult().Keep(ctx, keepOptions(mem))
	if err != nil {
		t.Fatal(err)
	}
	for acct, want := range map[string]string{"refresh": "new-refresh", "device": "new-device-token", "client": "new-client"} {
		if got := get(t, mem, acct); got != want {
			t.Errorf("%s = %q, want %q", acct, got, want)
		}
	}
	if err := undo(); err != nil {
		t.Fatal(err)
	}
	for acct, want := range map[string]string{"refresh": "old-refresh", "device": "<none>", "client": "<none>"} {
		if got := get(t, mem, acct); got != want {
			t.Errorf("after undo: %s = %q, want %q", acct, got, want)
		}
	}
	if err := undo(); err != nil {
		t.Errorf("a second undo: %v", err)
	}
}

// A write that fails undoes the earlier ones at once; the error names the
// step and what the pairing created on the service.
func TestKeepUndoesAFailedStep(t *testing.T) {
	ctx := context.Background()
	mem := configs.NewMemoryStore()
	mem.Set(ctx, "refresh", "old-refresh")
	undo, err := keepResult().Keep(ctx, keepOptions(&faultyStore{MemoryStore: mem, failSet: "client"}))
	var se *pairing.StepError
	if undo != nil || !errors.As(err, &se) || se.Step != "storing the secrets" || !errors.Is(err, errBroken) {
		t.Fatalf("undo %v, err %v", undo != nil, err)
	}
	if !strings.Contains(err.Error(), "device d1") || !strings.Contains(err.Error(), "device token t1") {
		t.Errorf("the error does not name what was created: %v", err)
	}
	var ue *pairing.UndoError
	if errors.As(err, &ue) {
		t.Errorf("an undo error after a clean undo: %v", err)
	}
	for acct, want := range map[string]string{"refresh": "old-refresh", "device": "<none>", "client": "<none>"} {
		if got := get(t, mem, acct); got != want {
			t.Errorf("%s = %q, want %q", acct, got, want)
		}
	}
	for _, s := range []string{"new-refresh", "new-device-token", "new-client"} {
		if strings.Contains(err.Error(), s) {
			t.Errorf("the error holds a secret: %v", err)
		}
	}
}

// An undo that cannot delete says so with an *UndoError.
func TestKeepReportsAnUndoThatFails(t *testing.T) {
	mem := configs.NewMemoryStore()
	_, err := keepResult().Keep(context.Background(), keepOptions(&faultyStore{MemoryStore: mem, failSet: "client", failDeletes: true}))
	var ue *pairing.UndoError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "hubgate unpair") {
		t.Fatalf("err %v", err)
	}
}
