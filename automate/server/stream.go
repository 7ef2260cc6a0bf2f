package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/internal/localhttp"
)

// Streamed runs (`stream: true` on POST /v1/runs and on the resume route):
// the answer is server-sent events instead of the one record. See
// docs/automate-server.md for the events and the facts they follow.

// progress is one thing that happened in a run: a step added or changed,
// or a new workflow status.
type progress struct {
	step   *automate.Step
	status string
}

// feed is one streamed answer's view of a run's progress: an unbounded
// queue, so that the engine never waits for a slow reader and no step is
// dropped; the reader is woken through signal.
type feed struct {
	mu     sync.Mutex
	items  []progress
	signal chan struct{} // capacity 1
}

func (f *feed) push(p progress) {
	f.mu.Lock()
	f.items = append(f.items, p)
	f.mu.Unlock()
	select {
	case f.signal <- struct{}{}:
	default:
	}
}

func (f *feed) take() []progress {
	f.mu.Lock()
	defer f.mu.Unlock()
	items := f.items
	f.items = nil
	return items
}

// publishLocked hands p to every feed of the run; r.mu is held, so feeds
// see progress in the order the engine reported it.
func (r *run) publishLocked(p progress) {
	for _, f := range r.feeds {
		f.push(p)
	}
}

// subscribe adds a feed to the run: it sees the progress reported from
// now on (a streamed run subscribes before its engine starts, a resume
// before the run resumes, so that no step is missed).
func (r *run) subscribe() *feed {
	f := &feed{signal: make(chan struct{}, 1)}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.feeds = append(r.feeds, f)
	return f
}

func (r *run) unsubscribe(f *feed) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, g := range r.feeds {
		if g == f {
			r.feeds = append(r.feeds[:i], r.feeds[i+1:]...)
			return
		}
	}
}

// streamAnswer answers a run as server-sent events: run.started at once,
// then run.step and run.status as they happen, then run.completed with
// the record the plain answer would carry (parked or ended), or an error
// event with the envelope the plain answer would carry. A keep-alive
// comment goes out every s.keepAlive. The caller going away ends the
// stream, never the run.
func (s *Server) streamAnswer(w http.ResponseWriter, r *http.Request, run *run, f *feed, resumed bool) {
	defer run.unsubscribe(f)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	es := localhttp.NewEventStream(w)
	// The write deadlines below must not outlive the answer on a kept-alive
	// connection (the server sets none per request).
	defer func() { _ = es.Controller().SetWriteDeadline(time.Time{}) }()
	send := func(name string, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		_ = es.Controller().SetWriteDeadline(time.Now().Add(sseWriteTimeout))
		return es.Event("", name, b)
	}
	if send(automate.EventRunStarted, automate.RunStarted{RequestID: run.id, TaskID: run.spec.taskID,
		StartedAt: automate.Timestamp{Time: run.started}, Resumed: resumed}) != nil {
		return
	}
	tick := time.NewTicker(s.keepAlive)
	defer tick.Stop()
	lastStatus := ""
	flush := func() error {
		for _, p := range f.take() {
			var err error
			switch {
			case p.step != nil:
				err = send(automate.EventRunStep, p.step)
			case p.status != lastStatus:
				lastStatus = p.status
				err = send(automate.EventRunStatus, automate.RunStatusEvent{WorkflowStatus: p.status})
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	for {
		if flush() != nil {
			return
		}
		run.mu.Lock()
		ph, rec, endErr, changed := run.phase, run.snapshot, run.endErr, run.changed
		run.mu.Unlock()
		if ph != phaseRunning {
			// Everything the engine reported before parking or ending is
			// queued already (it is published under run.mu).
			if flush() != nil {
				return
			}
			if endErr != nil {
				_, env := errorAnswer(s.log, endErr)
				_ = send(automate.EventRunError, env)
				return
			}
			_ = es.Controller().SetWriteDeadline(time.Now().Add(sseWriteTimeout))
			if err := sendRecord(es, automate.EventRunCompleted, rec); err != nil && !errors.Is(err, localhttp.ErrStreamBroken) {
				s.log.Error("encode record", "request_id", rec.RequestID, "err", err)
			}
			return
		}
		select {
		case <-changed:
		case <-f.signal:
		case <-tick.C:
			_ = es.Controller().SetWriteDeadline(time.Now().Add(sseWriteTimeout))
			if es.Comment("keep-alive") != nil {
				return
			}
		case <-r.Context().Done():
			return // the caller went away; the run goes on (cancel is explicit)
		}
	}
}
