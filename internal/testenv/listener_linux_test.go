//go:build linux

package testenv

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/hubgate/hubgate/internal/proc"
)

// Another program's listener on the port is not taken for the server's.
func TestGroupListensOnTellsListenersApart(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	if groupListensOn(syscall.Getpgrp(), port) != true {
		t.Fatal("this test's own listener is not seen as its group's")
	}
	script := filepath.Join(t.TempDir(), "idle.js")
	os.WriteFile(script, []byte(`setInterval(()=>{}, 1000)`), 0o644)
	cmd := exec.Command(RequireNode(t), script)
	proc.Prepare(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { proc.Kill(cmd); cmd.Wait() }()
	if groupListensOn(cmd.Process.Pid, port) {
		t.Fatal("another group's listener was taken for the node process's")
	}
}
