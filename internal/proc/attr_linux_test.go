package proc

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// helperEnv makes the test binary, started as a child by a test of this
// file, report its process attributes instead of running tests.
const helperEnv = "PROC_TEST_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "attrs" {
		var sig int32
		if err := unix.Prctl(unix.PR_GET_PDEATHSIG, uintptr(unsafe.Pointer(&sig)), 0, 0, 0); err != nil {
			fmt.Println("prctl:", err)
			os.Exit(1)
		}
		fmt.Printf("leader=%v pdeathsig=%d\n", syscall.Getpgrp() == os.Getpid(), sig)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Run merges a SysProcAttr the caller set (here its own credentials) with
// Prepare's: the child leads a new process group and gets Pdeathsig
// (SIGKILL, or the signal the caller chose).
func TestRunMergesACallerSysProcAttr(t *testing.T) {
	cred := &syscall.Credential{Uid: uint32(os.Getuid()), Gid: uint32(os.Getgid()), NoSetGroups: true}
	for _, tc := range []struct {
		name string
		attr *syscall.SysProcAttr
		want string
	}{
		{"credentials", &syscall.SysProcAttr{Credential: cred}, "leader=true pdeathsig=9"},
		{"own death signal", &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGTERM}, "leader=true pdeathsig=15"},
		{"own session", &syscall.SysProcAttr{Setsid: true}, "leader=true pdeathsig=9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := Command(os.Args[0])
			cmd.Env = append(cmd.Env, helperEnv+"=attrs")
			cmd.SysProcAttr = tc.attr
			res, err := Run(context.Background(), cmd, 0)
			if err != nil || strings.TrimSpace(res.Output) != tc.want {
				t.Fatalf("child reported %q (%v), want %q", res.Output, err, tc.want)
			}
		})
	}
}
