// Package bridge owns the product's core: it turns the device hub's events
// into runs on the Automate server. It matches each DeviceCommand against
// the routing rules (bridge/rules), applies the matched rule's busy policy
// around the one inference slot, runs the caller-executed tool loop (the
// Automate client's RunWithTools, whose hooks journal and publish each
// round) with the tools hubgate itself executes (notify, and the command
// tools the user declared), cancels when asked (a StopOutputs macro, StopListening when
// configured, `hubgate cancel`, shutdown), and writes every command and
// every run to the journal (bridge/journal) before acting on it. Every step
// is also published, in order, on its event stream (Subscribe): what `hubgate
// watch`, the status page, the notifier (bridge/notify) and the demo follow.
// It owns the types of that stream (Event, EventKind, their one text form
// Lines) and of its state (Status, CancelResult): bridge/control,
// bridge/notify and bridge/statuspage import them, never the reverse.
//
// It speaks neither HTTP nor SignalR: it uses the hub client and the
// Automate client through the small interfaces declared here (Hub,
// Automate, Journal), so tests drive it with fakes and the daemon with the
// real clients.
//
// Rules it keeps:
//   - Never a second run in flight: one runner at a time; a command that
//     arrives while a run is in flight follows its rule's busy policy
//     (single: dropped; queue: FIFO up to the rule's limit, expired after its
//     maximum age; restart: the current run is cancelled, then this one
//     starts, and a restart command still waiting for the slot is dropped
//     as superseded: of a burst, only the latest runs).
//   - Never a retried POST that may have started a run: a run request is
//     sent once. Only a 409 (which proves no run started) is followed by a
//     wait for /health to show the server ready, and then by the busy policy
//     (single: dropped; queue and restart: the command waits at the head of
//     the queue and is sent again once the server is ready). hubgate never
//     cancels a run it did not start.
//   - Explicit cancel when it gives up: a soft cancel first, escalated to a
//     force cancel after Options.CancelGrace.
//   - A command is journaled before anything is done with it: one that
//     starts at once with its run (decision "started", in one write), any
//     other as "received"; then its decision (started, queued, dropped, ignored,
//     refused, failed, abandoned) and its run's outcome. After a restart, queued commands that
//     never started are abandoned, or run when their rule opts in and they
//     are younger than its maximum age; a run that was in flight is
//     reconciled with the server and never sent again.
//
// Command identity: a command's journal row names the hub connection it
// arrived on (hub.Event.Session, numbered for the whole process, so a hub
// client that replaces another after a re-pairing never reuses a number)
// and the hub's invocation id. Only the same invocation id on the same
// connection is a duplicate delivery (counted, journaled once, run once):
// SignalR never redelivers on a new connection and hubgate hands each
// event to the bridge once; everything else is a new command (see package
// journal, "Boots and duplicate deliveries").
//
// Choices where the issue is silent:
//   - A macro with a StopOutputs event is a control command: the vendor's
//     clients reset every held output on it, so it cancels the current run
//     and drops every waiting command (journaled as dropped, naming it);
//     it is journaled as ignored, with a note saying so, and is not
//     matched against the rules (other events of the same macro included).
//   - Listening (Options.Listening, bridge.listening): by default
//     (ListenFollowVendor) every DeviceCommand that arrives is acted on, as
//     the vendor's own clients do (none acts on StopListening); the hub's
//     StartListening/StopListening is answered (the hub client does),
//     shown as what the hub asked (Status.HubAsked, an EventListening whose
//     Note says what it does to commands) and noted on the journal row of
//     each command acted on while the hub had asked to stop. With
//     ListenObey such a command is refused (decision refused) with a note
//     saying how to resume, which the notifier shows. "What the hub asked"
//     follows its last request in event order (the hub client confirms it
//     only after the hub answers, and the command right behind a request
//     must be judged by it); before the first request, with ListenObey,
//     the hub client's own state (auto-listen) applies. A StopOutputs macro
//     is acted on either way (it only stops things).
//   - Accounting: every command that reaches the bridge gets exactly one
//     journal row and one decision, counted in Status with the latest
//     reason of each count; a command the journal cannot record is not run
//     (nothing runs unrecorded), counted as unrecorded and published as an
//     EventUnrecorded so that the person is told.
//   - A queue limit counts every queued command, not only the rule's own.
//   - A soft cancel that the run does not honour within CancelGrace is
//     escalated to a force cancel. A cancel asked for right after a run
//     started, before its POST reached the server, waits for it.
//   - A command tool without a workdir runs in the user's home directory.
//
// # Progress, local commands, who stopped a run
//
//   - Each run is followed as it goes (automate.ToolLoop.Progress): every
//     step the server reports, as it is added or changes, is an EventStep
//     (StepInfo: index, title, status, tool, arguments summarised
//     to 120 bytes, result summary, produced file), and every workflow
//     status change an EventRunStatus; a server that answers plain JSON
//     reports no steps, only the statuses read from /health. These events
//     are not journaled: the run record holds the steps, and the journal
//     keeps the outcome. Status shows the current run's steps
//     (CurrentRun.Steps) and those of the last MaxRecentRuns runs
//     that finished in this daemon's life (Status.Recent), kept in memory.
//   - Whoever cancels a run is remembered (the first to ask): `hubgate
//     cancel` (with --force), the status page (WithCancelSource),
//     the StopOutputs macro, a restart rule, StopListening, shutdown. The
//     finished event carries it (StoppedBy) and the journal's note gains
//     "stopped by <who>".
//   - TryCommand routes a command typed on this machine (the status
//     page's "try a command") exactly as a DeviceCommand from the hub
//     without a macro, on the same loop. It is journaled like one, with no
//     hub identity, and its note says "local command: tried on <where>"
//     (a note, not a new column: history and the page show it, and the
//     journal's schema does not change).
//   - Asking the person (ask.go): on runs whose rule allows it
//     (rules.Rule.Ask, default Options.Ask, off so that existing rules
//     behave as before) the run declares ask_person. When the agent calls
//     it, the bridge publishes an EventQuestion (question, choices,
//     deadline; the notifier shows and speaks it) and waits. The person's
//     next hub command that the rule's answers: accepts becomes the tool
//     result: it gets its one journal row, decided answer, is counted
//     (Counters.Answers) and starts no run; a StopOutputs macro is never an
//     answer, nor is a command the listening policy refuses. Bridge.Answer (the status page's answer box, `hubgate
//     answer`) feeds the same path and makes no journal row (it is not a
//     hub command); the EventAnswered says how each answer came. The tool
//     call is journaled as every client tool call is: the run's park and
//     resume. After Options.AskTimeout (100 s, below the server's
//     two-minute round) the result is "No answer: the person did not
//     answer within N s.", so the agent finishes the run on its own terms.
//     One question at a time: a second ask_person call while one waits is
//     answered with an error. A cancel of the run withdraws its question
//     once the cancel is sent, and gives up the round (the server has
//     released the parked run; a resume would find nothing).
package bridge
