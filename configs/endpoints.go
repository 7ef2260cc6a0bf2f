package configs

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
)

// Endpoints are the only settings a client of the running daemon needs
// (`status`, `watch`, `history`, `cancel`, `open`): where its control
// socket and its journal are. They are not the rules, so a config file
// that does not validate must not keep the person from a daemon that runs
// (a runaway run must stay cancellable).
type Endpoints struct {
	ControlSocket string // bridge.control_socket, resolved
	Journal       string // bridge.journal, resolved
	File          string // the config file read, "" when none was (or it could not be read)
}

// LoadEndpoints returns the daemon's endpoints. When the whole
// configuration loads, they are its values and broken is nil. When it does
// not (a bad key, a bad value or invalid YAML anywhere, or a file that
// cannot be read), they are built leniently: the defaults, the file's own
// values of these two keys where they decode, the environment and
// opts.Overrides; an endpoint whose value is itself bad takes its default.
// broken is then Load's error, for the caller to show as a warning. err is
// set only when not even the defaults give both endpoints (no user
// directories at all).
func LoadEndpoints(opts LoadOptions) (ep Endpoints, broken error, err error) {
	opts = opts.withDefaults()
	cfg, loadErr := Load(opts)
	if loadErr == nil {
		return Endpoints{ControlSocket: cfg.Bridge.ControlSocket, Journal: cfg.Bridge.Journal, File: cfg.File()}, nil, nil
	}
	var verr *ValidationError
	cfg, problems, berr := build(opts, !errors.As(loadErr, &verr))
	if berr != nil {
		return Endpoints{}, loadErr, loadErr
	}
	// The one rule each endpoint must meet (validateBridge): set,
	// absolute, and a socket path the kernel accepts. Anything else, or a
	// problem reported on it, falls back to its default.
	b := &cfg.Bridge
	bad := func(path, v string) bool {
		return v == "" || !filepath.IsAbs(v) || slices.ContainsFunc(problems, func(p FieldError) bool { return p.Path == path })
	}
	if bad("bridge.journal", b.Journal) {
		b.Journal = ""
	}
	if bad("bridge.control_socket", b.ControlSocket) || len(b.ControlSocket) > MaxSocketPath {
		b.ControlSocket = ""
	}
	if b.Journal == "" || b.ControlSocket == "" {
		if ps := cfg.resolveBridge(opts); b.Journal == "" || b.ControlSocket == "" {
			return Endpoints{}, loadErr, fmt.Errorf("%w; and the daemon's endpoints have no default: %w", loadErr, &ValidationError{Problems: ps})
		}
	}
	return Endpoints{ControlSocket: b.ControlSocket, Journal: b.Journal, File: cfg.File()}, loadErr, nil
}
