package automate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/scripted"
	"github.com/hubgate/hubgate/automate/server"
	"github.com/hubgate/hubgate/internal/testutil"
)

// These tests drive the real Automate server (automate/server) with the real
// scripted engine (automate/scripted) through real HTTP on 127.0.0.1.

const realKey = "integration-key-0123456789abcdefghijkl"

type realServer struct {
	srv *server.Server
	url string
}

func startReal(t *testing.T, toolWait time.Duration) *realServer {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	srv, err := server.New(server.Config{
		Key:       realKey,
		Assistant: scripted.New(scripted.Config{Logger: quiet}),
		Workspace: t.TempDir(),
		ToolWait:  toolWait,
		Logger:    quiet,
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := srv.Close(ctx); err != nil {
			t.Errorf("server Close: %v", err)
		}
		ts.Close()
	})
	return &realServer{srv: srv, url: ts.URL}
}

func (r *realServer) client(t *testing.T, opts automate.ClientOptions) *automate.Client {
	t.Helper()
	opts.BaseURL = r.url
	if opts.Key == "" {
		opts.Key = realKey
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	c, err := automate.NewClient(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// waitHealth waits until /health satisfies cond: a bounded poll (the
// server announces no change of its health).
func waitHealth(t *testing.T, c *automate.Client, what string, cond func(*automate.Health) bool) {
	t.Helper()
	var (
		h   *automate.Health
		err error
	)
	testutil.Until(t, what, testutil.NoEvent,
		func() bool { h, err = c.Health(context.Background()); return err == nil && cond(h) },
		func() string { return fmt.Sprintf("last health %+v, err %v", h, err) })
}

func TestIntegrationRunCompletedAndFailed(t *testing.T) {
	c := startReal(t, 0).client(t, automate.ClientOptions{})
	ctx := context.Background()
	contract := "End with FINAL ANSWER: <value>."
	rec, err := c.Run(ctx, automate.RunRequest{
		Prompt:         "Say the number\n#!answer The number is 42. FINAL ANSWER: 42",
		TaskID:         "task-int-1",
		AnswerContract: &contract,
	})
	if err != nil {
		t.Fatal(err)
	}
	if rec.SchemaVersion != 1 || rec.Status != automate.StatusCompleted || rec.TaskID != "task-int-1" ||
		!strings.HasPrefix(rec.RequestID, "automate-run-") {
		t.Fatalf("record %+v", rec)
	}
	if rec.Answer != "The number is 42. FINAL ANSWER: 42" || rec.FinalAnswer == nil || *rec.FinalAnswer != "42" {
		t.Fatalf("answer %q final %v", rec.Answer, rec.FinalAnswer)
	}
	if len(rec.Events) == 0 || rec.Backend == nil || rec.Usage == nil {
		t.Fatalf("blocks missing: events %d backend %v usage %v", len(rec.Events), rec.Backend, rec.Usage)
	}

	rec, err = c.Run(ctx, automate.RunRequest{Prompt: "fail it\n#!fail SCHEMA_INVALID"})
	var re *automate.RunError
	if !errors.As(err, &re) || !errors.Is(err, automate.ErrRunFailed) {
		t.Fatalf("want *RunError, got %T %v", err, err)
	}
	if rec == nil || rec.Status != automate.StatusFailed || rec.ErrorCode != automate.ErrorSchemaInvalid || re.HTTPStatus != 500 {
		t.Fatalf("failed record %+v", rec)
	}

	_, err = c.Run(ctx, automate.RunRequest{Prompt: "   "})
	if !errors.Is(err, automate.ErrInvalidRequest) || !strings.Contains(err.Error(), "prompt must be a non-empty string") {
		t.Fatalf("want invalid request, got %v", err)
	}
	_, err = c.Resume(ctx, "rt_00000000000000000000000000000000", []automate.ToolResult{automate.TextResult("call_1", "x")})
	if !errors.Is(err, automate.ErrNotFound) {
		t.Fatalf("want ErrNotFound for a stale token, got %v", err)
	}

	bad := startReal(t, 0)
	_, err = bad.client(t, automate.ClientOptions{Key: "wrong-key-0123456789abcdefghijkl"}).Health(ctx)
	if !errors.Is(err, automate.ErrUnauthorized) || strings.Contains(err.Error(), "wrong-key") {
		t.Fatalf("want ErrUnauthorized without the key, got %v", err)
	}
}

func TestIntegrationRunTimesOut(t *testing.T) {
	c := startReal(t, 0).client(t, automate.ClientOptions{})
	_, err := c.Run(context.Background(), automate.RunRequest{Prompt: "slow\n#!sleep 20000", TimeoutMs: 1000})
	if !errors.Is(err, automate.ErrRunTimedOut) || !errors.Is(err, automate.ErrInvalidRequest) {
		t.Fatalf("want ErrRunTimedOut, got %v", err)
	}
	var ae *automate.APIError
	if !errors.As(err, &ae) || ae.HTTPStatus != 400 {
		t.Fatalf("want a 400 envelope, got %v", err)
	}
	waitHealth(t, c, "idle after the timeout", func(h *automate.Health) bool { return !h.Busy })
}

// toolExecutor answers get_time with "12:00" and add with the sum, and
// records each round's calls.
type toolExecutor struct {
	mu     sync.Mutex
	rounds [][]string
}

func (x *toolExecutor) exec(ctx context.Context, calls []automate.ToolCall) ([]automate.ToolResult, error) {
	var names []string
	var out []automate.ToolResult
	for _, c := range calls {
		names = append(names, c.Name)
		switch c.Name {
		case "get_time":
			out = append(out, automate.TextResult(c.ID, "12:00"))
		case "add":
			var a struct{ A, B int }
			if err := json.Unmarshal(c.Arguments, &a); err != nil {
				return nil, fmt.Errorf("add arguments %s: %w", c.Arguments, err)
			}
			b, _ := json.Marshal(a.A + a.B)
			out = append(out, automate.ToolResult{ID: c.ID, Result: b})
		default:
			out = append(out, automate.ToolResult{ID: c.ID, Error: "unknown tool " + c.Name})
		}
	}
	x.mu.Lock()
	x.rounds = append(x.rounds, names)
	x.mu.Unlock()
	return out, nil
}

var clientTools = []automate.ClientTool{
	{Name: "get_time", Description: "Returns the current time."},
	{Name: "add", Description: "Adds a and b.", Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}}`)},
}

const toolPrompt = "Use the tools\n" +
	"#!tool get_time {}\n" +
	`#!tools [{"name":"add","arguments":{"a":1,"b":2}},{"name":"add","arguments":{"a":40,"b":2}}]` + "\n" +
	"#!answer tools done"

func summaries(steps []automate.Step) []string {
	var out []string
	for _, s := range steps {
		if s.ToolName == "get_time" || s.ToolName == "add" {
			out = append(out, s.ToolName+"="+s.ResultSummary+"/"+s.Status)
		}
	}
	return out
}

func TestIntegrationRunWithTools(t *testing.T) {
	c := startReal(t, 0).client(t, automate.ClientOptions{})
	var x toolExecutor
	rec, err := c.RunWithTools(context.Background(), automate.RunRequest{Prompt: toolPrompt, ClientTools: clientTools}, automate.ToolLoop{Execute: x.exec})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != automate.StatusCompleted || rec.Answer != "tools done" {
		t.Fatalf("record %s %q", rec.Status, rec.Answer)
	}
	if fmt.Sprint(x.rounds) != "[[get_time] [add add]]" {
		t.Fatalf("rounds %v", x.rounds)
	}
	got := summaries(rec.Steps)
	want := []string{"get_time=12:00/success", "add=3/success", "add=42/success"}
	if !slices.Equal(got, want) {
		t.Fatalf("tool steps %v, want %v", got, want)
	}
}

func TestIntegrationChatWithTools(t *testing.T) {
	c := startReal(t, 0).client(t, automate.ClientOptions{})
	var x toolExecutor
	req := automate.NewChatRequest(toolPrompt, "Be brief.")
	req.Tools = automate.ChatTools(clientTools)
	comp, err := c.ChatWithTools(context.Background(), req, automate.ToolLoop{Execute: x.exec})
	if err != nil {
		t.Fatal(err)
	}
	if comp.FinishReason() != automate.FinishStop || comp.Text() != "tools done" || comp.Service == nil ||
		comp.Service.Status != automate.StatusCompleted || comp.ID != comp.Service.RequestID {
		t.Fatalf("completion %+v", comp)
	}
	if fmt.Sprint(x.rounds) != "[[get_time] [add add]]" {
		t.Fatalf("rounds %v", x.rounds)
	}
	if got, want := summaries(comp.Service.Steps), []string{"get_time=12:00/success", "add=3/success", "add=42/success"}; !slices.Equal(got, want) {
		t.Fatalf("tool steps %v, want %v", got, want)
	}

	comp, err = c.Chat(context.Background(), automate.NewChatRequest("x\n#!fail EXECUTION_FAILED"))
	var re *automate.RunError
	if !errors.As(err, &re) || re.Completion == nil || re.Completion != comp || re.Record.ErrorCode != automate.ErrorExecutionFailed {
		t.Fatalf("want a chat RunError, got %v", err)
	}
}

func TestIntegrationCancelAndBusy(t *testing.T) {
	c := startReal(t, 0).client(t, automate.ClientOptions{})
	ctx := context.Background()
	type outcome struct {
		rec *automate.RunRecord
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		rec, err := c.Run(ctx, automate.RunRequest{Prompt: "long\n#!sleep 60000"})
		done <- outcome{rec, err}
	}()
	waitHealth(t, c, "the run in flight", func(h *automate.Health) bool { return h.Busy && h.ActiveRequestID != nil })

	_, err := c.Run(ctx, automate.RunRequest{Prompt: "second"})
	if !errors.Is(err, automate.ErrBusy) {
		t.Fatalf("want ErrBusy, got %v", err)
	}
	if _, err := c.SelectModel(ctx, automate.SelectRequest{ModelName: "scripted-pro"}); !errors.Is(err, automate.ErrBusy) {
		t.Fatalf("select while busy: want ErrBusy, got %v", err)
	}

	cr, err := c.Cancel(ctx, true)
	if err != nil || !cr.Stopped || cr.Mode != automate.CancelModeTerminate || cr.RequestID == nil {
		t.Fatalf("cancel %+v %v", cr, err)
	}
	var o outcome
	select {
	case o = <-done:
	case <-time.After(testutil.DefaultTimeout):
		t.Fatal("run did not settle after a force cancel")
	}
	// The server ends a force-cancelled run terminated (docs/automate-server.md).
	var re *automate.RunError
	if !errors.As(o.err, &re) || o.rec == nil || o.rec.RequestID != *cr.RequestID || o.rec.Status != automate.StatusTerminated {
		t.Fatalf("settled with %v %+v, want status terminated", o.err, o.rec)
	}
	cr, err = c.Cancel(ctx, false)
	if err != nil || cr.Stopped || cr.Mode != automate.CancelModeNone {
		t.Fatalf("cancel with nothing running: %+v %v", cr, err)
	}
}

func TestIntegrationGiveUpCancelsRun(t *testing.T) {
	rs := startReal(t, 0)
	// The soft cancel cannot interrupt a #!sleep step, so the give-up
	// cancel is a force cancel here.
	c := rs.client(t, automate.ClientOptions{ForceCancelOnGiveUp: true})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.Run(ctx, automate.RunRequest{Prompt: "long\n#!sleep 60000"})
		errc <- err
	}()
	waitHealth(t, c, "the run in flight", func(h *automate.Health) bool { return h.Busy })
	cancel()
	err := <-errc
	var ae *automate.AbandonedError
	if !errors.As(err, &ae) || !errors.Is(err, context.Canceled) || ae.Cancel == nil || !ae.Cancel.Stopped {
		t.Fatalf("want an abandon with a cancel that stopped the run, got %v", err)
	}
	waitHealth(t, c, "the slot freed by the explicit cancel", func(h *automate.Health) bool { return !h.Busy })
	rec, err := c.Run(context.Background(), automate.RunRequest{Prompt: "after\n#!answer next"})
	if err != nil || rec.Answer != "next" {
		t.Fatalf("next run: %v %v", rec, err)
	}
}

func TestIntegrationExecutorFailureReleasesParkedRun(t *testing.T) {
	c := startReal(t, 0).client(t, automate.ClientOptions{})
	boom := errors.New("tool backend down")
	_, err := c.RunWithTools(context.Background(), automate.RunRequest{Prompt: toolPrompt, ClientTools: clientTools},
		automate.ToolLoop{Execute: func(context.Context, []automate.ToolCall) ([]automate.ToolResult, error) { return nil, boom }})
	var ae *automate.AbandonedError
	if !errors.Is(err, boom) || !errors.As(err, &ae) || ae.Cancel == nil || !ae.Cancel.Stopped ||
		ae.Cancel.RequestID == nil || *ae.Cancel.RequestID != ae.RequestID {
		t.Fatalf("want an abandon whose soft cancel stopped our parked run, got %v", err)
	}
	// A soft cancel of a parked run lands at once: the slot is free.
	waitHealth(t, c, "the slot freed", func(h *automate.Health) bool { return !h.Busy && !h.AwaitingToolResults })
}

func TestIntegrationModels(t *testing.T) {
	c := startReal(t, 0).client(t, automate.ClientOptions{})
	ctx := context.Background()
	ml, err := c.Models(ctx)
	if err != nil || len(ml.Data) != 2 || ml.Data[0].ID != automate.ServiceID || ml.Data[1].ID != automate.ModelID("") {
		t.Fatalf("models %+v %v", ml, err)
	}
	cat, err := c.Catalog(ctx)
	if err != nil || cat.Catalog.Status != automate.CatalogReady || len(cat.Data) == 0 {
		t.Fatalf("catalog %+v %v", cat, err)
	}
	sel, err := c.SelectModel(ctx, automate.SelectRequest{ModelName: "SCRIPTED-PRO"})
	if err != nil || sel.Selected == nil || sel.Selected.Name != "scripted-pro" {
		t.Fatalf("select %+v %v", sel, err)
	}
	h, err := c.Health(ctx)
	if err != nil || h.AutomateModelSelection == nil || h.AutomateModelSelection.ModelName != "scripted-pro" {
		t.Fatalf("health pin %+v %v", h.AutomateModelSelection, err)
	}
	if _, err := c.SelectModel(ctx, automate.SelectRequest{Family: "scripted"}); !errors.Is(err, automate.ErrInvalidRequest) {
		t.Fatalf("ambiguous select: want ErrInvalidRequest, got %v", err)
	}
	if _, err := c.SelectModel(ctx, automate.SelectRequest{}); err != nil {
		t.Fatalf("unpin: %v", err)
	}
}

func TestIntegrationDiscover(t *testing.T) {
	quiet := slog.New(slog.DiscardHandler)
	srv, err := server.New(server.Config{Key: realKey, Assistant: scripted.New(scripted.Config{Logger: quiet}),
		Workspace: t.TempDir(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ln, _, err := server.ListenWith(server.ListenOptions{Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: srv.Handler()}
	go hs.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Close(ctx)
		hs.Shutdown(ctx)
	})
	// Another program that answers HTTP (a telemetry collector).
	otel := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(otel.Close)
	// A closed port.
	closed, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := closed.Addr().(*net.TCPAddr).Port
	closed.Close()
	realPort := ln.Addr().(*net.TCPAddr).Port
	ports := []int{otel.Listener.Addr().(*net.TCPAddr).Port, closedPort, realPort}

	d, err := automate.Discover(context.Background(), automate.DiscoverOptions{Key: realKey, Ports: ports, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if d.Port != realPort || d.Health.Service != automate.ServiceID || d.Health.Workspace != srv.Workspace() {
		t.Fatalf("discovered %+v", d)
	}
	c, err := automate.NewClient(automate.ClientOptions{BaseURL: d.BaseURL, Key: realKey, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := c.Run(context.Background(), automate.RunRequest{Prompt: "hi\n#!answer found you"})
	if err != nil || rec.Answer != "found you" {
		t.Fatalf("run on discovered server: %v %v", rec, err)
	}

	_, err = automate.Discover(context.Background(), automate.DiscoverOptions{Key: "another-key-0123456789abcdefghij", Ports: ports, Logger: quiet})
	want := fmt.Sprintf("an Automate server answered on 127.0.0.1:%d but rejected the access key", realPort)
	if !errors.Is(err, automate.ErrUnauthorized) || !strings.Contains(err.Error(), want) {
		t.Fatalf("wrong key: want %q, got %v", want, err)
	}
}

// A chat tool loop whose parked run expired must not run the task again:
// the server takes stale tool messages for a new conversation.
func TestIntegrationChatWithToolsNeverRunsTwice(t *testing.T) {
	rs := startReal(t, 300*time.Millisecond)
	c := rs.client(t, automate.ClientOptions{})
	var calls int
	slow := func(ctx context.Context, tc []automate.ToolCall) ([]automate.ToolResult, error) {
		calls++
		waitHealth(t, c, "the parked run to expire", func(h *automate.Health) bool { return !h.Busy })
		return []automate.ToolResult{automate.TextResult(tc[0].ID, "late")}, nil
	}
	req := automate.ChatRequest{
		Messages: []automate.ChatMessage{automate.TextMessage("user", "weather\n#!tool get_weather {}\n#!answer sunny")},
		Tools:    []automate.ChatTool{{Type: "function", Function: automate.ChatFunction{Name: "get_weather"}}},
	}
	_, err := c.ChatWithTools(context.Background(), req, automate.ToolLoop{Execute: slow})
	if !errors.Is(err, automate.ErrRunLost) {
		t.Fatalf("ChatWithTools = %v, want ErrRunLost", err)
	}
	if calls != 1 {
		t.Errorf("the executor ran %d times", calls)
	}
	if h, err := c.Health(context.Background()); err != nil || h.Busy {
		t.Errorf("a run is left behind: %+v %v", h, err)
	}
}

// A caller that stops waiting under LeaveRunning sends no cancel: the run
// goes on on the server.
func TestIntegrationLeaveRunningSendsNoCancel(t *testing.T) {
	rs := startReal(t, time.Minute)
	// A give-up would force-cancel (which ends the run at once) were it sent.
	c := rs.client(t, automate.ClientOptions{ForceCancelOnGiveUp: true})
	ctx, cancel := context.WithCancel(automate.LeaveRunning(context.Background()))
	done := make(chan error, 1)
	go func() {
		_, err := c.Run(ctx, automate.RunRequest{Prompt: "long\n#!sleep 60000"})
		done <- err
	}()
	waitHealth(t, c, "the run to start", func(h *automate.Health) bool { return h.Busy })
	cancel()
	// A give-up sends its cancel before Run returns (abandon is
	// synchronous): the error says none was sent, and the run still holds
	// the slot right after.
	err := <-done
	var ae *automate.AbandonedError
	if !errors.Is(err, context.Canceled) || !errors.As(err, &ae) || ae.CancelSent {
		t.Fatalf("Run = %v (%+v)", err, ae)
	}
	h, err := c.Health(context.Background())
	if err != nil || !h.Busy {
		t.Fatalf("the run was cancelled: %+v %v", h, err)
	}
	c.Cancel(context.Background(), true)
}

// TestIntegrationChatProductWord: a client configured with the server's
// product word sends the extension object under it and reads the record
// from it; the same word finds the server through Discover.
func TestIntegrationChatProductWord(t *testing.T) {
	quiet := slog.New(slog.DiscardHandler)
	srv, err := server.New(server.Config{Key: realKey, Product: "acme", Assistant: scripted.New(scripted.Config{Logger: quiet}),
		Workspace: t.TempDir(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	defer srv.Close(context.Background())
	r := &realServer{srv: srv, url: ts.URL}

	contract := "End with FINAL ANSWER: <n>"
	req := automate.NewChatRequest("#!answer The sum is 12. FINAL ANSWER: 12")
	req.Service = &automate.ChatService{AnswerContract: &contract}
	comp, err := r.client(t, automate.ClientOptions{Product: "acme"}).Chat(context.Background(), req)
	if err != nil || comp.Service == nil || comp.Service.FinalAnswer == nil || *comp.Service.FinalAnswer != "12" || comp.Text() != "12" {
		t.Fatalf("acme chat: %+v %v", comp, err)
	}
	// A client of the spec's word finds no record there.
	if _, err := r.client(t, automate.ClientOptions{}).Chat(context.Background(), automate.NewChatRequest("hi")); err == nil {
		t.Fatal("a client of the default word read acme's answer")
	}
	if _, err := automate.NewClient(automate.ClientOptions{BaseURL: ts.URL, Key: realKey, Product: "Not Valid"}); err == nil {
		t.Fatal("an invalid product word was accepted")
	}
}

// TestIntegrationDiscoverAutoProductWord: the real server configured with
// another product word is found by ProductAuto past a telemetry collector
// answering 200 with text and a real server of another key (401) on lower
// ports; the client then speaks that word (chat extension and record under
// "acme").
func TestIntegrationDiscoverAutoProductWord(t *testing.T) {
	quiet := slog.New(slog.DiscardHandler)
	lns := make([]net.Listener, 3)
	for i := range lns {
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns[i] = ln
	}
	slices.SortFunc(lns, func(a, b net.Listener) int { return a.Addr().(*net.TCPAddr).Port - b.Addr().(*net.TCPAddr).Port })
	serve := func(ln net.Listener, h http.Handler) {
		hs := &http.Server{Handler: h}
		go hs.Serve(ln)
		t.Cleanup(func() { hs.Close() })
	}
	serve(lns[0], http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("collector up"))
	}))
	for i, cfg := range []server.Config{
		{Key: "someone-elses-key-0123456789abcdefghij", Product: "other"},
		{Key: realKey, Product: "acme"},
	} {
		cfg.Assistant, cfg.Workspace, cfg.Logger = scripted.New(scripted.Config{Logger: quiet}), t.TempDir(), quiet
		srv, err := server.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			srv.Close(ctx)
		})
		serve(lns[i+1], srv.Handler())
	}
	ports := make([]int, len(lns))
	for i, ln := range lns {
		ports[i] = ln.Addr().(*net.TCPAddr).Port
	}

	d, err := automate.Discover(context.Background(), automate.DiscoverOptions{Key: realKey, Product: automate.ProductAuto, Ports: ports, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if d.Port != ports[2] || d.Product != "acme" || d.Health.Service != "acme-agent" {
		t.Fatalf("discovered %+v, want acme on %d", d, ports[2])
	}
	c, err := automate.NewClient(automate.ClientOptions{BaseURL: d.BaseURL, Key: realKey, Product: d.Product, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	contract := "End with FINAL ANSWER: <n>"
	req := automate.NewChatRequest("#!answer The sum is 12. FINAL ANSWER: 12")
	req.Service = &automate.ChatService{AnswerContract: &contract}
	comp, err := c.Chat(context.Background(), req)
	if err != nil || comp.Service == nil || comp.Service.FinalAnswer == nil || *comp.Service.FinalAnswer != "12" {
		t.Fatalf("acme chat: %+v %v", comp, err)
	}
	models, err := c.Models(context.Background())
	if err != nil || len(models.Data) == 0 || models.Data[0].ID != "acme-agent" || models.Data[0].OwnedBy != "acme" {
		t.Fatalf("models %+v %v", models, err)
	}

	// Without the acme server, the other key's server is named.
	_, err = automate.Discover(context.Background(), automate.DiscoverOptions{Key: realKey, Product: automate.ProductAuto, Ports: ports[:2], Logger: quiet})
	want := fmt.Sprintf("an Automate server answered on 127.0.0.1:%d but rejected the access key; no server on", ports[1])
	if !errors.Is(err, automate.ErrUnauthorized) || !strings.Contains(err.Error(), want) {
		t.Fatalf("want %q, got %v", want, err)
	}
	// A server configured with "auto" answers the spec's word.
	srv, err := server.New(server.Config{Key: realKey, Product: automate.ProductAuto, Assistant: scripted.New(scripted.Config{Logger: quiet}),
		Workspace: t.TempDir(), Logger: quiet})
	if err != nil || srv.Product() != automate.DefaultProduct {
		t.Fatalf("server with auto: %v", err)
	}
	srv.Close(context.Background())
}
