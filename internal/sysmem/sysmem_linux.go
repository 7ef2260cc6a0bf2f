package sysmem

import "syscall"

// TotalRAM returns the machine's RAM in bytes, 0 when unknown.
func TotalRAM() uint64 {
	var info syscall.Sysinfo_t
	if err := syscall.Sysinfo(&info); err != nil {
		return 0
	}
	return uint64(info.Totalram) * uint64(info.Unit)
}
