//go:build !linux

package llm

// totalRAM is unknown on this platform: the context size falls back to
// its minimum.
func totalRAM() uint64 { return 0 }
