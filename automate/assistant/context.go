package assistant

// Bounds of ContextSizeForRAM.
const (
	MinContextSize = 4096
	MaxContextSize = 131072
)

// ContextSizeForRAM is the context window (Runtime.ContextSize) an engine
// reports when nothing better is known (no configured size, no size from
// its model server): 1024 tokens per whole GiB of ram, clamped to
// [MinContextSize, MaxContextSize]. ram 0 (unknown) gives MinContextSize.
func ContextSizeForRAM(ram uint64) int {
	n := int(ram>>30) * 1024
	return min(max(n, MinContextSize), MaxContextSize)
}
