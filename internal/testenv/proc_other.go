//go:build !unix

package testenv

import "os/exec"

func setpgid(*exec.Cmd)   {}
func killGroup(int)       {}
func groupAlive(int) bool { return false }
func pidAlive(int) bool   { return false }
