package configs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/hubgate/hubgate/internal/lazyregexp"
)

// This file is the strict decoder. It walks the YAML node tree against the
// Config struct (by yaml tags), so that every problem names the full key
// path and the line, and so that the file, the environment and overrides
// share one parser per value type. Adding a key means adding a tagged field
// of a supported type (string, int, float64, bool, *bool, time.Duration) or a
// nested struct. Lists ([]T of a scalar or of a struct) and string maps
// (map[string]string) are leaves that only the file can set; a list item
// that is a struct is decoded like a section, and its keys are reported as
// path[i].key.

var durationType = reflect.TypeFor[time.Duration]()

// fieldByPath finds the settable value for a dotted path ("automate.port")
// in the struct v points into. It returns false for an unknown path or a
// path naming a section.
func fieldByPath(v reflect.Value, path string) (reflect.Value, bool) {
	for _, part := range strings.Split(path, ".") {
		if v.Kind() != reflect.Struct {
			return reflect.Value{}, false
		}
		f, ok := fieldByKey(v, part)
		if !ok {
			return reflect.Value{}, false
		}
		v = f
	}
	if isSection(v.Type()) {
		return reflect.Value{}, false
	}
	return v, true
}

// fieldByKey returns the field of struct v whose yaml tag is key.
func fieldByKey(v reflect.Value, key string) (reflect.Value, bool) {
	t := v.Type()
	for i := range t.NumField() {
		if yamlKey(t.Field(i)) == key {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

// yamlKey is the key of an exported, tagged field, or "".
func yamlKey(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "-" {
		return ""
	}
	return name
}

// keysOf lists the yaml keys of struct type t, in declaration order.
func keysOf(t reflect.Type) []string {
	var keys []string
	for i := range t.NumField() {
		if k := yamlKey(t.Field(i)); k != "" {
			keys = append(keys, k)
		}
	}
	return keys
}

func isSection(t reflect.Type) bool { return t.Kind() == reflect.Struct }

// fileOnly reports whether values of type t can only come from the file
// (lists and maps have no one-line syntax for the environment or flags).
func fileOnly(t reflect.Type) bool { return t.Kind() == reflect.Slice || t.Kind() == reflect.Map }

// leafPaths lists every settable path of struct type t.
func leafPaths(t reflect.Type, prefix string) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		k := yamlKey(f)
		if k == "" {
			continue
		}
		if isSection(f.Type) {
			out = append(out, leafPaths(f.Type, prefix+k+".")...)
		} else {
			out = append(out, prefix+k)
		}
	}
	return out
}

// setLeaf parses s into the leaf v; the error is the message of a
// FieldError (without path or source).
func setLeaf(v reflect.Value, s string) error {
	switch {
	case v.Kind() == reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		if err := setLeaf(p.Elem(), s); err != nil {
			return err
		}
		v.Set(p)
	case fileOnly(v.Type()):
		return fmt.Errorf("can only be set in the config file")
	case v.Type() == durationType:
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("must be a duration with a unit, such as 90s, 2m or 1h30m; got %q", s)
		}
		v.SetInt(int64(d))
	case v.Kind() == reflect.String:
		v.SetString(s)
	case v.Kind() == reflect.Int:
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 0)
		if err != nil {
			return fmt.Errorf("must be an integer; got %q", s)
		}
		v.SetInt(n)
	case v.Kind() == reflect.Float64:
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return fmt.Errorf("must be a number; got %q", s)
		}
		v.SetFloat(f)
	case v.Kind() == reflect.Bool:
		b, err := strconv.ParseBool(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("must be true or false; got %q", s)
		}
		v.SetBool(b)
	default:
		return fmt.Errorf("unsupported setting type %s", v.Type()) // a schema bug
	}
	return nil
}

// decoder decodes one YAML source into a Config, collecting problems.
type decoder struct {
	cfg      *Config
	source   string // file name used in sources, e.g. "/x/config.yaml" or "defaults"
	problems []FieldError
}

func (d *decoder) problem(path string, line int, format string, args ...any) {
	d.problems = append(d.problems, FieldError{Path: path, Message: fmt.Sprintf(format, args...), Source: d.at(line)})
}

func (d *decoder) at(line int) string {
	if line <= 0 {
		return d.source
	}
	return fmt.Sprintf("%s:%d", d.source, line)
}

var yamlLineRE = lazyregexp.New(`^yaml: line (\d+): (.*)$`)

// decode parses data and applies it to d.cfg.
func (d *decoder) decode(data []byte) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return // empty file
		}
		msg, line := err.Error(), 0
		if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
			line, _ = strconv.Atoi(m[1])
			msg = m[2]
		} else {
			msg = strings.TrimPrefix(msg, "yaml: ")
		}
		d.problem("", line, "invalid YAML: %s", msg)
		return
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		line := 0
		if err == nil {
			line = extra.Line
		}
		d.problem("", line, "more than one YAML document; a config file holds exactly one")
		return
	}
	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return
		}
		root = root.Content[0]
	}
	d.section(root, reflect.ValueOf(d.cfg).Elem(), "")
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func nodeKindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	default:
		return "a single value"
	}
}

// section applies a mapping node to the struct v at path prefix.
func (d *decoder) section(n *yaml.Node, v reflect.Value, path string) {
	n = resolveAlias(n)
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return // "log:" with nothing under it keeps the defaults
	}
	keys := strings.Join(keysOf(v.Type()), ", ")
	if n.Kind != yaml.MappingNode {
		where := path
		if where == "" {
			d.problem("", n.Line, "the file must be a mapping of sections (%s), not %s", keys, nodeKindName(n))
			return
		}
		d.problem(where, n.Line, "must be a mapping of keys (%s), not %s", keys, nodeKindName(n))
		return
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := resolveAlias(n.Content[i]), n.Content[i+1]
		key := kn.Value
		full := key
		if path != "" {
			full = path + "." + key
		}
		if first, dup := seen[key]; dup {
			d.problem(full, kn.Line, "duplicate key (first set at line %d)", first)
			continue
		}
		seen[key] = kn.Line
		f, ok := fieldByKey(v, key)
		if !ok {
			msg := "unknown key"
			if path == "" {
				msg += "; known sections: " + keys
			} else {
				msg += "; known keys of " + path + ": " + keys
			}
			if looksSecret(key) {
				msg += "; secrets are never read from the config file, hubgate keeps them in the OS secret store"
			}
			d.problem(full, kn.Line, "%s", msg)
			continue
		}
		if isSection(f.Type()) {
			d.section(vn, f, full)
			continue
		}
		d.leaf(vn, f, full)
	}
}

// leaf applies a node to the leaf field v: a scalar, or for a list or map
// field a sequence or mapping.
func (d *decoder) leaf(n *yaml.Node, v reflect.Value, path string) {
	n = resolveAlias(n)
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		v.SetZero()
		d.cfg.setSource(path, d.at(n.Line))
		return
	}
	switch v.Kind() {
	case reflect.Slice:
		d.list(n, v, path)
		return
	case reflect.Map:
		if v.Type().Elem().Kind() == reflect.Interface { // free-form (bridge.go)
			d.genericMap(n, v, path)
			return
		}
		d.stringMap(n, v, path)
		return
	case reflect.Interface: // free-form (bridge.go)
		if val, ok := d.generic(n, path); ok {
			v.Set(reflect.ValueOf(&val).Elem())
		}
		return
	case reflect.Pointer:
		if isSection(v.Type().Elem()) { // an optional sub-section: a fresh value
			p := reflect.New(v.Type().Elem())
			d.cfg.setSource(path, d.at(n.Line))
			d.section(n, p.Elem(), path)
			v.Set(p)
			return
		}
	}
	if n.Kind != yaml.ScalarNode {
		d.problem(path, n.Line, "must be a single value, not %s", nodeKindName(n))
		return
	}
	if err := setLeaf(v, n.Value); err != nil {
		d.problem(path, n.Line, "%s", err.Error())
		return
	}
	d.cfg.setSource(path, d.at(n.Line))
}

// looksSecret reports whether an (unknown) key name suggests a secret.
func looksSecret(key string) bool {
	k := strings.ToLower(key)
	for _, w := range []string{"secret", "token", "password", "passwd", "key", "credential"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// list applies a sequence node to the slice field v.
func (d *decoder) list(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.SequenceNode {
		d.problem(path, n.Line, "must be a list, not %s", nodeKindName(n))
		return
	}
	if len(n.Content) == 0 {
		v.SetZero() // an empty list is no list
		d.cfg.setSource(path, d.at(n.Line))
		return
	}
	out := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		item = resolveAlias(item)
		ip := fmt.Sprintf("%s[%d]", path, i)
		ev := out.Index(i)
		if isSection(ev.Type()) {
			d.cfg.setSource(ip, d.at(item.Line))
			d.section(item, ev, ip)
			continue
		}
		if item.Kind != yaml.ScalarNode || item.Tag == "!!null" {
			d.problem(ip, item.Line, "must be a single value, not %s", nodeKindName(item))
			continue
		}
		if err := setLeaf(ev, item.Value); err != nil {
			d.problem(ip, item.Line, "%s", err.Error())
		}
	}
	v.Set(out)
	d.cfg.setSource(path, d.at(n.Line))
}

// stringMap applies a mapping node of single values to the map field v.
func (d *decoder) stringMap(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.problem(path, n.Line, "must be a mapping, not %s", nodeKindName(n))
		return
	}
	m := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := resolveAlias(n.Content[i]), resolveAlias(n.Content[i+1])
		kp := path + "." + kn.Value
		if first, dup := seen[kn.Value]; dup {
			d.problem(kp, kn.Line, "duplicate key (first set at line %d)", first)
			continue
		}
		seen[kn.Value] = kn.Line
		if vn.Kind != yaml.ScalarNode {
			d.problem(kp, vn.Line, "must be a single value, not %s", nodeKindName(vn))
			continue
		}
		ev := reflect.New(v.Type().Elem()).Elem()
		if err := setLeaf(ev, vn.Value); err != nil {
			d.problem(kp, vn.Line, "%s", err.Error())
			continue
		}
		m.SetMapIndex(reflect.ValueOf(kn.Value).Convert(v.Type().Key()), ev)
	}
	v.Set(m)
	d.cfg.setSource(path, d.at(n.Line))
}
