package server

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// systemInfo is the machine description of /health, read once at start.
type systemInfo struct {
	platform, architecture, osRelease, cpu string
	cpuCount                               int
	totalMemory                            uint64
}

func readSystemInfo() systemInfo {
	si := systemInfo{
		platform:     nodePlatform(runtime.GOOS),
		architecture: nodeArch(runtime.GOARCH),
		cpu:          "unknown",
		cpuCount:     runtime.NumCPU(),
		osRelease:    "unknown",
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		si.osRelease = strings.TrimSpace(string(b))
	}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				si.cpu = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	si.totalMemory = totalMemory()
	return si
}

// totalMemory reads MemTotal from /proc/meminfo (0 when unknown).
func totalMemory() uint64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseUint(fields[1], 10, 64)
			if err == nil {
				return kb * 1024
			}
		}
	}
	return 0
}

// nodePlatform maps GOOS to the platform names of the contract.
func nodePlatform(goos string) string {
	if goos == "windows" {
		return "win32"
	}
	return goos
}

// nodeArch maps GOARCH to the architecture names of the contract.
func nodeArch(goarch string) string {
	if goarch == "amd64" {
		return "x64"
	}
	return goarch
}
