package main

import (
	"encoding/json"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/hubgate/hubgate/bridge/daemon/demo"
)

// demoPrinter prints the demo's narrative (demo.Options.Narrate: Print) on
// W, as text or, with JSON, as JSON lines: {"time","event","message"} plus
// the step's fields. The demo narrates; `hubgate demo` prints. It is safe
// for concurrent use.
type demoPrinter struct {
	W    io.Writer
	JSON bool
	// Failed is called once with the first write error; later steps are
	// not written. Nil: write errors are ignored.
	Failed func(error)

	mu     sync.Mutex
	broken bool
}

// Print prints one step: its text, or (JSON) an object with the step's
// name, its text and its fields.
func (n *demoPrinter) Print(s demo.Step) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.broken {
		return
	}
	if !n.JSON {
		n.write([]byte(s.Text + "\n"))
		return
	}
	obj := map[string]any{}
	for k, v := range s.Fields {
		obj[k] = v
	}
	obj["time"] = s.At.UTC().Format(time.RFC3339Nano)
	obj["event"] = s.Name
	obj["message"] = strings.TrimSpace(s.Text)
	b, err := json.Marshal(obj)
	if err != nil {
		b, _ = json.Marshal(map[string]any{"event": s.Name, "message": strings.TrimSpace(s.Text)})
	}
	n.write(append(b, '\n'))
}

// write writes b, noting the first failure (n.mu is held).
func (n *demoPrinter) write(b []byte) {
	if _, err := n.W.Write(b); err != nil {
		n.broken = true
		if n.Failed != nil {
			n.Failed(err)
		}
	}
}
