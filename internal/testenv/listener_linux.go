//go:build linux

package testenv

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// groupListensOn reports whether a process of the process group pgid holds
// a listening TCP socket on port (any address, IPv4 or IPv6), so that a
// test never mistakes another program's listener for its own server.
func groupListensOn(pgid, port int) bool {
	inodes := listeningInodes(port)
	if len(inodes) == 0 {
		return false
	}
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		if !inGroup(p, pgid) {
			continue
		}
		fds, _ := os.ReadDir(filepath.Join(p, "fd"))
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join(p, "fd", fd.Name()))
			if err == nil && inodes[link] {
				return true
			}
		}
	}
	return false
}

// listeningInodes returns "socket:[inode]" of the listening sockets on port.
func listeningInodes(port int) map[string]bool {
	want := fmt.Sprintf(":%04X", port)
	out := map[string]bool{}
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(file)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			// sl local_address rem_address st ... inode (field 9)
			if len(fields) > 9 && strings.HasSuffix(fields[1], want) && fields[3] == "0A" {
				out["socket:["+fields[9]+"]"] = true
			}
		}
		f.Close()
	}
	return out
}

// inGroup reports whether the process at /proc/<pid> is in process group pgid.
func inGroup(procDir string, pgid int) bool {
	b, err := os.ReadFile(filepath.Join(procDir, "stat"))
	if err != nil {
		return false
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return false
	}
	fields := strings.Fields(s[i+1:])
	// After the name: state, ppid, pgrp.
	return len(fields) > 2 && fields[2] == strconv.Itoa(pgid)
}
