package main

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/hubgate/hubgate/cmd/hubgate/internal/controlcli"
	"github.com/hubgate/hubgate/configs"
)

// control wires the commands that talk to a running daemon
// (bridge/control/controlcli) to the process: its streams, the exit-code
// table, and where the configuration says the daemon answers.
func (a *app) control() *controlcli.CLI {
	return controlcli.New(controlcli.Options{Out: a.stdio.Out, Err: a.stdio.Err, Locate: a.locateDaemon, ExitCode: exitCode, Args: a.args, Getenv: a.getenv})
}

// locateDaemon finds the daemon's endpoints. Only the endpoints are
// needed, not the rules: a config file that does not load is one warning
// line on stderr (never on stdout, which may be JSON), and the endpoints
// come from the defaults, the file's own endpoint keys, the environment
// and the flags (configs.LoadEndpoints).
func (a *app) locateDaemon() (controlcli.Endpoints, error) {
	ep, broken, err := configs.LoadEndpoints(a.loadOptions(nil))
	if err != nil {
		return controlcli.Endpoints{}, &configError{err}
	}
	if broken != nil {
		file := cmp.Or(ep.File, a.configPath, "the config file")
		fmt.Fprintf(a.stdio.Err, "hubgate: warning: %s is broken, so only its control socket and journal settings are used (control socket %s): %s\n",
			file, ep.ControlSocket, strings.Join(strings.Fields(broken.Error()), " "))
	}
	return controlcli.Endpoints{ControlSocket: ep.ControlSocket, Journal: ep.Journal}, nil
}
