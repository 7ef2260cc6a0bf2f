package assistant

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate"
)

func TestResultStopped(t *testing.T) {
	for _, c := range []struct {
		err        error
		wantStatus automate.RunStatus
		wantCode   string
	}{
		{ErrCanceled, automate.StatusCanceled, ""},
		{fmt.Errorf("run: %w", ErrCanceled), automate.StatusCanceled, ""},
		{fmt.Errorf("%w: field %q", ErrUserInputMissing, "x"), automate.StatusCanceled, ""},
		{context.Canceled, automate.StatusCanceled, ""},
		{fmt.Errorf("parked: %w", context.DeadlineExceeded), automate.StatusCanceled, ""},
		{errors.New("the workspace vanished"), automate.StatusFailed, automate.ErrorExecutionFailed},
	} {
		r := &Result{Answer: "partial"}
		r.Stopped(c.err)
		if r.Status != c.wantStatus || r.ErrorCode != c.wantCode || r.Answer != "partial" {
			t.Errorf("Stopped(%v): %s %q (answer %q), want %s %q", c.err, r.Status, r.ErrorCode, r.Answer, c.wantStatus, c.wantCode)
		}
	}
}

// A test engine stores a turn as {prompt, answer}; its thread messages
// are "u:prompt", "t:tool", "a:answer".
type testTurn struct{ prompt, answer string }

func testConversation(maxTurns int, history []testTurn) *Conversation[testTurn, string] {
	return NewConversation(ConversationOptions[testTurn, string]{
		Thread: func(h []testTurn) []string {
			var out []string
			for _, t := range h {
				out = append(out, "u:"+t.prompt, "a:"+t.answer)
			}
			return out
		},
		MaxTurns:  maxTurns,
		TurnStart: func(m string) bool { return m[0] == 'u' },
	}, history)
}

func runOn(c *Conversation[testTurn, string], w *Worker[string], continuation bool, prompt string) []string {
	prior := c.Begin(w, continuation)
	c.End(w, []string{"u:" + prompt, "t:tool", "a:" + prompt + "!"}, testTurn{prompt, prompt + "!"})
	return prior
}

func TestConversationContinuesOnTheWarmWorker(t *testing.T) {
	c := testConversation(0, []testTurn{{"p0", "a0"}})
	if c.Warm() || c.Acquire("m") != nil {
		t.Fatal("warm before any start")
	}
	w := c.Start("m")
	if w.Model != "m" || !c.Warm() || c.Acquire("m") != w {
		t.Fatalf("started %+v, warm %v", w, c.Warm())
	}
	// The new worker's thread is rebuilt from the stored turns.
	if prior := runOn(c, w, true, "p1"); !slices.Equal(prior, []string{"u:p0", "a:a0"}) {
		t.Errorf("first continuation saw %q", prior)
	}
	// The warm thread holds the exact messages (the tool one too).
	if prior := runOn(c, w, true, "p2"); !slices.Equal(prior, []string{"u:p0", "a:a0", "u:p1", "t:tool", "a:p1!"}) {
		t.Errorf("second continuation saw %q", prior)
	}
	if h := c.History(); !slices.Equal(h, []testTurn{{"p0", "a0"}, {"p1", "p1!"}, {"p2", "p2!"}}) {
		t.Errorf("history %v", h)
	}
	// A new conversation forgets both.
	if prior := runOn(c, w, false, "p3"); prior != nil {
		t.Errorf("a new conversation saw %q", prior)
	}
	if h, th := c.History(), c.Thread(w); !slices.Equal(h, []testTurn{{"p3", "p3!"}}) || !slices.Equal(th, []string{"u:p3", "t:tool", "a:p3!"}) {
		t.Errorf("after a new conversation: history %v, thread %q", h, th)
	}
}

func TestConversationBoundsTurns(t *testing.T) {
	c := testConversation(2, nil)
	w := c.Start("m")
	for _, p := range []string{"p1", "p2", "p3"} {
		runOn(c, w, true, p)
	}
	if h := c.History(); !slices.Equal(h, []testTurn{{"p2", "p2!"}, {"p3", "p3!"}}) {
		t.Errorf("history %v, want the last 2 turns", h)
	}
	if th := c.Thread(w); !slices.Equal(th, []string{"u:p2", "t:tool", "a:p2!", "u:p3", "t:tool", "a:p3!"}) {
		t.Errorf("thread %q, want the last 2 turns", th)
	}
}

// TestConversationDroppedWorker: a worker dropped during its run (a force
// cancel, a lost upstream, another model) is not revived by the run's
// end; the turn is stored and the next worker rebuilds its thread from it.
func TestConversationDroppedWorker(t *testing.T) {
	for name, drop := range map[string]func(c *Conversation[testTurn, string], w *Worker[string]){
		"terminate": func(c *Conversation[testTurn, string], w *Worker[string]) {
			if m, ok := c.Terminate(); !ok || m != "m" {
				t.Errorf("Terminate = %q %v, want m true", m, ok)
			}
		},
		"forget":        func(c *Conversation[testTurn, string], w *Worker[string]) { c.Forget(w) },
		"another model": func(c *Conversation[testTurn, string], w *Worker[string]) { c.Acquire("other") },
	} {
		t.Run(name, func(t *testing.T) {
			c := testConversation(0, nil)
			w := c.Start("m")
			c.Begin(w, false)
			drop(c, w)
			c.End(w, []string{"u:p1", "a:p1!"}, testTurn{"p1", "p1!"})
			if c.Warm() || c.Acquire("m") != nil {
				t.Fatal("the dropped worker is warm again")
			}
			if th := c.Thread(w); th != nil {
				t.Errorf("the dropped worker's thread grew: %q", th)
			}
			if prior := c.Begin(c.Start("m"), true); !slices.Equal(prior, []string{"u:p1", "a:p1!"}) {
				t.Errorf("the next worker continues %q", prior)
			}
		})
	}
	c := testConversation(0, nil)
	if m, ok := c.Terminate(); ok || m != "" {
		t.Errorf("Terminate of a cold conversation = %q %v", m, ok)
	}
	w := c.Start("m")
	c.Start("m") // a newer worker
	c.Forget(w)
	if !c.Warm() {
		t.Error("forgetting an older worker dropped the newer one")
	}
}

func TestNewUsage(t *testing.T) {
	for _, c := range []struct {
		in, out         int
		gen, ttft, dec  time.Duration
		wantGen, wantTT int64
		wantTPS         float64
	}{
		{10, 30, 2 * time.Second, 500 * time.Millisecond, time.Second, 2000, 500, 30},
		{10, 30, 2 * time.Second, 500 * time.Millisecond, 0, 2000, 500, 15}, // over gen
		{1, 7, 3 * time.Second, -time.Second, 0, 3000, 0, 2.33},
		{1, 7, 0, 0, 0, 0, 0, 0},
	} {
		u := NewUsage(c.in, c.out, c.gen, c.ttft, c.dec)
		if u.InputTokens != c.in || u.OutputTokens != c.out || u.GenerationMs != c.wantGen || u.TTFTMs != c.wantTT || u.TPS != c.wantTPS {
			t.Errorf("NewUsage(%d, %d, %s, %s, %s) = %+v", c.in, c.out, c.gen, c.ttft, c.dec, *u)
		}
	}
}
