package automate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"

	"github.com/hubgate/hubgate/internal/localhttp"
)

// Server-sent events of a streamed run (`stream: true` on POST /v1/runs
// and on the resume route; the desktop application's newer contract).
const (
	EventRunStarted   = "run.started"   // data: RunStarted
	EventRunStep      = "run.step"      // data: a Step, each time one is added or changes
	EventRunStatus    = "run.status"    // data: RunStatusEvent, each time the workflow status changes
	EventRunCompleted = "run.completed" // data: the RunRecord the plain answer would carry
	EventRunError     = "error"         // data: the ErrorEnvelope the plain answer would carry
)

// RunStarted is the data of run.started.
type RunStarted struct {
	RequestID string    `json:"requestId"`
	TaskID    string    `json:"taskId,omitempty"`
	StartedAt Timestamp `json:"startedAt"`
	// Resumed is true on the resume route's stream.
	Resumed bool `json:"resumed,omitempty"`
}

// RunStatusEvent is the data of run.status.
type RunStatusEvent struct {
	WorkflowStatus string `json:"workflowStatus"`
}

// Progress receives a run's progress while RunProgress or
// ResumeRunProgress waits for its outcome. Nil functions are skipped. They
// are called one at a time, in the order things happened, and never after
// the method has returned; they should return quickly (a slow one delays
// reading the stream, never the run).
type Progress struct {
	// OnStarted receives the run's request id as soon as the server says
	// it started (streamed answers only).
	OnStarted func(RunStarted)
	// OnStep receives each step as it is added or changes (match steps by
	// Index; the last one received for an index is its current state).
	// Only a streaming server reports steps.
	OnStep func(Step)
	// OnStatus receives the workflow status each time it changes: from the
	// stream's run.status, or, from a server that answers plain JSON, from
	// /health read every ClientOptions.HealthPoll while the answer is
	// awaited (the status of whatever holds the server's slot).
	OnStatus func(workflowStatus string)
}

// RunProgress is Run, reporting progress to p as it happens: it asks for a
// streamed answer, and reads it when the server streams (our server does;
// the desktop application does in its newer versions); a server that
// answers the plain record instead is followed through /health while the
// answer is awaited. The record and the errors are Run's in both cases;
// the POST is never retried.
func (c *Client) RunProgress(ctx context.Context, req RunRequest, p Progress) (*RunRecord, error) {
	ctx, cancel := context.WithTimeout(ctx, req.EffectiveTimeout()+c.margin)
	defer cancel()
	return c.startRun(ctx, req, &p)
}

// ResumeRunProgress is ResumeRun, reporting progress to p as RunProgress
// does.
func (c *Client) ResumeRunProgress(ctx context.Context, parked *RunRecord, results []ToolResult, p Progress) (*RunRecord, error) {
	if parked == nil || parked.ResumeToken == "" {
		return nil, errors.New("automate: resume: the record carries no resume token (the run is not parked)")
	}
	ctx, cancel := context.WithTimeout(ctx, c.resumeTimeout)
	defer cancel()
	return c.resume(ctx, parked.ResumeToken, parked.RequestID, results, &p)
}

// postRunProgress is postRun for a streamed answer: /health is followed
// until the answer's headers arrive; an event stream is then read to its
// run.completed, a plain answer decoded as postRun decodes it.
func (c *Client) postRunProgress(ctx context.Context, path string, body any, requestID string, p Progress) (*RunRecord, error) {
	stopFollowing := c.followHealth(ctx, p.OnStatus)
	hr, sent, start, err := c.send(ctx, "POST", path, body, "text/event-stream, application/json")
	stopFollowing()
	if err != nil {
		if (sent || requestID != "") && ctx.Err() != nil {
			return nil, c.abandon(ctx, "POST "+logPath(path), requestID, err)
		}
		return nil, err
	}
	defer hr.Body.Close()
	if mt, _, _ := mime.ParseMediaType(hr.Header.Get("Content-Type")); mt == "text/event-stream" && hr.StatusCode == http.StatusOK {
		return c.readRunStream(ctx, hr, path, requestID, p)
	}
	resp, err := c.read(hr, "POST", path, start)
	if err != nil {
		if ctx.Err() != nil {
			return nil, c.abandon(ctx, "POST "+logPath(path), requestID, err)
		}
		return nil, err
	}
	return c.decodeRecord(resp)
}

// readRunStream reads a streamed run answer to its last event.
func (c *Client) readRunStream(ctx context.Context, hr *http.Response, path, requestID string, p Progress) (*RunRecord, error) {
	er := localhttp.NewEventReader(hr.Body, int(min(c.maxBody, 1<<30)))
	lastStatus := ""
	for {
		ev, err := er.Next()
		if err != nil {
			if ctx.Err() != nil {
				return nil, c.abandon(ctx, "POST "+logPath(path), requestID, fmt.Errorf("automate: POST %s: %w", logPath(path), ctx.Err()))
			}
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			// The run may go on: the caller decides (the request id is in
			// the error when the stream said it).
			return nil, fmt.Errorf("automate: POST %s: the event stream ended before run.completed (request id %q): %w", logPath(path), requestID, err)
		}
		resp := &response{method: "POST", path: logPath(path), status: http.StatusOK, contentType: hr.Header.Get("Content-Type"), body: ev.Data}
		switch ev.Name {
		case EventRunStarted:
			var s RunStarted
			if json.Unmarshal(ev.Data, &s) == nil && s.RequestID != "" {
				requestID = s.RequestID
				if p.OnStarted != nil {
					p.OnStarted(s)
				}
			}
		case EventRunStep:
			var st Step
			if json.Unmarshal(ev.Data, &st) == nil && p.OnStep != nil {
				p.OnStep(st)
			}
		case EventRunStatus:
			var s RunStatusEvent
			if json.Unmarshal(ev.Data, &s) == nil && s.WorkflowStatus != lastStatus {
				lastStatus = s.WorkflowStatus
				if p.OnStatus != nil {
					p.OnStatus(s.WorkflowStatus)
				}
			}
		case EventRunCompleted:
			// The record's own status says what the plain answer's HTTP
			// status would have: 500 for a run that ended otherwise.
			var head struct {
				Status RunStatus `json:"status"`
			}
			_ = json.Unmarshal(ev.Data, &head)
			if head.Status != StatusCompleted && head.Status != StatusAwaitingToolResults {
				resp.status = http.StatusInternalServerError
			}
			return c.decodeRecord(resp)
		case EventRunError:
			// The only errors after a run started are 400s (run timeout,
			// initialization failure).
			resp.status = http.StatusBadRequest
			return nil, c.errorFor(resp)
		}
	}
}

// followHealth reports /health's workflowStatus to onStatus every
// c.healthPoll (on c.after) until stop is called; stop waits for the
// follower to end. Errors reading /health are skipped: the run's answer
// decides.
func (c *Client) followHealth(ctx context.Context, onStatus func(string)) (stop func()) {
	if onStatus == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		last := ""
		for {
			select {
			case <-ctx.Done():
				return
			case <-c.after(c.healthPoll):
			}
			h, err := c.Health(ctx)
			if err != nil || ctx.Err() != nil || h.WorkflowStatus == last {
				continue
			}
			last = h.WorkflowStatus
			onStatus(last)
		}
	}()
	return func() { cancel(); wg.Wait() }
}
