package toolkit

import (
	"encoding/json"
	"strconv"

	"github.com/hubgate/hubgate/automate"
)

// ContentChain assigns the content chaining ids of a run's built-in tool
// steps (producedContentId, consumedContentIds), the rule both engines
// share: a write produces g<index> and remembers it for the resolved path;
// a read or a listing produces s<index> and consumes the id of this run's
// write to that path, if any; a command produces s<index> when it printed
// anything; a delete consumes the path's id; a move consumes it and
// carries it to the destination. A failed call produces no id, except a
// command whose output is kept.
//
// Use one per run (the Workspace and Confine of the run's Toolbox); it is
// not safe for concurrent use: a run records its steps in order. The zero
// value is ready to use (no workspace, no confinement root).
type ContentChain struct {
	// Workspace and Confine resolve a move's source, as toolkit.Config.
	Workspace, Confine string

	ids map[string]string // resolved path -> id of the content this run wrote there
}

// Record fills st after the built-in tool name was called with args and
// returned out and err: the chaining ids, ProducedFilePath and
// ProducedIsDirectory for a created or edited entry, and ProducedContent.
// The step's status and result summary are the caller's to set.
func (c *ContentChain) Record(st *automate.Step, name string, args json.RawMessage, out Outcome, err error) {
	if c.ids == nil {
		c.ids = map[string]string{}
	}
	id := func(prefix string) string { return prefix + strconv.Itoa(st.Index) }
	switch name {
	case ToolWriteFile:
		if err == nil {
			st.ProducedContentID = id("g")
			c.ids[out.Path] = st.ProducedContentID
		}
	case ToolReadFile, ToolListDir:
		if err == nil {
			st.ProducedContentID = id("s")
			if p, ok := c.ids[out.Path]; ok {
				st.ConsumedContentIDs = []string{p}
			}
		}
	case ToolRunCommand:
		if out.Content != "" {
			st.ProducedContentID = id("s")
		}
	case ToolDeletePath:
		if err == nil {
			if p, ok := c.ids[out.Path]; ok {
				st.ConsumedContentIDs = []string{p}
				delete(c.ids, out.Path)
			}
		}
	case ToolMovePath:
		if err == nil {
			var a struct {
				From string `json:"from"`
			}
			_ = json.Unmarshal(args, &a)
			if src, e := ResolveEntry(c.Workspace, c.Confine, a.From); e == nil {
				if p, ok := c.ids[src]; ok {
					st.ConsumedContentIDs = []string{p}
					delete(c.ids, src)
					c.ids[out.Path] = p
				}
			}
		}
	}
	if out.Produced {
		st.ProducedFilePath = out.Path
		st.ProducedIsDirectory = out.IsDir
	}
	st.ProducedContent = out.Content
}
