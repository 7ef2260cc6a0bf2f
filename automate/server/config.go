package server

import (
	"log/slog"
	"time"

	"github.com/hubgate/hubgate/automate/assistant"
)

// Config configures a Server. Zero values are documented per field.
type Config struct {
	// Key is the bearer access key; required, at least 24 characters.
	Key string
	// Assistant is the engine behind the server; required.
	Assistant assistant.Assistant
	// Workspace is the absolute workspace folder reported by /health and
	// used by restrictToWorkspace. Zero: <user config dir>/hubgate/automate-http-workspace.
	// The folder is created when missing.
	Workspace string
	// WorkspaceRestriction is the user's own workspace restriction: when
	// set, every run is confined to it and restrictToWorkspace is ignored.
	// Zero: no restriction of the user's.
	WorkspaceRestriction string
	// ToolWait is how long a parked run waits for tool results per round
	// before it cancels itself. Zero: 2 minutes.
	ToolWait time.Duration
	// InitTimeout bounds how long the engine may report `initializing`
	// before the run fails with 400 "Timed out initializing the on-device
	// assistant". Zero: 15 minutes.
	InitTimeout time.Duration
	// Product is the product word (automate.ValidProduct): /health answers
	// service "<Product>-agent", /v1/models lists "<Product>-agent" (and
	// "<Product>-model" when the engine has a model mode) owned by
	// Product, and the chat extension object and the record of a chat
	// answer are under the key Product. Zero: automate.DefaultProduct.
	// automate.ProductAuto (a client's discovery setting) serves
	// automate.DefaultProduct, as automate.ServedProduct says.
	Product string
	// AppVersion is reported in /health and records. Zero: "dev".
	AppVersion string
	// ConfiguredMcpServers are the names of the user's configured MCP
	// servers; an inline server may not take one of them. Zero: none.
	ConfiguredMcpServers []string
	// LaunchSelection is the --model/--family/--size launch selection,
	// applied once by Start. Zero: none.
	LaunchSelection LaunchSelection
	// KeepAlive is the interval of the comment lines that keep a quiet
	// model-mode stream alive. Zero: DefaultKeepAlive (10 s).
	KeepAlive time.Duration
	// MaxRunSteps caps the steps of one run: the step past it fails the
	// run (status failed, errorCode EXECUTION_FAILED, an answer naming the
	// limit). Zero: DefaultMaxRunSteps.
	MaxRunSteps int
	// MaxRunEventBytes caps the bytes of a run's recorded channel events
	// (their payloads); the event past it fails the run as MaxRunSteps
	// does. Zero: DefaultMaxRunEventBytes.
	MaxRunEventBytes int
	// Logger receives structured logs. Zero: slog.Default().
	Logger *slog.Logger
	// Now is the clock. Zero: time.Now.
	Now func() time.Time
}

// Limits of one run's record (docs/automate-server.md, "Limits of a run").
// A run's memory is linear in its steps: the record keeps each step once
// and every step event carries only the step that changed.
const (
	DefaultMaxRunSteps      = 20000
	DefaultMaxRunEventBytes = 32 << 20
)

// LaunchSelection is a model chosen at launch (--model, --family, --size).
type LaunchSelection struct {
	ModelName, Family, SizeCode string
}
