package assistant

import (
	"slices"
	"sync"
)

// Worker is an engine's warm worker: the model it serves and the thread of
// the conversation it holds (messages of the engine's form M). Its thread
// belongs to the Conversation that started it.
type Worker[M any] struct {
	Model  string
	thread []M
}

// ConversationOptions configures NewConversation.
type ConversationOptions[T, M any] struct {
	// Thread rebuilds a new worker's thread from the stored turns.
	// Required.
	Thread func(history []T) []M
	// MaxTurns bounds the stored turns and the turns of a worker's thread,
	// the oldest going first. Zero or negative: no bound.
	MaxTurns int
	// TurnStart reports whether a thread message starts a turn (the
	// person's message), for MaxTurns. Nil: every message is a turn.
	TurnStart func(M) bool
}

// Conversation is the bookkeeping every engine keeps between runs: the
// warm worker (nil when cold), and the conversation a run may continue,
// both as the stored turns (T: what survives the worker) and as the warm
// worker's thread. A run takes a worker (Acquire, else Start after its cold
// start), Begins the conversation, and Ends it with its messages and turn.
// Terminate (a force cancel, another model) drops the worker: the next run
// starts cold and rebuilds the thread from the stored turns. Safe for
// concurrent use; it never calls back into the engine, so an engine may
// call it holding its own lock.
type Conversation[T, M any] struct {
	opts ConversationOptions[T, M]

	mu      sync.Mutex
	worker  *Worker[M]
	history []T
}

// NewConversation returns a cold conversation continuing history (the
// stored turns, say from a file; nil: a new conversation).
func NewConversation[T, M any](o ConversationOptions[T, M], history []T) *Conversation[T, M] {
	return &Conversation[T, M]{opts: o, history: history}
}

// Acquire returns the warm worker when it serves model, else nil (a warm
// worker of another model is dropped): the run must cold start.
func (c *Conversation[T, M]) Acquire(model string) *Worker[M] {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.worker != nil && c.worker.Model != model {
		c.worker = nil
	}
	return c.worker
}

// Start installs a new warm worker for model whose thread is rebuilt from
// the stored turns.
func (c *Conversation[T, M]) Start(model string) *Worker[M] {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := &Worker[M]{Model: model, thread: c.opts.Thread(c.history)}
	c.worker = w
	return w
}

// Begin returns the messages that precede the run on w: the worker's
// thread when continuing, none otherwise (a new conversation, which also
// forgets the stored turns).
func (c *Conversation[T, M]) Begin(w *Worker[M], continuation bool) []M {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !continuation {
		c.history = nil
		w.thread = nil
		return nil
	}
	return slices.Clone(w.thread)
}

// End stores the run's turn, and appends the run's messages to w's thread
// unless w was dropped meanwhile; both stay within MaxTurns.
func (c *Conversation[T, M]) End(w *Worker[M], msgs []M, t T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.history = append(c.history, t)
	if n := len(c.history) - c.opts.MaxTurns; c.opts.MaxTurns > 0 && n > 0 {
		c.history = slices.Clone(c.history[n:])
	}
	if c.worker == w {
		w.thread = c.trimLocked(append(w.thread, msgs...))
	}
}

// trimLocked keeps the last MaxTurns turns of a thread.
func (c *Conversation[T, M]) trimLocked(thread []M) []M {
	if c.opts.MaxTurns <= 0 {
		return thread
	}
	turns := 0
	for i := len(thread) - 1; i >= 0; i-- {
		if c.opts.TurnStart == nil || c.opts.TurnStart(thread[i]) {
			turns++
			if turns == c.opts.MaxTurns {
				return slices.Clone(thread[i:])
			}
		}
	}
	return thread
}

// Forget drops w when it is still the warm worker (it was lost: the next
// run cold starts).
func (c *Conversation[T, M]) Forget(w *Worker[M]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.worker == w {
		c.worker = nil
	}
}

// Terminate drops the warm worker, whichever it is, and says which model
// it served (ok false: none was warm). The stored turns stay.
func (c *Conversation[T, M]) Terminate() (model string, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.worker == nil {
		return "", false
	}
	model = c.worker.Model
	c.worker = nil
	return model, true
}

// Warm reports whether a worker is warm.
func (c *Conversation[T, M]) Warm() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.worker != nil
}

// History returns a copy of the stored turns.
func (c *Conversation[T, M]) History() []T {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.history)
}

// Thread returns a copy of w's thread.
func (c *Conversation[T, M]) Thread(w *Worker[M]) []M {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(w.thread)
}
