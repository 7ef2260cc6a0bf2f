//go:build !linux

package sysmem

// TotalRAM returns the machine's RAM in bytes: 0, unknown on this platform.
func TotalRAM() uint64 { return 0 }
