//go:build darwin

package notify

import "context"

// OSAScript shows notifications with osascript's "display notification"
// (macOS). The texts are passed as arguments of the script, never
// spliced into it.
type OSAScript struct{}

// DefaultDesktop is the platform's notification backend.
func DefaultDesktop() Desktop { return OSAScript{} }

// Notify runs osascript.
func (OSAScript) Notify(ctx context.Context, m Message) error {
	return runChild(ctx, []string{"osascript",
		"-e", "on run argv",
		"-e", "display notification (item 2 of argv) with title (item 1 of argv)",
		"-e", "end run",
		m.Summary, TextArg}, m.Body)
}
