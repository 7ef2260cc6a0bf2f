package proc

import (
	"context"
	"path/filepath"
	"testing"
)

// BenchmarkRun measures one Run of /bin/true, plain and with TrackGroups
// on (two atomic, synced rewrites of the record file per child).
func BenchmarkRun(b *testing.B) {
	run := func(b *testing.B) {
		for b.Loop() {
			if _, err := Run(context.Background(), Command("/bin/true"), 0); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("untracked", run)
	b.Run("tracked", func(b *testing.B) {
		stop, _, err := TrackGroups(filepath.Join(b.TempDir(), "children"), nil)
		if err != nil {
			b.Fatal(err)
		}
		defer stop()
		run(b)
	})
}
