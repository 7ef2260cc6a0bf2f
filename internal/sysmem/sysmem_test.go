package sysmem

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestTotalRAMIsMemTotal: on Linux TotalRAM equals /proc/meminfo's
// MemTotal; elsewhere it is 0.
func TestTotalRAMIsMemTotal(t *testing.T) {
	got := TotalRAM()
	if runtime.GOOS != "linux" {
		if got != 0 {
			t.Fatalf("TotalRAM() = %d on %s, want 0", got, runtime.GOOS)
		}
		return
	}
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		t.Skipf("no /proc/meminfo: %v", err)
	}
	defer f.Close()
	var want uint64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseUint(fields[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			want = kb * 1024
		}
	}
	if want == 0 {
		t.Skip("no MemTotal in /proc/meminfo")
	}
	if got != want {
		t.Errorf("TotalRAM() = %d, /proc/meminfo MemTotal = %d", got, want)
	}
}
