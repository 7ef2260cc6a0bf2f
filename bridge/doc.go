// Package bridge owns the product's core: it turns the device hub's events
// into runs on the Automate server. It routes each DeviceCommand by the rules
// (bridge/rules), applies the matched rule's busy policy around the one
// inference slot, runs the caller-executed tool loop with the tools hubgate
// executes (notify, command tools, ask_person), cancels when asked, and
// journals every command and run (bridge/journal) before acting on it. It
// keeps the macro catalogue the rules complete commands from, taken from
// every device record the service sends (VerifySelf and GetLatestDevice
// answers, DeviceProfileUpdate, the REST device: takeDevice). Every
// step is published, in order, on its event stream (Subscribe). It owns the
// types of that stream (Event, its one text form Lines) and of its state
// (Status, CancelResult): bridge/control, bridge/notify and
// bridge/statuspage import them, never the reverse. It speaks neither HTTP
// nor SignalR: it uses the hub and Automate clients through the small
// interfaces it declares (Hub, Automate, Journal).
//
// The rules it keeps (one run in flight, no retried POST, explicit cancel,
// journal first), listening, accounting, progress, asking the person and
// the choices where the spec is silent: docs/bridge.md.
package bridge
