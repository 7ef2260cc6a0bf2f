package server_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/assistant"
	"github.com/hubgate/hubgate/automate/scripted"
	"github.com/hubgate/hubgate/automate/server"
	"github.com/hubgate/hubgate/internal/testutil"
)

var allRoutes = []struct{ method, path string }{
	{"GET", "/health"},
	{"GET", "/v1/models"},
	{"GET", "/v1/automate/models"},
	{"POST", "/v1/automate/models/select"},
	{"POST", "/v1/automate/cancel"},
	{"POST", "/v1/runs"},
	{"POST", "/v1/runs/rt_x/tool-results"},
	{"POST", "/v1/chat/completions"},
	{"GET", "/no/such/path"},
	{"OPTIONS", "/v1/runs"},
	// The newer contract's routes, and a wrong method on one (405 only
	// once authenticated).
	{"GET", "/v1/automate/tools"},
	{"GET", "/v1/settings"},
	{"PATCH", "/v1/settings"},
	{"GET", "/v1/speech/status"},
	{"POST", "/v1/speech/status"},
}

func TestAuthRejectsBeforeRouting(t *testing.T) {
	h := newHarness(t)
	bad := map[string]string{
		"missing":          "",
		"bare key":         h.key,
		"basic":            "Basic " + h.key,
		"wrong key":        "Bearer " + strings.Repeat("x", 43),
		"leading space":    "Bearer  " + h.key,
		"lowercase scheme": "bearer " + h.key,
		"prefix of key":    "Bearer " + h.key[:30],
	}
	for name, auth := range bad {
		for _, rt := range allRoutes {
			r := h.doAuth(rt.method, rt.path, nil, auth)
			t.Run(name+" "+rt.method+" "+rt.path, func(t *testing.T) {
				r.envelope(t, 401, "authentication_error", "Unauthorized")
			})
		}
	}
	// (A trailing space cannot be tested: HTTP parsing strips it before
	// any handler sees the header.) X-Api-Key is not accepted, and two
	// Authorization headers are refused even when one is right.
	for name, set := range map[string]func(*http.Request){
		"x-api-key": func(r *http.Request) { r.Header.Set("X-Api-Key", h.key) },
		"two authorization headers": func(r *http.Request) {
			r.Header.Add("Authorization", "Bearer "+h.key)
			r.Header.Add("Authorization", "Bearer wrong-wrong-wrong-wrong-wrong")
		},
	} {
		req, _ := http.NewRequest("GET", h.url+"/health", nil)
		set(req)
		resp, err := h.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Run(name, func(t *testing.T) {
			response{status: resp.StatusCode, header: resp.Header, body: b}.envelope(t, 401, "authentication_error", "Unauthorized")
		})
	}
}

func TestAuthRotationInvalidatesOldKeyAtOnce(t *testing.T) {
	h := newHarness(t)
	if r := h.do("GET", "/health", nil); r.status != 200 {
		t.Fatalf("health with key: %d", r.status)
	}
	newKey := "rotated-key-abcdefghijklmnopqrstuvwxyz0123"
	if err := h.srv.SetKey(newKey); err != nil {
		t.Fatal(err)
	}
	h.do("GET", "/health", nil).envelope(t, 401, "authentication_error", "Unauthorized")
	if r := h.doAuth("GET", "/health", nil, "Bearer "+newKey); r.status != 200 {
		t.Fatalf("health with new key: %d", r.status)
	}
	for _, k := range []string{"short", "", " " + newKey, strings.Repeat("k", 23)} {
		if err := h.srv.SetKey(k); !errors.Is(err, server.ErrInvalidKey) {
			t.Errorf("SetKey(%q) = %v, want ErrInvalidKey", k, err)
		}
	}
}

func TestUnknownRoutesAndWrongMethodsAre404(t *testing.T) {
	h := newHarness(t)
	for _, rt := range []struct{ method, path string }{
		{"POST", "/v1/completions"}, {"POST", "/v1/embeddings"}, {"POST", "/v1/responses"},
		{"GET", "/v1/chat/completions/abc"}, {"GET", "/v1/runs"}, {"PUT", "/v1/runs"},
		{"POST", "/health"}, {"DELETE", "/v1/models"}, {"GET", "/v1/automate/cancel"},
		{"OPTIONS", "/v1/chat/completions"}, {"GET", "/health/"}, {"GET", "/"},
		{"GET", "/v1/runs/rt_x/tool-results"},
	} {
		h.do(rt.method, rt.path, nil).envelope(t, 404, "not_found", "Not found")
	}
}

func TestHealthReportsEveryField(t *testing.T) {
	h := newHarness(t)
	r := h.do("GET", "/health", nil)
	if r.status != 200 {
		t.Fatalf("status %d", r.status)
	}
	checkContractHeaders(t, r)
	raw := r.raw(t)
	for _, k := range []string{"status", "service", "appVersion", "platform", "architecture", "osRelease", "cpu",
		"logicalCpuCount", "totalMemoryBytes", "workflowStatus", "activeRequestId", "modelName", "workerRunning",
		"busy", "awaitingToolResults", "workspace", "backend", "contextSize", "launchModelSelectionError",
		"automateModelSelection"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("health lacks %q", k)
		}
	}
	hl := h.health()
	if hl.Status != "ok" || hl.Service != "service-agent" || hl.AppVersion != "1.2.3-test" {
		t.Errorf("identity fields: %+v", hl)
	}
	if hl.Platform != "linux" || (hl.Architecture != "x64" && hl.Architecture != "arm64") {
		t.Errorf("platform %q architecture %q", hl.Platform, hl.Architecture)
	}
	if hl.LogicalCPUCount < 1 || hl.TotalMemoryBytes < 1<<20 || hl.OSRelease == "" || hl.CPU == "" {
		t.Errorf("machine fields: %+v", hl)
	}
	if hl.WorkflowStatus != "idle" || hl.Busy || hl.AwaitingToolResults || hl.ActiveRequestID != nil {
		t.Errorf("idle server: %+v", hl)
	}
	if hl.Workspace != h.workspace || hl.ModelName == nil || *hl.ModelName != "scripted-mini" {
		t.Errorf("workspace %q model %v", hl.Workspace, hl.ModelName)
	}
	if hl.AutomateModelSelection != nil || hl.LaunchModelSelectionError != nil {
		t.Errorf("no pin expected: %+v", hl)
	}
	if !hl.Ready() {
		t.Error("idle server not ready")
	}
	if strings.Contains(string(r.body), h.key) {
		t.Error("health leaks the key")
	}
}

func TestModelsListsTheAssistant(t *testing.T) {
	h := newHarness(t)
	r := h.do("GET", "/v1/models", nil)
	if r.status != 200 {
		t.Fatalf("status %d", r.status)
	}
	checkContractHeaders(t, r)
	if got, want := strings.TrimSpace(string(r.body)), `{"object":"list","data":[{"id":"service-agent","object":"model","owned_by":"service","mode":"assistant"},{"id":"service-model","object":"model","owned_by":"service","mode":"model"}]}`; got != want {
		// The assistant, and model mode beside it (the scripted engine has one).
		t.Errorf("body %s, want %s", got, want)
	}
}

func TestCatalogLoadingThenReady(t *testing.T) {
	h := newHarness(t, withEngineConfig(func(c *scripted.Config) { c.CatalogLoadDelay = 300 * time.Millisecond }))
	var cat automate.CatalogResponse
	h.do("GET", "/v1/automate/models", nil).json(t, &cat)
	if cat.Object != "list" || cat.Catalog.Status != "loading" {
		t.Fatalf("first catalog = %+v, want loading", cat.Catalog)
	}
	h.do("POST", "/v1/automate/models/select", map[string]string{"modelName": "scripted-pro"}).
		envelope(t, 400, "invalid_request_error", "The model catalog is still loading; select again when catalog.status is ready")
	// The catalog's readiness is only read over the API: a bounded poll.
	testutil.Until(t, "the catalog to be ready", testutil.NoEvent, func() bool {
		h.do("GET", "/v1/automate/models", nil).json(t, &cat)
		return cat.Catalog.Status == "ready"
	})
	if cat.Catalog.ModelCount != len(cat.Data) || len(cat.Data) != 5 {
		t.Fatalf("catalog %+v with %d entries", cat.Catalog, len(cat.Data))
	}
	selected := 0
	for _, m := range cat.Data {
		if m.Selected {
			selected++
			if m.Name != "scripted-mini" {
				t.Errorf("selected %s", m.Name)
			}
		}
	}
	if selected != 1 {
		t.Errorf("%d selected entries", selected)
	}
}

func TestSelectRules(t *testing.T) {
	h := newHarness(t)
	sel := func(body any) response { return h.do("POST", "/v1/automate/models/select", body) }
	bad := []struct {
		body any
		msg  string
	}{
		{map[string]string{"modelName": "nope"}, "No catalog model matches the requested name/family/size"},
		{map[string]string{"family": "scripted"}, "Model selector is ambiguous; matches: scripted-mini, scripted-pro, scripted-max"},
		{map[string]string{"modelName": "scripted-huge"}, "Model is not compatible with this device: scripted-huge"},
		{map[string]string{"family": "TEXT"}, "Model is not marked as tool-capable: scripted-text"},
		{map[string]string{"family": "scripted", "sizeCode": "xl"}, "Model is not downloaded. Select and download it in the application first: scripted-max"},
		{map[string]any{"modelName": 7}, "modelName must be a string"},
		{`{"modelName":`, "Malformed JSON"},
	}
	for _, c := range bad {
		sel(c.body).envelope(t, 400, "invalid_request_error", c.msg)
	}

	// Exactly one match, case-insensitive: pinned.
	r := sel(map[string]string{"family": "SCRIPTED", "sizeCode": "l"})
	if r.status != 200 {
		t.Fatalf("select: %d %s", r.status, r.body)
	}
	checkContractHeaders(t, r)
	var resp automate.SelectResponse
	r.json(t, &resp)
	if resp.Selected == nil || resp.Selected.Name != "scripted-pro" || !resp.Selected.Selected || len(resp.Models) != 5 {
		t.Fatalf("select response %+v", resp)
	}
	for _, m := range resp.Models {
		if m.Selected != (m.Name == "scripted-pro") {
			t.Errorf("model %s selected=%v", m.Name, m.Selected)
		}
	}
	hl := h.health()
	if hl.AutomateModelSelection == nil || hl.AutomateModelSelection.ModelName != "scripted-pro" || *hl.ModelName != "scripted-pro" {
		t.Fatalf("health after pin: %+v", hl)
	}
	_, rec := h.run(map[string]any{"prompt": "which model"})
	if rec.Model != "scripted-pro" {
		t.Errorf("run served by %q", rec.Model)
	}

	// Unpin with {} (and with an empty body): back to the application's selection.
	for _, body := range []any{map[string]any{}, ""} {
		r = sel(body)
		if r.status != 200 {
			t.Fatalf("unpin: %d %s", r.status, r.body)
		}
		r.json(t, &resp)
		if resp.Selected == nil || resp.Selected.Name != "scripted-mini" {
			t.Fatalf("unpin selected %+v", resp.Selected)
		}
		if hl := h.health(); hl.AutomateModelSelection != nil || *hl.ModelName != "scripted-mini" {
			t.Fatalf("health after unpin: %+v", hl)
		}
	}
}

func TestSelectIs409WhileARunIsInFlight(t *testing.T) {
	h := newHarness(t)
	done := h.startAsync("/v1/runs", map[string]any{"prompt": "#!sleep 60000\nwait"})
	h.waitFor("busy", func(hl automate.Health) bool { return hl.Busy })
	r := h.do("POST", "/v1/automate/models/select", map[string]string{"modelName": "scripted-pro"})
	if r.status != 409 {
		t.Fatalf("select while busy: %d %s", r.status, r.body)
	}
	var env automate.ErrorEnvelope
	r.json(t, &env)
	if env.Error.Type != "conflict" || !strings.HasPrefix(env.Error.Message, "The on-device assistant is already running or preparing (") {
		t.Errorf("409 envelope %+v", env.Error)
	}
	h.do("POST", "/v1/automate/cancel", map[string]bool{"force": true})
	receive(t, done)
}

// stuckModel is an engine whose model switch never takes.
type stuckModel struct{ assistant.Assistant }

func (stuckModel) ActivateModel(context.Context, string) error { return nil }

func TestSelectReportsAModelThatDidNotBecomeActive(t *testing.T) {
	h := newHarness(t, withWrap(func(a assistant.Assistant) assistant.Assistant { return stuckModel{a} }))
	h.do("POST", "/v1/automate/models/select", map[string]string{"modelName": "scripted-pro"}).
		envelope(t, 400, "invalid_request_error", "Selected model did not become active; expected scripted-pro, got scripted-mini")
	if hl := h.health(); hl.AutomateModelSelection != nil {
		t.Errorf("a failed switch left a pin: %+v", hl.AutomateModelSelection)
	}
}

func TestCloseClearsThePin(t *testing.T) {
	eng := scripted.New(scripted.Config{})
	srv, err := server.New(server.Config{Key: testKey, Assistant: eng, Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Select(context.Background(), automate.SelectRequest{ModelName: "scripted-pro"}); err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := eng.Runtime().ModelName; got != "scripted-mini" {
		t.Errorf("after Close the engine serves %q, want the application's selection", got)
	}
	if hl := srv.Health(); hl.AutomateModelSelection != nil {
		t.Errorf("pin survived Close")
	}
}

// TestAClosingServerSaysSo: once Close was called, the routes that need
// the slot answer the server's own state (503, shutting down), not the 409
// of a busy slot that no run holds; the other routes still answer.
func TestAClosingServerSaysSo(t *testing.T) {
	h := newHarness(t)
	if err := h.srv.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, rt := range []struct {
		path string
		body map[string]any
	}{
		{"/v1/runs", map[string]any{"prompt": "hi"}},
		{"/v1/chat/completions", map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}}},
		{"/v1/chat/completions", modelBody(false, msg("user", "hi"))},
		{"/v1/automate/models/select", map[string]any{"modelName": "scripted-pro"}},
	} {
		h.do("POST", rt.path, rt.body).envelope(t, 503, "service_unavailable", "The Automate server is shutting down")
	}
	if hl := h.health(); hl.Busy {
		t.Errorf("a closed server calls itself busy: %+v", hl)
	}
	if r := h.do("POST", "/v1/automate/cancel", nil); r.status != 200 || !strings.Contains(string(r.body), `"mode":"none"`) {
		t.Errorf("cancel on a closed server: %d %s", r.status, r.body)
	}
}

func TestLaunchSelection(t *testing.T) {
	h := newHarness(t, withServerConfig(func(c *server.Config) { c.LaunchSelection = server.LaunchSelection{Family: "scripted", SizeCode: "L"} }))
	hl := h.waitFor("launch model", func(hl automate.Health) bool { return hl.ModelName != nil && *hl.ModelName == "scripted-pro" })
	if hl.LaunchModelSelectionError != nil || hl.AutomateModelSelection != nil {
		t.Errorf("launch selection: %+v", hl)
	}
	// Unpinning returns to the launch selection, the application's own.
	h.do("POST", "/v1/automate/models/select", map[string]string{"modelName": "scripted-mini"})
	h.do("POST", "/v1/automate/models/select", map[string]string{})
	if hl := h.health(); *hl.ModelName != "scripted-pro" {
		t.Errorf("unpin went to %s", *hl.ModelName)
	}

	h2 := newHarness(t, withServerConfig(func(c *server.Config) { c.LaunchSelection = server.LaunchSelection{ModelName: "scripted-max"} }))
	hl = h2.waitFor("launch error", func(hl automate.Health) bool { return hl.LaunchModelSelectionError != nil })
	if want := "Model is not downloaded. Select and download it in the application first: scripted-max"; *hl.LaunchModelSelectionError != want {
		t.Errorf("launch error %q", *hl.LaunchModelSelectionError)
	}
}

func TestCancelWhenNothingRuns(t *testing.T) {
	h := newHarness(t)
	for _, body := range []any{nil, map[string]any{}, map[string]bool{"force": true}} {
		r := h.do("POST", "/v1/automate/cancel", body)
		if r.status != 200 {
			t.Fatalf("cancel: %d %s", r.status, r.body)
		}
		checkContractHeaders(t, r)
		if got := strings.TrimSpace(string(r.body)); got != `{"stopped":false,"mode":"none","requestId":null,"workflowStatus":"idle"}` {
			t.Errorf("cancel body %s", got)
		}
	}
	// Always 200, whatever the body: a non-boolean force counts as false.
	for _, body := range []any{map[string]any{"force": "yes"}, map[string]any{"force": 1}, "{", "[1]", "true",
		`{"force":"true"}`, strings.Repeat("x", 2<<20)} {
		r := h.do("POST", "/v1/automate/cancel", body)
		if r.status != 200 || !strings.Contains(string(r.body), `"mode":"none"`) {
			t.Errorf("cancel with body %.40v: %d %s", body, r.status, r.body)
		}
	}
}

// TestCancelWithANonBooleanForceIsASoftCancel: a well-formed body whose
// force is not the boolean true ("yes", 1, "true") stops a running run
// softly: mode cancel, the step in flight finishes, and the run ends
// canceled with no errorCode; a force would have killed the step and ended
// the run terminated.
func TestCancelWithANonBooleanForceIsASoftCancel(t *testing.T) {
	for _, force := range []any{"yes", 1, "true"} {
		h := newHarness(t)
		// The step blocks until the test releases it: a soft cancel cannot
		// interrupt it, a force cancel kills it.
		ch := h.startAsync("/v1/runs", map[string]any{"allowDestructiveTools": true,
			"prompt": "x\n#!run touch started; while [ ! -e release ]; do sleep 0.02; done\n#!answer never"})
		// The step's shell writes the file; no event reaches us: a bounded poll.
		testutil.WaitFor(t, "the step running", func() bool {
			_, err := os.Stat(filepath.Join(h.workspace, "started"))
			return err == nil
		})
		var cr automate.CancelResponse
		r := h.do("POST", "/v1/automate/cancel", map[string]any{"force": force})
		r.json(t, &cr)
		if r.status != 200 || !cr.Stopped || cr.Mode != automate.CancelModeCancel {
			t.Fatalf("force %#v: cancel %d %s", force, r.status, r.body)
		}
		if err := os.WriteFile(filepath.Join(h.workspace, "release"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		var rec automate.RunRecord
		got := receive(t, ch)
		got.json(t, &rec)
		if got.status != 500 || rec.Status != automate.StatusCanceled || rec.ErrorCode != "" || rec.Answer == "never" ||
			len(rec.Steps) < 1 || rec.Steps[0].Status != automate.StepSuccess {
			t.Errorf("force %#v: run %d %s", force, got.status, brief(rec))
		}
		if hl := h.health(); hl.Busy || !hl.WorkerRunning {
			t.Errorf("force %#v: after a soft cancel the worker stays warm: %+v", force, hl)
		}
	}
}

func TestCancelWithABadBodyIsASoftCancel(t *testing.T) {
	h := newHarness(t)
	ch := h.startAsync("/v1/runs", map[string]any{"prompt": "#!sleep 60000\n#!answer never"})
	h.waitFor("the run", func(hl automate.Health) bool { return hl.Busy })
	r := h.do("POST", "/v1/automate/cancel", `{"force":"yes"`)
	var resp automate.CancelResponse
	r.json(t, &resp)
	if r.status != 200 || !resp.Stopped || resp.Mode != automate.CancelModeCancel {
		t.Fatalf("cancel: %d %s", r.status, r.body)
	}
	h.do("POST", "/v1/automate/cancel", map[string]any{"force": true}) // the sleep does not end softly
	if got := receive(t, ch); got.status != 500 {
		t.Fatalf("run answer %d %s", got.status, got.body)
	}
}

// TestPortWindow binds a window of ports the OS chose (held by this test,
// so it never depends on 4317..4328 being free on the machine).
func TestPortWindow(t *testing.T) {
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	var window []int
	for range 4 {
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, l)
		window = append(window, l.Addr().(*net.TCPAddr).Port)
	}
	_, _, err := server.ListenWith(server.ListenOptions{Window: window})
	var pw *server.PortWindowError
	if !errors.As(err, &pw) || !slices.Equal(pw.Ports, window) || !strings.Contains(err.Error(), automate.DescribePorts("127.0.0.1", window)) {
		t.Fatalf("Listen with a full window = %v", err)
	}
	// Free the third port: the server moves there and says it moved.
	held[2].Close()
	ln, moved, err := server.ListenWith(server.ListenOptions{Window: window})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if ln.Addr().(*net.TCPAddr).Port != window[2] || !moved {
		t.Errorf("bound %s moved=%v, want port %d", ln.Addr(), moved, window[2])
	}
	// The preferred port free: not moved.
	held[0].Close()
	ln0, moved, err := server.ListenWith(server.ListenOptions{Window: window})
	if err != nil {
		t.Fatal(err)
	}
	defer ln0.Close()
	if ln0.Addr().(*net.TCPAddr).Port != window[0] || moved {
		t.Errorf("bound %s moved=%v, want port %d", ln0.Addr(), moved, window[0])
	}
	// A forced port that is taken fails and names it.
	if _, _, err := server.ListenWith(server.ListenOptions{Port: window[1]}); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("127.0.0.1:%d", window[1])) {
		t.Errorf("forced taken port: %v", err)
	}
	// port < 0: any loopback port.
	ln2, _, err := server.ListenWith(server.ListenOptions{Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer ln2.Close()
	if host, _, _ := net.SplitHostPort(ln2.Addr().String()); host != "127.0.0.1" {
		t.Errorf("bound %s, want the IPv4 loopback", ln2.Addr())
	}
	// The zero window is the contract's: whatever else listens there, a
	// bind lands in 4317..4328 or the error names that range.
	if !slices.Equal(automate.PortWindow(), []int{4317, 4318, 4319, 4320, 4321, 4322, 4323, 4324, 4325, 4326, 4327, 4328}) {
		t.Fatalf("PortWindow() = %v", automate.PortWindow())
	}
	lw, moved, err := server.ListenWith(server.ListenOptions{Port: 0})
	switch {
	case err == nil:
		defer lw.Close()
		p := lw.Addr().(*net.TCPAddr).Port
		if p < automate.FirstPort || p > automate.LastPort || moved != (p != automate.FirstPort) {
			t.Errorf("ListenWith(Port 0) bound %d moved=%v", p, moved)
		}
	case errors.As(err, &pw):
		if !strings.Contains(err.Error(), "127.0.0.1:4317-4328") {
			t.Errorf("full contract window: %v", err)
		}
	default:
		t.Errorf("Listen(0) = %v", err)
	}
}
