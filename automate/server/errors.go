package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/internal/localhttp"
)

// Error kinds a handler returns. Each maps to one HTTP answer through
// errorTable; the message of the envelope is the error's own text.
var (
	errUnauthorized   = errors.New("unauthorized")
	errNotFound       = errors.New("not found")
	errConflict       = errors.New("conflict")
	errInvalidRequest = errors.New("invalid request")
	// Model mode (see modelmode.go): the model could not be loaded, the
	// model server failed, the call was stopped by a cancel.
	errModelUnavailable = errors.New("model unavailable")
	errModelFailed      = errors.New("model failed")
	errCallCanceled     = errors.New("call canceled")
	errForbidden        = errors.New("forbidden")
	// A wrong method on a route of the newer contract (newer.go); the
	// spec's own routes answer a wrong method with 404.
	errMethodNotAllowed = errors.New("method not allowed")
	// The server is closing (Close was called): no new work is taken.
	errShuttingDown = errors.New("shutting down")
)

// errTypePermission is the envelope type of a refused Host header (the
// contract lists no 403; see docs/automate-server.md).
const errTypePermission = "permission_error"

// errTypeShuttingDown is the envelope type of a closing server's refusal
// (the contract is silent on shutdown; see docs/automate-server.md).
const errTypeShuttingDown = "service_unavailable"

// errorTable is the one place that maps errors to HTTP answers.
var errorTable = []struct {
	kind   error
	status int
	typ    string
}{
	{errUnauthorized, http.StatusUnauthorized, automate.ErrTypeAuthentication},
	{errNotFound, http.StatusNotFound, automate.ErrTypeNotFound},
	{errConflict, http.StatusConflict, automate.ErrTypeConflict},
	{errInvalidRequest, http.StatusBadRequest, automate.ErrTypeInvalidRequest},
	{errMethodNotAllowed, http.StatusMethodNotAllowed, automate.ErrTypeInvalidRequest},
	{errModelUnavailable, http.StatusServiceUnavailable, "model_unavailable"},
	{errModelFailed, http.StatusBadGateway, "upstream_error"},
	{errCallCanceled, http.StatusInternalServerError, "canceled"},
	{errForbidden, http.StatusForbidden, errTypePermission},
	{errShuttingDown, http.StatusServiceUnavailable, errTypeShuttingDown},
}

// apiError is an error with an exact envelope message and a kind from
// errorTable.
type apiError struct {
	kind error
	msg  string
	code string // ErrorBody.Code; "" for none
}

func (e *apiError) Error() string { return e.msg }
func (e *apiError) Unwrap() error { return e.kind }

func invalid(format string, args ...any) error {
	return &apiError{kind: errInvalidRequest, msg: fmt.Sprintf(format, args...)}
}

// Fixed answers of the contract.
var (
	errUnauthorizedAnswer = &apiError{kind: errUnauthorized, msg: "Unauthorized"}
	errNotFoundAnswer     = &apiError{kind: errNotFound, msg: "Not found"}
	errNoParkedRun        = &apiError{kind: errNotFound, msg: "No suspended run matches that resume token"}
	errBodyTooLarge       = &apiError{kind: errInvalidRequest, msg: "Request body exceeds 1 MiB"}
	errMalformedJSON      = &apiError{kind: errInvalidRequest, msg: "Malformed JSON"}
	errHostRefusedAnswer  = &apiError{kind: errForbidden, msg: "Forbidden: the Host header must name the loopback (127.0.0.1, [::1] or localhost)"}
	errShuttingDownAnswer = &apiError{kind: errShuttingDown, msg: "The Automate server is shutting down"}
)

// slotRefusalLocked is the answer of a route that needs the inference slot
// (run, chat, select) when it cannot take it, or nil when the slot is
// free; s.mu is held. A closing server says so (503) instead of calling
// itself busy: no run holds the slot and none will.
func (s *Server) slotRefusalLocked() error {
	switch {
	case s.closed:
		return errShuttingDownAnswer
	case s.active != nil || s.model != nil || s.switching:
		return busyError(s.workflowStatus)
	}
	return nil
}

// busyError is the 409 of a slot taken by a run, a model call or a model
// switch. It names an in-progress status: a status that means "ready"
// (idle, terminated) is seen only in the moment between taking the slot
// and the engine's first status, or while a model switch holds the slot,
// and reads `initializing` then.
func busyError(workflowStatus string) error {
	if automate.WorkflowReady(workflowStatus) {
		workflowStatus = automate.WorkflowInitializing
	}
	return &apiError{kind: errConflict, msg: fmt.Sprintf("The on-device assistant is already running or preparing (%s)", workflowStatus)}
}

func runTimedOut(ms int64) error {
	return invalid("Automate run timed out after %dms", ms)
}

// writeError answers err with the envelope errorTable assigns to it; an
// error outside the table is a 500 whose detail stays in the log.
func writeError(w http.ResponseWriter, log *slog.Logger, err error) {
	status, env := errorAnswer(log, err)
	writeJSON(w, log, status, env)
}

// errorAnswer is the status and envelope errorTable assigns to err.
func errorAnswer(log *slog.Logger, err error) (int, automate.ErrorEnvelope) {
	var ae *apiError
	if errors.As(err, &ae) {
		for _, row := range errorTable {
			if errors.Is(ae, row.kind) {
				return row.status, automate.ErrorEnvelope{Error: automate.ErrorBody{Message: ae.msg, Type: row.typ, Code: ae.code}}
			}
		}
	}
	log.Error("internal error", "err", err)
	return http.StatusInternalServerError, automate.ErrorEnvelope{Error: automate.ErrorBody{Message: "Internal server error", Type: "internal_error"}}
}

// contractJSON writes with the headers every answer of the contract
// carries.
var contractJSON = localhttp.JSON{NoStore: true, Fallback: []byte(`{"error":{"message":"Internal server error","type":"internal_error"}}`)}

// writeJSON writes v as an answer of the contract.
func writeJSON(w http.ResponseWriter, log *slog.Logger, status int, v any) {
	if err := contractJSON.Write(w, status, v); err != nil {
		log.Error("encode response", "err", err)
	}
}
