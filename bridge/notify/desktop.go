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

// AppName is the application name notifications carry.
const AppName = "hubgate"
