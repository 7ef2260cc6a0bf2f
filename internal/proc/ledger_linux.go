package proc

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// canTrack: start times and the boot id are readable here.
const canTrack = true

func bootID() (string, error) {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return strings.TrimSpace(string(b)), err
}

// stat is what the reaper reads of /proc/<pid>/stat.
type stat struct {
	state byte
	pgrp  int
	start uint64
}

func readStat(pid string) (stat, error) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return stat{}, err
	}
	// pid (comm) state ppid pgrp ... field 22 is starttime; comm may hold
	// spaces and parentheses, so split after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return stat{}, errors.New("malformed stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return stat{}, errors.New("malformed stat")
	}
	pgrp, err1 := strconv.Atoi(f[2])
	start, err2 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil || len(f[0]) != 1 {
		return stat{}, errors.New("malformed stat")
	}
	return stat{state: f[0][0], pgrp: pgrp, start: start}, nil
}

func startTime(pid int) (uint64, error) {
	s, err := readStat(strconv.Itoa(pid))
	return s.start, err
}

// ours reports whether the group of r is alive and is the one recorded:
// its leader, if it still exists, has the recorded start time, and no
// member started before the leader did.
func ours(r record) bool {
	if r.PGID <= 1 {
		return false
	}
	if s, err := readStat(strconv.Itoa(r.PGID)); err == nil && s.start != r.Start {
		return false // the pid belongs to another process now
	}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	alive := false
	for _, d := range dirs {
		s, err := readStat(filepath.Base(d))
		if err != nil || s.pgrp != r.PGID || s.state == 'Z' {
			continue
		}
		if s.start < r.Start {
			return false // older than our leader: not a group we started
		}
		alive = true
	}
	return alive
}

// LiveMembers lists the pids of the group pgid that are not zombies
// (Linux; for tests and diagnostics).
func LiveMembers(pgid int) []int {
	var out []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		s, err := readStat(filepath.Base(d))
		if err == nil && s.pgrp == pgid && s.state != 'Z' {
			pid, _ := strconv.Atoi(filepath.Base(d))
			out = append(out, pid)
		}
	}
	return out
}
