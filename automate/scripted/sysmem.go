package scripted

// Context size rule: 1024 tokens per whole GiB of RAM, clamped to
// [minContext, maxContext].
const (
	minContext = 4096
	maxContext = 131072
)

func contextSizeFromRAM() int { return contextSizeFor(totalRAM()) }

func contextSizeFor(ram uint64) int {
	n := int(ram>>30) * 1024
	return min(max(n, minContext), maxContext)
}
