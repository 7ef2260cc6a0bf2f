package controlcli

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// With no daemon on the socket, `status --json` prints the error object
// with the exit code the caller's table gives, and returns ErrNotRunning.
func TestStatusJSONWithoutDaemonIsTheErrorObject(t *testing.T) {
	var out, errOut bytes.Buffer
	sock := filepath.Join(t.TempDir(), "control.sock")
	cli := New(Options{Out: &out, Err: &errOut, Args: []string{"status", "--json"},
		Locate:   func() (Endpoints, error) { return Endpoints{ControlSocket: sock}, nil },
		ExitCode: func(err error) int { return map[bool]int{true: 9, false: 1}[errors.Is(err, ErrNotRunning)] }})
	cmd := cli.Commands()[0]
	cmd.SetArgs([]string{"--json"})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.Execute()
	if !errors.Is(err, ErrNotRunning) {
		t.Fatalf("err = %v, want ErrNotRunning", err)
	}
	var body StatusErrorBody
	if err := json.Unmarshal(out.Bytes(), &body); err != nil {
		t.Fatalf("stdout %q: %v", out.String(), err)
	}
	if body.Running || body.ExitCode != 9 || body.Error != ErrNotRunning.Error() {
		t.Errorf("body = %+v", body)
	}
}

func TestJSONRequestedReadsTheCommandLine(t *testing.T) {
	for args, want := range map[string]bool{"status --json": true, "status --json=false": false, "status -- --json": false, "status --jsn": false} {
		if got := jsonRequested(strings.Fields(args)); got != want {
			t.Errorf("jsonRequested(%q) = %v, want %v", args, got, want)
		}
	}
}
