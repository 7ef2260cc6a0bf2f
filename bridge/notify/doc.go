// Package notify owns getting a run's outcome to the person who triggered
// it, who is not looking at a terminal: desktop notifications (freedesktop
// over D-Bus, osascript, a Windows toast) and speech. A Service follows the
// bridge's event stream and turns each answer, each failure, each command
// not run (with why), each notify tool message, each question the agent
// asks and a long run's progress into notifications, by the rule's notify
// policy. It never blocks a run on a slow notification server.
//
// Policies, backends, markup escaping, progress and speech: docs/notify.md.
package notify
