// Package notify owns getting a run's outcome to the person who triggered
// it, who is not looking at a terminal: desktop notifications and speech.
// A Service follows the bridge's event stream (bridge.Subscribe) and turns
//   - each finished run's answer (its final answer when the run had an
//     answer contract) into a notification, and into speech when its rule
//     says speak: true;
//   - each failure (a run that failed or was terminated, a request that
//     failed, a run lost to a restart) and each command not run (dropped,
//     ignored, refused, failed, abandoned, or not recorded by the journal)
//     into a notification saying why: the promise is that a person who
//     pressed a button is told when nothing happens;
//   - each message of the notify tool into a notification;
//
// according to the rule's notify policy, or the configured default:
// answers (all of the above), failures (failures, drops and notify
// messages of level warning), none. A cancelled run is not notified
// (someone asked for it), nor a StopOutputs macro (journaled as ignored,
// it did what was asked); a rule with notify: none, or bridge.notify:
// none, silences the notifications of its commands not run.
//
// Desktop backends (Desktop): the freedesktop org.freedesktop.Notifications
// service on the D-Bus session bus (Linux and the BSDs; godbus), osascript's
// "display notification" on macOS, a PowerShell toast on Windows.
//
// Rules it keeps:
//   - Never block a run: the Service reads its own subscription (a slow
//     notification server makes it lose events, counted, never the bridge
//     wait); every desktop call has a timeout (Options.Timeout).
//   - No notification server: one warning naming the cause, then every
//     notification goes to the log only; the server is tried again after
//     Options.RetryAfter, silently.
//   - Speech, one utterance at a time: a new answer, a new run starting, or
//     a StopOutputs macro cuts off the one being spoken. An answer longer
//     than SpeakerOptions.MaxChars is cut at a sentence or word boundary
//     and ends with "And more in history."
//   - Child processes (osascript, PowerShell, the speech command) run in
//     their own process group with hubgate's secrets removed from their
//     environment (automate/toolkit's helpers), are killed whole on timeout
//     or cut-off, and get the text on stdin or as one argv element, never
//     through a shell.
//
// Progress of a long run (Options.ProgressAfter, bridge.progress_after,
// default 10s, 0s: none): a run still going when it passes the threshold
// gets one notification, "hubgate · <command>: running for 12s", whose
// body is its current step in the event stream's text form. On freedesktop
// desktops (Replacer) the same notification is updated in place at each
// step (replaces_id: the id Notify returned is passed back), and the
// run's final notification replaces it (when the policy shows none, a
// short "finished" does, so no stale step stays on screen). Elsewhere
// (macOS, Windows) the progress notification is shown once, at the
// threshold, and the final one is a new notification. Only rules whose
// policy is answers get progress notifications.
//
// Choices where the issue is silent:
//   - A notification's summary is "hubgate · <command>" (the command as the
//     person said or pressed it), its body the answer; a failure's summary
//     says "failed", its body the error code and message.
//   - The notify tool's level warning maps to critical urgency (it stays on
//     screen), info to normal.
//   - The body is cut at MaxBody characters with a pointer to `hubgate
//     history`. When the server announces body-markup, the summary (it
//     carries the command text from the hub, never trusted) and the body
//     are escaped. The server can change while the daemon runs: each
//     notification asks the bus who owns the name now (about 56 us on a
//     local bus), reads the capabilities again when the owner changed,
//     and is sent to that owner's unique name, so the escaping is decided
//     for the server that receives it (capabilities.go).
package notify
