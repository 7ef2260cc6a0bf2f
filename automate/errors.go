package automate

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Sentinels a caller branches on with errors.Is. An *APIError matches the
// one of its HTTP status; a *DiscoveryError matches ErrUnauthorized or
// ErrNoServer; a *RunError matches ErrRunFailed.
var (
	// ErrUnauthorized: 401, the access key is missing or wrong.
	ErrUnauthorized = errors.New("automate: access key rejected")
	// ErrNotFound: 404, an unknown route or a resume token that matches no
	// parked run (timed out, cancelled, stale).
	ErrNotFound = errors.New("automate: not found")
	// ErrBusy: 409, a run is already active or preparing.
	ErrBusy = errors.New("automate: assistant busy")
	// ErrInvalidRequest: 400, validation failure, run timeout,
	// initialization failure, model-selection problem; also 413, which the
	// desktop application's newer server answers for a body over 1 MiB
	// where the spec answers 400.
	ErrInvalidRequest = errors.New("automate: invalid request")
	// ErrRunTimedOut: the 400 answered when the run's timeoutMs elapsed
	// (the run was canceled and no record is returned). It also matches
	// ErrInvalidRequest.
	ErrRunTimedOut = errors.New("automate: run timed out")
	// ErrRunFailed: a run happened and ended failed, canceled or
	// terminated (*RunError).
	ErrRunFailed = errors.New("automate: run did not complete")
	// ErrNoServer: port discovery found no Automate server.
	ErrNoServer = errors.New("automate: no Automate server found")
	// ErrRunLost: a chat tool loop found its parked run gone (its
	// tool-result wait expired, or it was cancelled or timed out); the
	// server took the tool messages for a new conversation and started a
	// fresh run, which the loop cancelled instead of running the task twice.
	ErrRunLost = errors.New("automate: the parked run is gone; its tool results were not delivered")
)

// RunTimedOutPrefix starts the message of the 400 answered when timeoutMs
// elapses ("Automate run timed out after <n>ms").
const RunTimedOutPrefix = "Automate run timed out after"

// RunError is a run that happened and did not complete: the server answered
// HTTP 500 with a record whose schemaVersion is 1 (status failed, canceled
// or terminated). It is not a server fault: the record is the answer.
type RunError struct {
	// Record is the full run record (for chat, the completion's service
	// block).
	Record *RunRecord
	// Completion is the chat-completion body when the run came from
	// POST /v1/chat/completions; nil for the native routes.
	Completion *ChatCompletion
	// HTTPStatus is the status the server answered (500).
	HTTPStatus int
}

func (e *RunError) Error() string {
	var b strings.Builder
	b.WriteString("automate: run")
	if e.Record != nil {
		if e.Record.RequestID != "" {
			b.WriteString(" " + e.Record.RequestID)
		}
		b.WriteString(" ended " + string(e.Record.Status))
		if e.Record.ErrorCode != "" {
			b.WriteString(" (" + e.Record.ErrorCode + ")")
		}
	} else {
		b.WriteString(" did not complete")
	}
	if e.HTTPStatus != 0 {
		b.WriteString(", HTTP " + strconv.Itoa(e.HTTPStatus))
	}
	return b.String()
}

// Is matches ErrRunFailed.
func (e *RunError) Is(target error) bool { return target == ErrRunFailed }

// APIError is a failed request: the server answered an error envelope
// {error: {message, type}}, or 413 with any body. errors.Is matches it
// against the sentinel of its status (ErrUnauthorized, ErrNotFound, ErrBusy,
// ErrInvalidRequest for 400 and 413 and, for a run timeout,
// ErrRunTimedOut).
type APIError struct {
	// Method and Path name the request ("POST", "/v1/runs").
	Method, Path string
	HTTPStatus   int
	// Type is the envelope type (authentication_error, not_found, conflict,
	// invalid_request_error).
	Type    string
	Message string
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("automate: %s %s: HTTP %d", e.Method, e.Path, e.HTTPStatus)
	if e.Type != "" {
		s += " " + e.Type
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Is matches the sentinel of the error's HTTP status or envelope type.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrUnauthorized:
		return e.HTTPStatus == http.StatusUnauthorized || e.Type == ErrTypeAuthentication
	case ErrNotFound:
		return e.HTTPStatus == http.StatusNotFound || e.Type == ErrTypeNotFound
	case ErrBusy:
		return e.HTTPStatus == http.StatusConflict || e.Type == ErrTypeConflict
	case ErrInvalidRequest:
		return e.HTTPStatus == http.StatusBadRequest || e.HTTPStatus == http.StatusRequestEntityTooLarge ||
			e.Type == ErrTypeInvalidRequest
	case ErrRunTimedOut:
		return e.HTTPStatus == http.StatusBadRequest && strings.HasPrefix(e.Message, RunTimedOutPrefix)
	}
	return false
}

// ResponseError is an answer the contract does not allow: a body that is not
// JSON, a JSON body of the wrong shape for its status, a record whose
// schemaVersion this package does not speak, or an answer over the size
// cap. Snippet is the start of the body (at most 200 bytes, access key
// redacted).
type ResponseError struct {
	Method, Path string
	HTTPStatus   int
	ContentType  string
	Reason       string
	Snippet      string
}

func (e *ResponseError) Error() string {
	s := fmt.Sprintf("automate: %s %s: unexpected answer (HTTP %d", e.Method, e.Path, e.HTTPStatus)
	if e.ContentType != "" {
		s += ", " + e.ContentType
	}
	s += "): " + e.Reason
	if e.Snippet != "" {
		s += ": " + strconv.Quote(e.Snippet)
	}
	return s
}

// AbandonedError reports that the caller gave up on a run (its context
// ended, the HTTP deadline passed, or the tool executor failed) while the run
// may still be going on server side. Because a client-side abort does not
// stop a run, the client then sent an explicit cancel when the run was still
// active: Cancel is the server's answer (nil when no cancel was sent) and
// CancelErr the reason a needed cancel could not be sent. errors.Is/As see
// Err (context.Canceled, context.DeadlineExceeded, the executor's error).
type AbandonedError struct {
	// Op is what was abandoned ("POST /v1/runs", "tool executor").
	Op string
	// RequestID is the run's id when it was known.
	RequestID string
	// Err is why the caller gave up.
	Err error
	// CancelSent reports whether POST /v1/automate/cancel was sent.
	CancelSent bool
	// Cancel is the answer of that cancel.
	Cancel *CancelResponse
	// CancelErr is why the check or the cancel failed.
	CancelErr error
}

func (e *AbandonedError) Error() string {
	s := "automate: " + e.Op
	if e.RequestID != "" {
		s += " (run " + e.RequestID + ")"
	}
	s += " abandoned: " + errString(e.Err)
	switch {
	case e.CancelErr != nil:
		s += "; explicit cancel failed: " + e.CancelErr.Error()
	case e.Cancel != nil:
		s += fmt.Sprintf("; cancel sent (stopped=%t, mode=%s)", e.Cancel.Stopped, e.Cancel.Mode)
	default:
		s += "; no run of ours was active, no cancel sent"
	}
	return s
}

func (e *AbandonedError) Unwrap() error { return e.Err }

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// DiscoveryError reports a discovery that found no Automate server this key
// opens. When a server answered 401 on some port, it matches
// ErrUnauthorized; otherwise ErrNoServer.
type DiscoveryError struct {
	Host string
	// Ports are the ports probed, in order.
	Ports []int
	// UnauthorizedPorts answered 401: a server listens there but rejected
	// the access key.
	UnauthorizedPorts []int
	// Want is the /health service looked for ("<product>-agent"); "" reads
	// as ServiceID unless Auto.
	Want string
	// Auto: discovery looked for a server of any product word
	// (ProductAuto).
	Auto bool
	// OtherAgents are servers that took the key but answer as another
	// product's agent (their /health service ends in "-agent"): the
	// product word is probably set wrong.
	OtherAgents []OtherAgent
}

// OtherAgent is an Automate server of another product word.
type OtherAgent struct {
	Port    int
	Service string // its /health service, e.g. "service-agent"
}

func (e *DiscoveryError) Error() string {
	if n := len(e.UnauthorizedPorts); n > 0 {
		s := "automate: an Automate server answered on " + DescribePorts(e.Host, e.UnauthorizedPorts)
		if n > 1 {
			s = "automate: Automate servers answered on " + DescribePorts(e.Host, e.UnauthorizedPorts)
		}
		s += " but rejected the access key"
		if e.Auto {
			s += "; no server on " + DescribePorts(e.Host, e.Ports) + " took it (the key is wrong for that server, or the server is another program's)"
		}
		return s
	}
	if len(e.OtherAgents) > 0 {
		o := e.OtherAgents[0]
		word := strings.TrimSuffix(o.Service, "-agent")
		if e.Auto {
			return fmt.Sprintf("automate: no Automate server found on %s; %s answers as %s but its /health lacks the contract's fields (set the product word to %q to use it anyway)",
				DescribePorts(e.Host, e.Ports), hostPort(e.Host, o.Port), o.Service, word)
		}
		want := e.Want
		if want == "" {
			want = ServiceID
		}
		return fmt.Sprintf("automate: no %s server found on %s; %s answers as %s (set the product word to %q to use it)",
			want, DescribePorts(e.Host, e.Ports), hostPort(e.Host, o.Port), o.Service, word)
	}
	return "automate: no Automate server found on " + DescribePorts(e.Host, e.Ports)
}

// Is matches ErrUnauthorized when a server rejected the key, else ErrNoServer.
func (e *DiscoveryError) Is(target error) bool {
	if len(e.UnauthorizedPorts) > 0 {
		return target == ErrUnauthorized
	}
	return target == ErrNoServer
}
