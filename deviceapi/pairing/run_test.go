package pairing_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubgate/hubgate/configs"
	"github.com/hubgate/hubgate/deviceapi/pairing"
	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/oauth"
)

// runOptions pairs with the mock at apiURL into a fresh state file; the
// lines reported are appended to notes.
func runOptions(t *testing.T, apiURL string, store pairing.SecretStore, notes *[]string) pairing.RunOptions {
	t.Helper()
	var mu sync.Mutex
	return pairing.RunOptions{
		StatePath:  filepath.Join(t.TempDir(), "hubgate", "state.json"),
		Store:      store,
		Settings:   pairing.Settings{APIURL: apiURL, ClientID: mockhub.DefaultClientID, DeviceTypeID: mockhub.DefaultDeviceTypeID},
		Hostname:   func() (string, error) { return "box", nil },
		Getenv:     func(string) string { return "" },
		Login:      oauth.LoginOptions{Out: io.Discard, OpenBrowser: follow, Timeout: 30 * time.Second},
		Progress:   func(p pairing.Progress) { mu.Lock(); *notes = append(*notes, p.Message); mu.Unlock() },
		CheckStore: func(ctx context.Context) error { return configs.CheckStore(ctx, store) },
	}
}

func TestRunPairsAndCommits(t *testing.T) {
	m, apiURL := startMock(t, mockhub.Config{})
	store := configs.NewMemoryStore()
	var notes []string
	o := runOptions(t, apiURL, store, &notes)
	res, err := pairing.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	st, err := pairing.LoadState(o.StatePath)
	if err != nil || st.DeviceID != res.State.DeviceID || st.DeviceName != "hubgate on box" || st.SecretSlot != pairing.SlotA || res.Reused {
		t.Fatalf("state %+v %v, result %+v", st, err, res)
	}
	if len(m.Devices()) != 1 || get(t, store, pairing.AccountDeviceToken) == "" || get(t, store, pairing.AccountRefreshToken) == "" {
		t.Fatal("the device or its secrets are missing")
	}
	joined := strings.Join(notes, "\n")
	for _, want := range []string{"checking the OS secret store", "public client", "wrote " + o.StatePath, "paired: device " + st.DeviceID} {
		if !strings.Contains(joined, want) {
			t.Errorf("no line with %q:\n%s", want, joined)
		}
	}
}

// A paired device: nobody to ask is a *UsageError; the answers decide.
func TestRunWhenADeviceIsPaired(t *testing.T) {
	m, apiURL := startMock(t, mockhub.Config{})
	store := configs.NewMemoryStore()
	var notes []string
	o := runOptions(t, apiURL, store, &notes)
	first, err := pairing.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	var ue *pairing.UsageError
	if _, err := pairing.Run(context.Background(), o); !errors.As(err, &ue) || !strings.Contains(err.Error(), "--reuse") {
		t.Fatalf("without Ask: %v", err)
	}
	for _, tc := range []struct {
		answer  string
		err     error
		devices int
		reused  bool
	}{{"cancel", pairing.ErrCanceled, 1, false}, {"reuse\n", nil, 1, true}, {"n", nil, 2, false}} {
		asked := ""
		o.Ask = func(q pairing.Question) (string, error) { asked = q.Prompt; return tc.answer, nil }
		res, err := pairing.Run(context.Background(), o)
		if !errors.Is(err, tc.err) || len(m.Devices()) != tc.devices || !strings.Contains(asked, "[reuse/replace/cancel]") {
			t.Fatalf("%q: %v, %d devices, asked %q", tc.answer, err, len(m.Devices()), asked)
		}
		if err == nil && (res.Reused != tc.reused || (tc.reused && res.State.DeviceID != first.State.DeviceID)) {
			t.Fatalf("%q: %+v", tc.answer, res)
		}
	}
}

// A re-pairing keeps the state file's client id over the environment's,
// and says so; a flag's wins.
func TestRunKeepsThePairedSettingsUnlessAFlagSaysOtherwise(t *testing.T) {
	_, apiURL := startMock(t, mockhub.Config{})
	store := configs.NewMemoryStore()
	var notes []string
	o := runOptions(t, apiURL, store, &notes)
	if _, err := pairing.Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	o.Choice = pairing.ChoiceReuse
	o.Settings.ClientID = "someone-else"
	o.Source = func(key string) string {
		if key == "remote.client_id" {
			return "HUBGATE_CLIENT_ID"
		}
		return ""
	}
	res, err := pairing.Run(context.Background(), o)
	if err != nil || res.State.ClientID != mockhub.DefaultClientID {
		t.Fatalf("%+v %v", res, err)
	}
	if !strings.Contains(strings.Join(notes, "\n"), `remote.client_id: keeping "`+mockhub.DefaultClientID+`" from the paired state`) {
		t.Errorf("not said:\n%s", strings.Join(notes, "\n"))
	}
	o.Source = func(key string) string { return "flag --client-id" }
	if _, err := pairing.Run(context.Background(), o); !oauth.IsSignInError(err) {
		t.Fatalf("the flag's client id was not used: %v", err)
	}
}

func TestRunSettingsAndClientSecretErrors(t *testing.T) {
	_, apiURL := startMock(t, mockhub.Config{})
	store := configs.NewMemoryStore()
	var notes []string
	o := runOptions(t, apiURL, store, &notes)
	o.Settings = pairing.Settings{}
	var se *pairing.SettingsError
	if _, err := pairing.Run(context.Background(), o); !errors.As(err, &se) || len(se.Problems) != 3 || se.Problems[0].Key != "remote.api_url" {
		t.Fatalf("no settings: %v", err)
	}
	o = runOptions(t, apiURL, store, &notes)
	o.AskClientSecret = func(pairing.Question) (string, error) { return "", io.EOF }
	if _, err := pairing.Run(context.Background(), o); !errors.As(err, &se) || !strings.Contains(err.Error(), pairing.EnvClientSecret) {
		t.Fatalf("no secret typed: %v", err)
	}
	o.AskClientSecret = func(q pairing.Question) (string, error) {
		if !q.Secret {
			t.Error("the secret is not asked as a secret")
		}
		return mockhub.DefaultClientSecret + "\n", nil
	}
	if _, err := pairing.Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if get(t, store, pairing.AccountClientSecret) != mockhub.DefaultClientSecret {
		t.Error("the asked secret was not stored")
	}
}

// notExistStore is a store of its own whose "nothing stored" is only
// fs.ErrNotExist: pairing needs nothing of configs to tell it.
type notExistStore struct{ m map[string]string }

func (s *notExistStore) Get(_ context.Context, a string) (string, error) {
	if v, ok := s.m[a]; ok {
		return v, nil
	}
	return "", fs.ErrNotExist
}
func (s *notExistStore) Set(_ context.Context, a, v string) error { s.m[a] = v; return nil }
func (s *notExistStore) Delete(_ context.Context, a string) error {
	if _, ok := s.m[a]; !ok {
		return fs.ErrNotExist
	}
	delete(s.m, a)
	return nil
}

func TestUnpairRemovesBothSlotsAndTheState(t *testing.T) {
	store := &notExistStore{m: map[string]string{
		pairing.AccountDeviceToken: "t", pairing.SlotAccount(pairing.AccountRefreshToken, pairing.SlotB): "r",
		pairing.AccountClientSecret: "s", "unrelated": "u"}}
	path := filepath.Join(t.TempDir(), "state.json")
	if err := pairing.SaveState(path, pairing.State{DeviceID: "d", APIURL: "https://x"}); err != nil {
		t.Fatal(err)
	}
	var notes []string
	o := pairing.UnpairOptions{StatePath: path, Store: store, KeepClientSecret: true, Progress: func(p pairing.Progress) { notes = append(notes, p.Message) }}
	if err := pairing.Unpair(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if len(store.m) != 2 || store.m["unrelated"] != "u" || store.m[pairing.AccountClientSecret] != "s" {
		t.Fatalf("left %v", store.m)
	}
	if _, err := pairing.LoadState(path); !errors.Is(err, pairing.ErrNoState) {
		t.Fatalf("state: %v", err)
	}
	if !strings.Contains(strings.Join(notes, "\n"), "the device d") {
		t.Errorf("notes %q", notes)
	}
	notes = nil
	if err := pairing.Unpair(context.Background(), o); err != nil || len(notes) != 1 || !strings.Contains(notes[0], "nothing to remove") {
		t.Fatalf("again: %v %q", err, notes)
	}
}

// The account names are what earlier versions stored under configs'
// names: they never change.
func TestAccountNamesAreTheStoredOnes(t *testing.T) {
	if pairing.AccountRefreshToken != configs.AccountOAuthRefreshToken || pairing.AccountDeviceToken != configs.AccountDeviceToken ||
		pairing.AccountClientSecret != configs.AccountOAuthClientSecret {
		t.Fatal("an account name changed")
	}
	if !errors.Is(configs.ErrSecretNotFound, fs.ErrNotExist) {
		t.Fatal("configs' not-found does not match fs.ErrNotExist")
	}
}
