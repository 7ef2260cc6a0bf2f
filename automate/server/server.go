// Package server owns the Automate server: the loopback HTTP server of
// docs/specs/automate-server.md, implemented over an assistant.Assistant
// engine. It owns the Host check, authentication, the routes and their exact
// answers, the body limit, the single inference slot, the run lifecycle
// (parking, timeouts, soft and force cancel), the record and the per-run
// limits on steps and event bytes, the OpenAI-style
// chat mapping and streaming, model mode (on the chat route and as a
// /v1/runs run with mode "model"), the model catalog and pin, /health,
// the newer vendor contract's routes (tools, settings, speech status, 405
// on a wrong method there), and the one way to run it (Start: listen in
// the port window 127.0.0.1:4317..4328, the ledger of its runs' process
// groups, serve, a bounded close), used by the daemon and `hubgate
// automate serve`. It knows nothing of hubs or devices.
//
// Design notes, the real application's facts followed and the choices where
// the spec is silent: docs/automate-server.md.
package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/assistant"
	"github.com/hubgate/hubgate/internal/localhttp"
)

// Server is an Automate server. Create it with New; serve its Handler.
type Server struct {
	cfg         Config
	engine      assistant.Assistant
	log         *slog.Logger
	now         func() time.Time
	workspace   string
	toolWait    time.Duration
	initTimeout time.Duration
	keepAlive   time.Duration
	maxSteps    int // per run; see Config.MaxRunSteps
	maxEvBytes  int // per run; see Config.MaxRunEventBytes
	appVersion  string
	product     string // the product word
	agentID     string // "<product>-agent"
	sys         systemInfo
	handler     http.Handler
	// healthStatic is the pre-encoded fixed part of /health.
	healthStatic []byte
	keyHash      atomic.Pointer[[sha256.Size]byte]
	baseCtx      context.Context
	stopBase     context.CancelFunc

	mu             sync.Mutex
	active         *run       // the run holding the slot, running or parked
	model          *modelCall // the model-mode call holding the slot
	switching      bool       // a model switch holds the slot
	closed         bool
	workflowStatus string
	pin            *automate.ModelOption // session pin; nil: the application's selection
	appModel       string                // the application's own selection set at launch; "" = engine default
	launchErr      *string
}

// ErrInvalidKey is returned for an access key that breaks the key rules.
var ErrInvalidKey = errors.New("the access key must be at least 24 characters without surrounding white space")

// New returns a server for cfg. It creates the workspace folder.
func New(cfg Config) (*Server, error) {
	if cfg.Assistant == nil {
		return nil, errors.New("server: Config.Assistant is required")
	}
	s := &Server{cfg: cfg, engine: cfg.Assistant, log: cfg.Logger, now: cfg.Now,
		toolWait: cfg.ToolWait, appVersion: cfg.AppVersion, workflowStatus: automate.WorkflowIdle}
	if err := s.SetKey(cfg.Key); err != nil {
		return nil, err
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.toolWait <= 0 {
		s.toolWait = automate.DefaultToolWait
	}
	s.keepAlive = cfg.KeepAlive
	if s.keepAlive <= 0 {
		s.keepAlive = DefaultKeepAlive
	}
	s.initTimeout = cfg.InitTimeout
	if s.initTimeout <= 0 {
		s.initTimeout = automate.InitializationLimit
	}
	if s.appVersion == "" {
		s.appVersion = "dev"
	}
	s.maxSteps, s.maxEvBytes = cfg.MaxRunSteps, cfg.MaxRunEventBytes
	if s.maxSteps <= 0 {
		s.maxSteps = DefaultMaxRunSteps
	}
	if s.maxEvBytes <= 0 {
		s.maxEvBytes = DefaultMaxRunEventBytes
	}
	s.product = automate.ServedProduct(cfg.Product)
	if !automate.ValidProduct(s.product) {
		return nil, fmt.Errorf("server: invalid product word %q: 1 to 32 lowercase letters, digits or hyphens, starting with a letter", s.product)
	}
	s.agentID = automate.AgentID(s.product)
	ws, err := resolveWorkspace(cfg.Workspace)
	if err != nil {
		return nil, err
	}
	s.workspace = ws
	if cfg.WorkspaceRestriction != "" {
		abs, err := filepath.Abs(cfg.WorkspaceRestriction)
		if err != nil {
			return nil, fmt.Errorf("server: workspace restriction: %w", err)
		}
		s.cfg.WorkspaceRestriction = abs
	}
	s.sys = readSystemInfo()
	if err := s.encodeHealthStatic(); err != nil {
		return nil, err
	}
	s.baseCtx, s.stopBase = context.WithCancel(context.Background())
	s.handler = s.routes()
	if ls := cfg.LaunchSelection; ls != (LaunchSelection{}) {
		go s.applyLaunchSelection(ls)
	}
	return s, nil
}

func resolveWorkspace(dir string) (string, error) {
	if dir == "" {
		base, err := os.UserConfigDir()
		if err != nil {
			return "", fmt.Errorf("server: no workspace given and no user config directory: %w", err)
		}
		dir = filepath.Join(base, "hubgate", "automate-http-workspace")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("server: workspace: %w", err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return "", fmt.Errorf("server: create workspace: %w", err)
	}
	return abs, nil
}

// SetKey replaces the access key at once; the old key stops working with
// no grace period.
func (s *Server) SetKey(key string) error {
	if len(key) < automate.MinAccessKeyLength || strings.TrimSpace(key) != key {
		return ErrInvalidKey
	}
	h := sha256.Sum256([]byte("Bearer " + key))
	s.keyHash.Store(&h)
	return nil
}

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

// Workspace returns the absolute workspace folder.
func (s *Server) Workspace() string { return s.workspace }

// Product returns the product word the server answers with.
func (s *Server) Product() string { return s.product }

// Close stops the run in flight (its record ends terminated), clears the
// model pin and waits up to the context's deadline for the run to end.
func (s *Server) Close(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	for s.switching { // a model switch in progress finishes first
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return fmt.Errorf("server: a model switch did not finish: %w", ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
		s.mu.Lock()
	}
	r := s.active
	mc := s.model
	pinned := s.pin != nil
	s.pin = nil
	appModel := s.appModel
	s.mu.Unlock()
	if mc != nil {
		mc.cancel(causeShutdown)
	}
	if r != nil {
		r.cancel(causeShutdown)
		s.engine.Terminate()
		select {
		case <-r.done:
		case <-ctx.Done():
			return fmt.Errorf("server: run %s did not stop: %w", r.id, ctx.Err())
		}
	}
	if pinned {
		_ = s.engine.ActivateModel(ctx, appModel)
	}
	s.stopBase()
	return nil
}

func (s *Server) routes() http.Handler {
	r := chi.NewRouter()
	notFound := func(w http.ResponseWriter, _ *http.Request) { writeError(w, s.log, errNotFoundAnswer) }
	r.NotFound(notFound)
	r.MethodNotAllowed(s.mountNewer(r, notFound))
	r.Get("/health", s.handleHealth)
	r.Get("/v1/models", s.handleModels)
	r.Get("/v1/automate/models", s.handleCatalog)
	r.Post("/v1/automate/models/select", s.handleSelect)
	r.Post("/v1/automate/cancel", s.handleCancel)
	r.Post("/v1/runs", s.handleRun)
	r.Post("/v1/runs/{resumeToken}/tool-results", s.handleResume)
	r.Post("/v1/chat/completions", s.handleChat)
	return localhttp.RequireLoopbackHost(s.refuseHost, s.authenticate(r))
}

// refuseHost answers a request whose Host header does not name the
// loopback (a DNS rebinding page), before authentication and the same way
// for every path.
func (s *Server) refuseHost(w http.ResponseWriter, r *http.Request) {
	writeError(w, s.log, errHostRefusedAnswer)
}

// authenticate answers 401 before routing unless the request carries
// exactly one `Authorization: Bearer <key>` header with the current key.
// The comparison is constant-time over digests, so neither the key nor its
// length leaks through timing. A 401 reads none of the body and closes the
// connection.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		values := r.Header.Values("Authorization")
		ok := len(values) == 1
		if ok {
			got := sha256.Sum256([]byte(values[0]))
			want := s.keyHash.Load()
			ok = subtle.ConstantTimeCompare(got[:], want[:]) == 1
		}
		if !ok {
			localhttp.Refuse(w, r)
			writeError(w, s.log, errUnauthorizedAnswer)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	h := s.Health()
	// The machine fields never change: they were encoded once in New, and
	// only the state fields are encoded per request (the hot path of port
	// discovery and readiness polling).
	dynamic, err := json.Marshal(healthState{
		WorkflowStatus: h.WorkflowStatus, ActiveRequestID: h.ActiveRequestID, ModelName: h.ModelName,
		WorkerRunning: h.WorkerRunning, Busy: h.Busy, AwaitingToolResults: h.AwaitingToolResults,
		Backend: h.Backend, ContextSize: h.ContextSize, LaunchModelSelectionError: h.LaunchModelSelectionError,
		AutomateModelSelection: h.AutomateModelSelection,
	})
	if err != nil {
		writeJSON(w, s.log, http.StatusOK, h)
		return
	}
	body := make([]byte, 0, len(s.healthStatic)+len(dynamic))
	body = append(append(body, s.healthStatic...), dynamic[1:]...)
	contractJSON.WriteEncoded(w, http.StatusOK, body)
}

// healthState are the fields of Health that change while the server runs.
type healthState struct {
	WorkflowStatus            string                   `json:"workflowStatus"`
	ActiveRequestID           *string                  `json:"activeRequestId"`
	ModelName                 *string                  `json:"modelName"`
	WorkerRunning             bool                     `json:"workerRunning"`
	Busy                      bool                     `json:"busy"`
	AwaitingToolResults       bool                     `json:"awaitingToolResults"`
	Backend                   *automate.Backend        `json:"backend"`
	ContextSize               *int                     `json:"contextSize"`
	LaunchModelSelectionError *string                  `json:"launchModelSelectionError"`
	AutomateModelSelection    *automate.ModelSelection `json:"automateModelSelection"`
}

// encodeHealthStatic encodes the fixed fields of /health as the start of a
// JSON object, ending with a comma.
func (s *Server) encodeHealthStatic() error {
	b, err := json.Marshal(struct {
		Status           string `json:"status"`
		Service          string `json:"service"`
		AppVersion       string `json:"appVersion"`
		Platform         string `json:"platform"`
		Architecture     string `json:"architecture"`
		OSRelease        string `json:"osRelease"`
		CPU              string `json:"cpu"`
		LogicalCPUCount  int    `json:"logicalCpuCount"`
		TotalMemoryBytes uint64 `json:"totalMemoryBytes"`
		Workspace        string `json:"workspace"`
	}{"ok", s.agentID, s.appVersion, s.sys.platform, s.sys.architecture, s.sys.osRelease,
		s.sys.cpu, s.sys.cpuCount, s.sys.totalMemory, s.workspace})
	if err != nil {
		return err
	}
	s.healthStatic = append(b[:len(b)-1], ',')
	return nil
}

// Health returns what GET /health answers.
func (s *Server) Health() automate.Health {
	rt := s.engine.Runtime()
	s.mu.Lock()
	h := automate.Health{
		Status:                    "ok",
		Service:                   s.agentID,
		AppVersion:                s.appVersion,
		Platform:                  s.sys.platform,
		Architecture:              s.sys.architecture,
		OSRelease:                 s.sys.osRelease,
		CPU:                       s.sys.cpu,
		LogicalCPUCount:           s.sys.cpuCount,
		TotalMemoryBytes:          s.sys.totalMemory,
		WorkflowStatus:            s.workflowStatus,
		WorkerRunning:             rt.WorkerRunning,
		Busy:                      s.active != nil || s.model != nil,
		Workspace:                 s.workspace,
		Backend:                   rt.Backend,
		ContextSize:               rt.ContextSize,
		LaunchModelSelectionError: s.launchErr,
	}
	if s.active != nil {
		id := s.active.id
		h.ActiveRequestID = &id
	} else if s.model != nil {
		id := s.model.id
		h.ActiveRequestID = &id
	}
	if s.pin != nil {
		h.AutomateModelSelection = &automate.ModelSelection{ModelName: s.pin.Name, Family: s.pin.Family, SizeCode: s.pin.SizeCode}
	}
	active := s.active
	s.mu.Unlock()
	if active != nil {
		active.mu.Lock()
		h.AwaitingToolResults = active.phase == phaseParked
		active.mu.Unlock()
	}
	if rt.ModelName != "" {
		name := rt.ModelName
		h.ModelName = &name
	}
	return h
}

func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	// Each entry's mode is the newer desktop application's field.
	data := []automate.ModelEntry{{ID: s.agentID, Object: "model", OwnedBy: s.product, Mode: automate.ModeAssistant}}
	if s.modelChatter() != nil {
		data = append(data, automate.ModelEntry{ID: automate.ModelID(s.product), Object: "model", OwnedBy: s.product, Mode: automate.ModeModel})
	}
	writeJSON(w, s.log, http.StatusOK, automate.ModelList{Object: "list", Data: data})
}

// readObject reads and parses the JSON object body of r; on failure it
// answers the error itself and reports false.
func (s *Server) readObject(w http.ResponseWriter, r *http.Request, allowEmpty bool) (object, bool) {
	body, err := readBody(w, r)
	var o object
	if err == nil {
		o, err = decodeObject(body, allowEmpty)
	}
	if err != nil {
		writeError(w, s.log, err)
		return nil, false
	}
	return o, true
}

// handleCancel always answers 200: the contract calls cancel safe to call
// unconditionally, so a body that cannot be read or parsed, or a force that
// is not a boolean, counts as {"force": false} instead of failing a caller
// that is trying to stop a run.
func (s *Server) handleCancel(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, s.log, http.StatusOK, s.Cancel(cancelForce(w, r)))
}

// cancelForce reads force from a cancel body: true only for a JSON object
// whose force is the boolean true.
func cancelForce(w http.ResponseWriter, r *http.Request) bool {
	body, err := readBody(w, r)
	if err != nil {
		return false
	}
	o, err := decodeObject(body, true)
	if err != nil {
		return false
	}
	var force bool
	if json.Unmarshal(o["force"], &force) != nil {
		return false
	}
	return force
}

// Cancel stops whatever runs: softly between steps, or at once by killing
// the worker when force holds. It is safe to call when nothing runs.
func (s *Server) Cancel(force bool) automate.CancelResponse {
	s.mu.Lock()
	status := s.workflowStatus
	r := s.active
	mc := s.model
	s.mu.Unlock()
	if mc != nil {
		// A model-mode call is one model step: any cancel stops it at once.
		id := mc.id
		resp := automate.CancelResponse{Stopped: true, RequestID: &id, WorkflowStatus: status, Mode: automate.CancelModeCancel}
		cause := causeSoft
		if force {
			resp.Mode, cause = automate.CancelModeTerminate, causeForce
		}
		mc.cancel(cause)
		if force {
			s.engine.Terminate()
		}
		s.log.Info("model call cancel requested", "request_id", id, "mode", resp.Mode)
		return resp
	}
	if r == nil {
		return automate.CancelResponse{Mode: automate.CancelModeNone, WorkflowStatus: status}
	}
	id := r.id
	resp := automate.CancelResponse{Stopped: true, RequestID: &id, WorkflowStatus: status}
	if force {
		resp.Mode = automate.CancelModeTerminate
		r.cancel(causeForce)
		s.engine.Terminate()
	} else {
		resp.Mode = automate.CancelModeCancel
		r.softStop()
	}
	s.log.Info("run cancel requested", "request_id", id, "mode", resp.Mode)
	return resp
}

func (s *Server) handleRun(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Should-Retry", "false")
	o, ok := s.readObject(w, r, false)
	if !ok {
		return
	}
	mode, err := runMode(o)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	if mode == automate.ModeModel {
		s.handleModelRun(w, r, o)
		return
	}
	spec, err := decodeRunRequest(o, s.cfg.ConfiguredMcpServers)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	run, err := s.startRun(spec)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	if spec.stream {
		s.streamAnswer(w, r, run, run.starter, false)
		return
	}
	s.answer(w, r, run, nativeAnswer)
}

func (s *Server) handleResume(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Should-Retry", "false")
	token := chi.URLParam(r, "resumeToken")
	o, ok := s.readObject(w, r, false)
	if !ok {
		return
	}
	results, err := decodeResults(o)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	stream, err := o.boolean("stream", "stream must be a boolean")
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	run := s.liveRun(token)
	if run == nil {
		writeError(w, s.log, errNoParkedRun)
		return
	}
	if stream {
		f := run.subscribe() // before the run resumes: no step is missed
		run.deliver(results)
		s.streamAnswer(w, r, run, f, true)
		return
	}
	run.deliver(results)
	s.answer(w, r, run, nativeAnswer)
}

// liveRun returns the run that token resumes, or nil.
func (s *Server) liveRun(token string) *run {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active == nil || subtle.ConstantTimeCompare([]byte(s.active.token), []byte(token)) != 1 {
		return nil
	}
	return s.active
}

// answer waits for the run's next outcome and answers it in the shape
// render gives it (the record, or a chat completion).
func (s *Server) answer(w http.ResponseWriter, r *http.Request, run *run, render func(*automate.RunRecord) any) {
	rec, err := run.wait(r.Context())
	switch {
	case err != nil && r.Context().Err() != nil:
		return // the caller went away; the run goes on (cancel is explicit)
	case err != nil:
		writeError(w, s.log, err)
	default:
		v := render(rec)
		if ans, ok := v.(*automate.RunRecord); ok {
			s.writeRecord(w, recordStatus(rec), ans)
			return
		}
		writeJSON(w, s.log, recordStatus(rec), v)
	}
}

func nativeAnswer(rec *automate.RunRecord) any { return rec }

// recordStatus is the HTTP status of a record: 200 for completed and
// parked runs, 500 for runs that ended otherwise.
func recordStatus(rec *automate.RunRecord) int {
	if rec.Status == automate.StatusCompleted || rec.Status == automate.StatusAwaitingToolResults {
		return http.StatusOK
	}
	return http.StatusInternalServerError
}
