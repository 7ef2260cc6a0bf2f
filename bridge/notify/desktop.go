package notify

import "context"

// Urgency of a notification (the freedesktop levels).
type Urgency byte

// Urgencies.
const (
	UrgencyLow      Urgency = 0
	UrgencyNormal   Urgency = 1
	UrgencyCritical Urgency = 2
)

// Message is one desktop notification.
type Message struct {
	Summary string
	Body    string
	Urgency Urgency
}

// Desktop shows notifications. Notify must return when ctx ends.
type Desktop interface {
	Notify(ctx context.Context, m Message) error
}

// Replacer is a Desktop that can update a notification in place: the
// freedesktop server's replaces_id. NotifyReplacing shows m in place of the
// notification replaces (0: a new one) and returns the id shown, for the
// next update.
type Replacer interface {
	NotifyReplacing(ctx context.Context, m Message, replaces uint32) (id uint32, err error)
}

// AppName is the application name notifications carry.
const AppName = "hubgate"
