package server

import (
	"bufio"
	"os"
	"runtime"
	"strings"

	"github.com/hubgate/hubgate/internal/sysmem"
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
	si.totalMemory = sysmem.TotalRAM()
	return si
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
