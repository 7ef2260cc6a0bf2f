package automate

import (
	"context"
	"fmt"
)

// CancelResult is what CancelIfActive saw and did.
type CancelResult struct {
	// Health is the /health answer the decision was made on; nil when
	// /health could not be asked.
	Health *Health
	// Active reports that the run was active, so a cancel was sent (or its
	// sending failed: then the error says why).
	Active bool
	// Response is the cancel's answer; nil when none was sent or it failed.
	Response *CancelResponse
}

// CancelIfActive stops a run only while the server still runs it: it asks
// /health, and posts POST /v1/automate/cancel (force as Cancel takes it)
// when the run is active. A requestID names the run: it is active while
// /health reports it as activeRequestId. An empty requestID means whatever
// this server runs: active while /health reports busy. A run parked for
// caller tool results counts as active in both cases (the spec: it still
// holds the slot).
//
// The cancel route stops whatever runs, not a given id, so a run that
// ends in the moment between the check and the cancel lets the cancel hit
// a run started in that moment; the window is one round trip.
//
// The error is that of the health check (nothing was sent) or of the
// cancel (Active is true). ctx bounds both requests, each also bounded by
// ClientOptions.RequestTimeout.
func (c *Client) CancelIfActive(ctx context.Context, requestID string, force bool) (CancelResult, error) {
	var res CancelResult
	h, err := c.Health(ctx)
	if err != nil {
		return res, fmt.Errorf("health check before cancel: %w", err)
	}
	res.Health = h
	if requestID != "" {
		res.Active = h.ActiveRequestID != nil && *h.ActiveRequestID == requestID
	} else {
		res.Active = h.Busy
	}
	if !res.Active {
		return res, nil
	}
	cr, err := c.Cancel(ctx, force)
	if err != nil {
		return res, fmt.Errorf("cancel: %w", err)
	}
	res.Response = cr
	return res, nil
}

// leaveRunning marks a context whose end must not cancel the run.
type leaveRunning struct{}

// LeaveRunning returns a context for requests whose run must go on when
// the caller stops waiting for it (a daemon that shuts down and leaves the
// run to the server): when it ends, the client sends no explicit cancel.
func LeaveRunning(ctx context.Context) context.Context {
	return context.WithValue(ctx, leaveRunning{}, true)
}

// abandon handles a caller giving up on a run request: a client-side abort
// does not stop the run, so it cancels explicitly (CancelIfActive, force
// per ClientOptions.ForceCancelOnGiveUp) when the run is still going, unless
// ctx is LeaveRunning. With a known requestID only that run is cancelled;
// without one, whatever the server runs.
func (c *Client) abandon(ctx context.Context, op, requestID string, cause error) error {
	ae := &AbandonedError{Op: op, RequestID: requestID, Err: cause}
	if ctx.Value(leaveRunning{}) != nil {
		c.log.Info("automate run left running by the caller", "op", op, "requestId", requestID)
		return ae
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.cancelTimeout)
	defer cancel()
	res, err := c.CancelIfActive(cctx, requestID, c.forceOnGiveUp)
	ae.CancelSent, ae.Cancel, ae.CancelErr = res.Active, res.Response, err
	switch {
	case err != nil && !res.Active:
		c.log.Warn("automate run abandoned; could not check whether it is still active",
			"op", op, "requestId", requestID, "err", err)
	case err != nil:
		c.log.Warn("automate run abandoned; explicit cancel failed", "op", op, "requestId", requestID, "err", err)
	case !res.Active:
		c.log.Info("automate run abandoned; it is no longer active", "op", op, "requestId", requestID)
	default:
		c.log.Warn("automate run abandoned; explicit cancel sent", "op", op, "requestId", requestID,
			"stopped", res.Response.Stopped, "mode", res.Response.Mode, "force", c.forceOnGiveUp)
	}
	return ae
}
