package hub

import (
	"log/slog"
	"sync"

	"github.com/hubgate/hubgate/deviceapi"
)

// oddLimit bounds the oddities remembered as warned; past it the memory
// starts again (a hub that keeps inventing new odd values is still
// warned about, at most oddLimit lines per round).
const oddLimit = 1024

// oddWarner logs one warning per odd item the hub sends (a
// deviceapi.Oddity: a macro or member of an unexpected shape, kept as it
// came and not used for matching), once for the life of the Client: the
// same odd macro in the profile and in every DeviceCommand, or in every
// GetLatestDevice answer of the liveness probe, is one line, not one per
// event. An item is its Oddity without In (the item's id and name, the
// field within it, the value and what was expected).
type oddWarner struct {
	mu     sync.Mutex
	warned map[deviceapi.Oddity]struct{}
}

// warn logs each oddity not warned about before; from names where it
// came (VerifySelf, DeviceCommand...).
func (w *oddWarner) warn(log *slog.Logger, from string, odd []deviceapi.Oddity) {
	if len(odd) == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, o := range odd {
		// The same macro in a profile and in a command is one item.
		key := o
		key.In = ""
		if _, seen := w.warned[key]; seen {
			continue
		}
		if w.warned == nil || len(w.warned) >= oddLimit {
			w.warned = map[deviceapi.Oddity]struct{}{}
		}
		w.warned[key] = struct{}{}
		log.Warn("hub sent a value of an unexpected shape; kept as it came, its macro is not used for matching",
			"from", from, "item", o.Item, "in", o.In, "field", o.Path, "got", o.Got, "want", o.Want)
	}
}
