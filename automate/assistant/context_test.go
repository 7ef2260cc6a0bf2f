package assistant

import "testing"

func TestContextSizeForRAM(t *testing.T) {
	for ram, want := range map[uint64]int{
		0:           4096,
		2 << 30:     4096,
		8 << 30:     8192,
		16 << 30:    16384,
		31<<30 + 5:  31744,
		512 << 30:   131072,
		1 << 40:     131072,
		5<<30 - 1:   4096, // whole GiB only: 4 GiB and a bit
		128 << 30:   131072,
		100<<30 + 1: 102400,
	} {
		if got := ContextSizeForRAM(ram); got != want {
			t.Errorf("ContextSizeForRAM(%d) = %d, want %d", ram, got, want)
		}
	}
}
