package deviceapi

import (
	"strconv"
	"strings"
)

// Oddity is one value the hub sent that hubgate could not read into its
// field: a macro that is not an object, an event time that is a list, a
// profile that is a number. The value is kept as it came (a round trip
// writes it back) and its field is left zero; a macro with an Oddity, in
// itself or in one of its events, is not used for matching (Macro.IsOdd).
// Oddity is comparable, so a caller can warn once per Oddity.
type Oddity struct {
	Item string // the resource it belongs to, by id and name: macro "1" ("Space"), profile "p", device "d"
	In   string // where the item is, from the value decoded: "currentProfile.configuration.macros[2]"
	Path string // where in the item: "events[1].holdTimeMilliseconds"; "" for the item itself
	Got  string // the value as it came (at most 40 bytes)
	Want string // what was expected: "a number", "an object"...
}

// Where is the odd value's place from the value decoded (In.Path).
func (o Oddity) Where() string { return joinPath(o.In, o.Path) }

func (o Oddity) Error() string {
	var b strings.Builder
	b.WriteString(o.Item)
	if w := o.Where(); w != "" {
		b.WriteString(": ")
		b.WriteString(w)
	}
	b.WriteString(": got ")
	b.WriteString(o.Got)
	b.WriteString(", want ")
	b.WriteString(o.Want)
	return b.String()
}

// own returns the resource's own oddities (not those of nested
// resources): of item, found at in, under prefix within item.
func (w *record) own(in, prefix, item string, out []Oddity) []Oddity {
	if w == nil {
		return out
	}
	for _, o := range w.odd {
		o.Item, o.In, o.Path = item, in, joinPath(prefix, o.Path)
		out = append(out, o)
	}
	return out
}

func joinPath(prefix, path string) string {
	switch {
	case prefix == "":
		return path
	case path == "":
		return prefix
	}
	return prefix + "." + path
}

func indexPath(prefix, list string, i int) string {
	return joinPath(prefix, list+"["+strconv.Itoa(i)+"]")
}

// label names a resource by kind, id and name.
func label(kind, id, name string) string {
	s := kind
	if id != "" {
		s += " " + strconv.Quote(id)
	}
	if name != "" {
		s += " (" + strconv.Quote(name) + ")"
	}
	return s
}

// Oddities of the event: its members that could not be read.
func (e MacroEvent) Oddities() []Oddity { return e.rec.own("", "", "event", nil) }

// IsOdd reports whether the macro, or one of its events, has an Oddity:
// it is kept, and not used for matching.
func (m Macro) IsOdd() bool {
	if m.rec != nil && len(m.rec.odd) > 0 {
		return true
	}
	for _, e := range m.Events {
		if e.rec != nil && len(e.rec.odd) > 0 {
			return true
		}
	}
	return false
}

// Oddities of the macro and of its events, each naming the macro.
func (m Macro) Oddities() []Oddity { return m.oddities("", nil) }

func (m Macro) oddities(in string, out []Oddity) []Oddity {
	if !m.IsOdd() {
		return out
	}
	item := label("macro", m.ID, m.Name)
	out = m.rec.own(in, "", item, out)
	for i, e := range m.Events {
		out = e.rec.own(in, indexPath("", "events", i), item, out)
	}
	return out
}

// Oddities of the configuration and of its macros.
func (c Configuration) Oddities() []Oddity { return c.oddities("", "", "configuration", nil) }

// oddities of a configuration at prefix within item (a profile at in).
func (c Configuration) oddities(in, prefix, item string, out []Oddity) []Oddity {
	out = c.rec.own(in, prefix, item, out)
	for i, m := range c.Macros {
		out = m.oddities(indexPath(joinPath(in, prefix), "macros", i), out)
	}
	return out
}

// Oddities of the profile, its configuration and its macros.
func (p Profile) Oddities() []Oddity { return p.oddities("", nil) }

func (p Profile) oddities(in string, out []Oddity) []Oddity {
	item := label("profile", p.ID, p.Name)
	out = p.rec.own(in, "", item, out)
	return p.Configuration.oddities(in, "configuration", item, out)
}

// Oddities of the device and of everything in it.
func (d UserDevice) Oddities() []Oddity {
	out := d.rec.own("", "", label("device", d.ID, ""), nil)
	if d.CurrentProfile != nil {
		out = d.CurrentProfile.oddities("currentProfile", out)
	}
	return out
}

// UsableMacros returns the macros that are not odd (Macro.IsOdd), in
// order: the ones a command may be matched against.
func (c Configuration) UsableMacros() []Macro {
	out := make([]Macro, 0, len(c.Macros))
	for _, m := range c.Macros {
		if !m.IsOdd() {
			out = append(out, m)
		}
	}
	return out
}
