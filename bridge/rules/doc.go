// Package rules owns the routing-rule language of the bridge: which
// DeviceCommand starts which run, with which RunRequest, under which busy
// policy. It compiles rules (Compile: Spec into a Set), matches and renders
// them (templates, client tools, the catalogue), and makes the one routing
// decision (Set.Decide) used by the bridge and by `hubgate rules test`.
// Listening and the busy policies stay the bridge's. It is a leaf package: it
// knows deviceapi and automate's wire types, nothing of the hub, the journal
// or HTTP.
//
// The rule language, the routing decision, the vendor's facts followed and
// the choices where the spec is silent: docs/rules.md.
package rules
