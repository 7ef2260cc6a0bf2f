package deviceapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The resources' JSON. Each decoded resource keeps its raw JSON (a
// record) beside a lenient typed decode; encoding a resource nothing was
// changed in gives back the raw bytes.
//
// The raw bytes are the value as it came, compact, each string written as
// encoding/json writes it (json.Marshal writes them so anyway: "\u0065"
// comes back as "e"); numbers, member order, duplicate keys and nulls
// are kept as they came. The typed decode reads what it can of each
// member (a number in a string, an event type as the Unity enum's number,
// a lone string for a list...) and notes what it cannot as an Oddity,
// leaving that field zero; members it does not type stay in Extra.
//
// Once a typed field or Extra is changed, the resource is written member
// by member: the members that came, in their order and spelling, each as
// it came while its field still encodes as it did after the decode and in
// the field's own encoding once changed; then typed fields set since, in
// struct order; then Extra members added since, sorted. A typed field
// wins over an Extra member of its name. A value built in Go (no record)
// encodes by its struct tags, then its Extra members, sorted.

// maxDepth is encoding/json's nesting limit (json.Valid's).
const maxDepth = 10000

// record is how one resource came. It is written once, by the decode,
// and only read afterwards (copies of a resource share it).
type record struct {
	raw     json.RawMessage // the value as it came (see above)
	members []member        // an object's members in arrival order (first occurrence of each key)
	odd     []Oddity        // this resource's own odd members (Path relative to it)
}

// member is one member of a decoded object.
type member struct {
	key   string
	field int             // index in the resource's fields; -1: kept in Extra
	val   json.RawMessage // the value as it came (the last occurrence of the key)
	dec   []byte          // the field's encoding after the decode; nil: val
}

// field is one typed member of a resource of type T.
type field[T any] struct {
	name string
	ptr  func(*T) any // the field's address
	// eventType: read as MacroEvent.eventType (a name or the enum's number).
	eventType bool
}

// fieldIndex is the index of the field named name exactly, or -1.
func fieldIndex[T any](fs []field[T], name string) int {
	for i := range fs {
		if fs[i].name == name {
			return i
		}
	}
	return -1
}

// unmarshalRecord decodes the JSON value b into v (its typed fields, its
// Extra and its record). Only invalid JSON is an error (v is then left
// zero); a value of an unexpected shape is kept as it came and noted.
func unmarshalRecord[T any](b []byte, v *T, fs []field[T], extra *map[string]json.RawMessage, rec **record) error {
	if !json.Valid(b) {
		var zero T
		*v = zero
		var x any
		if err := json.Unmarshal(b, &x); err != nil { // the decoder's own syntax error
			return err
		}
		return errors.New("deviceapi: invalid JSON") // not reached: json.Valid and json.Unmarshal agree
	}
	decodeRecord(canonical(b), v, fs, extra, rec)
	return nil
}

// decodeRecord decodes raw, one valid JSON value in canonical form, into
// v.
func decodeRecord[T any](raw json.RawMessage, v *T, fs []field[T], extra *map[string]json.RawMessage, rec **record) {
	var zero T
	*v = zero
	r := &record{raw: raw}
	*rec = r // v was zeroed: set the record and Extra after it
	switch raw[0] {
	case 'n':
		return
	case '{':
	default:
		r.odd = []Oddity{{Got: excerpt(raw), Want: "an object"}}
		return
	}
	r.members = membersOf(raw)
	// Typed fields take their exact key first, then the first key equal
	// under case folding that no field took exactly (encoding/json's
	// matching, without its "last one wins" between spellings).
	taken := make([]bool, len(fs))
	for i := range r.members {
		if f := fieldIndex(fs, r.members[i].key); f >= 0 {
			r.members[i].field, taken[f] = f, true
		}
	}
	for i := range r.members {
		if r.members[i].field >= 0 {
			continue
		}
		for f := range fs {
			if !taken[f] && strings.EqualFold(r.members[i].key, fs[f].name) {
				r.members[i].field, taken[f] = f, true
				break
			}
		}
	}
	for i := range r.members {
		m := &r.members[i]
		if m.field < 0 {
			if *extra == nil {
				*extra = map[string]json.RawMessage{}
			}
			(*extra)[m.key] = m.val
			continue
		}
		if string(m.val) == "null" {
			m.dec = encodeField(fs[m.field].ptr(v)) // the field stays zero
			if bytes.Equal(m.dec, m.val) {
				m.dec = nil
			}
			continue
		}
		p := fs[m.field].ptr(v)
		want, asCame := readField(p, m.val, fs[m.field].eventType)
		if want != "" {
			r.odd = append(r.odd, Oddity{Path: m.key, Got: excerpt(m.val), Want: want})
		}
		if want != "" || !asCame {
			if m.dec = encodeField(p); bytes.Equal(m.dec, m.val) {
				m.dec = nil
			}
		}
	}
}

// membersOf returns the members of the object raw (canonical JSON): the
// first occurrence of a key sets its place, the last its value, as in
// encoding/json.
func membersOf(raw json.RawMessage) []member {
	var out []member
	for i := 1; raw[i] != '}'; {
		end := valueEnd(raw, i)
		key := unquote(raw[i:end])
		i = end + 1 // the colon
		end = valueEnd(raw, i)
		val := raw[i:end:end]
		if i = end; raw[i] == ',' {
			i++
		}
		if j := slices.IndexFunc(out, func(m member) bool { return m.key == key }); j >= 0 {
			out[j].val = val
			continue
		}
		out = append(out, member{key: key, field: -1, val: val})
	}
	return out
}

// elementsOf returns the elements of the array val (canonical JSON).
func elementsOf(val json.RawMessage) []json.RawMessage {
	out := []json.RawMessage{}
	for i := 1; val[i] != ']'; {
		end := valueEnd(val, i)
		out = append(out, val[i:end:end])
		if i = end; val[i] == ',' {
			i++
		}
	}
	return out
}

// valueEnd returns the index after the value starting at b[i], in
// canonical JSON (valid and compact: a scalar ends at the next ',', '}'
// or ']', a string at its closing quote, a list or an object at its
// closing bracket).
func valueEnd(b []byte, i int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			if depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i
			}
			if depth--; depth == 0 {
				return i + 1
			}
		case ',':
			if depth == 0 {
				return i
			}
		}
	}
	return i
}

// encodeField is a typed field's own encoding (p is its address).
func encodeField(p any) []byte {
	b, err := json.Marshal(p)
	if err != nil { // a number that is not one, set in Go: write what encoding/json says
		return nil
	}
	return b
}

// marshalRecord encodes v (see the comment at the top). plain encodes v
// by its struct tags, without its methods.
func marshalRecord[T any](v *T, fs []field[T], extra map[string]json.RawMessage, rec *record, plain func() ([]byte, error)) ([]byte, error) {
	if rec == nil {
		b, err := plain()
		if err != nil {
			return nil, err
		}
		return appendExtra(b[:len(b)-1], len(b) > 2, fs, extra, nil), nil
	}
	buf := []byte{'{'}
	changed := false
	put := func(key string, val []byte) {
		if len(buf) > 1 {
			buf = append(buf, ',')
		}
		buf = appendString(buf, key)
		buf = append(buf, ':')
		buf = append(buf, val...)
	}
	written := make([]bool, len(fs))
	for _, m := range rec.members {
		if m.field < 0 {
			cur, ok := extra[m.key]
			if !ok || fieldIndex(fs, m.key) >= 0 {
				changed = true
				continue
			}
			changed = changed || !bytes.Equal(cur, m.val)
			put(m.key, cur)
			continue
		}
		written[m.field] = true
		enc := encodeField(fs[m.field].ptr(v))
		if enc == nil {
			return nil, &json.UnsupportedValueError{Str: fs[m.field].name}
		}
		was := m.dec
		if was == nil {
			was = m.val
		}
		if bytes.Equal(enc, was) {
			put(m.key, m.val)
			continue
		}
		changed = true
		put(m.key, enc)
	}
	for f := range fs {
		p := fs[f].ptr(v)
		if written[f] || reflect.ValueOf(p).Elem().IsZero() {
			continue
		}
		enc := encodeField(p)
		if enc == nil {
			return nil, &json.UnsupportedValueError{Str: fs[f].name}
		}
		changed = true
		written[f] = true
		put(fs[f].name, enc)
	}
	for k := range extra {
		if !slices.ContainsFunc(rec.members, func(m member) bool { return m.key == k }) && fieldIndex(fs, k) < 0 {
			changed = true
			break
		}
	}
	if !changed {
		return bytes.Clone(rec.raw), nil
	}
	return appendExtra(buf, len(buf) > 1, fs, extra, rec.members), nil
}

// appendExtra closes the object buf (its '}' cut off; more: it has
// members) with the Extra members that are neither typed nor among
// members, sorted.
func appendExtra[T any](buf []byte, more bool, fs []field[T], extra map[string]json.RawMessage, members []member) []byte {
	keys := make([]string, 0, len(extra))
	for k := range extra {
		if fieldIndex(fs, k) < 0 && !slices.ContainsFunc(members, func(m member) bool { return m.key == k }) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		if more {
			buf = append(buf, ',')
		}
		more = true
		buf = appendString(buf, k)
		buf = append(buf, ':')
		buf = append(buf, extra[k]...)
	}
	return append(buf, '}')
}

// recordDecoder is a resource that decodes itself from canonical raw
// JSON (nested resources are decoded from their parent's bytes).
type recordDecoder interface{ decodeRaw(json.RawMessage) }

// readField reads val (valid canonical JSON, not null) into the field at
// p. want is non-empty, naming what was expected, when the value could
// not be read (the field is then left zero). asCame is true when the
// field's encoding is val itself (no need to compare).
func readField(p any, val json.RawMessage, eventType bool) (want string, asCame bool) {
	switch p := p.(type) {
	case *string:
		s, ok := readString(val)
		if eventType {
			s, ok = readEventType(val)
		}
		if !ok {
			if eventType {
				return "an event type: a name or a number 0..9", false
			}
			return "a string", false
		}
		*p = s
		return "", val[0] == '"' && string(val[1:len(val)-1]) == s // plain: as encoding/json writes it
	case **string:
		s, ok := readString(val)
		if !ok {
			return "a string", false
		}
		*p = &s
		return "", val[0] == '"' && string(val[1:len(val)-1]) == s
	case *bool, **bool:
		b, ok := readBool(val)
		if !ok {
			return "a boolean", false
		}
		if q, isPtr := p.(**bool); isPtr {
			*q = &b
		} else {
			*p.(*bool) = b
		}
		return "", val[0] == 't' || val[0] == 'f'
	case *float64, **float64:
		n, ok := readNumber(val)
		if !ok {
			return "a number", false
		}
		if q, isPtr := p.(**float64); isPtr {
			*q = &n
		} else {
			*p.(*float64) = n
		}
	case *[]string:
		list, ok := readStrings(val)
		if !ok {
			return "a list of strings", false
		}
		*p = list
	case *[]json.RawMessage:
		if val[0] != '[' {
			return "a list", false
		}
		*p = elementsOf(val)
		return "", true
	case *[]Macro:
		return readList(p, val)
	case *[]MacroEvent:
		return readList(p, val)
	case **Profile:
		if val[0] != '{' {
			return "an object", false
		}
		*p = new(Profile)
		(*p).decodeRaw(val)
		return "", true
	case *Configuration:
		if val[0] != '{' {
			return "an object", false
		}
		p.decodeRaw(val)
		return "", true
	default:
		panic("deviceapi: no reader for a field of type " + reflect.TypeOf(p).Elem().String())
	}
	return "", false
}

// readList reads a list of objects into p, each element kept whatever it
// is (an element that is not an object is odd in itself).
func readList[E any, P interface {
	*E
	recordDecoder
}](p *[]E, val json.RawMessage) (string, bool) {
	if val[0] != '[' {
		return "a list of objects", false
	}
	elems := elementsOf(val)
	list := make([]E, len(elems))
	for i, e := range elems {
		P(&list[i]).decodeRaw(e)
	}
	*p = list
	return "", true
}

// readString reads a string; a number is read as its literal text (ids
// such as 1 for "1").
func readString(val json.RawMessage) (string, bool) {
	switch c := val[0]; {
	case c == '"':
		return unquote(val), true
	case c == '-' || c >= '0' && c <= '9':
		return string(val), true
	}
	return "", false
}

// eventTypeNames are the event types a name is matched against.
var eventTypeNames = append(slices.Clone(MacroEventTypes), EventJoystickMove)

// readEventType reads an event type: a name of MacroEventTypes in any
// case (written in the spec's spelling, JoystickMove kept as spelled), a
// number 0..9 (the Unity enum, in the spec's order) or such a number in a
// string. Any other string is kept as it is: an event type hubgate does
// not know.
func readEventType(val json.RawMessage) (string, bool) {
	switch c := val[0]; {
	case c == '"':
	case c == '-' || c >= '0' && c <= '9':
		n, err := strconv.ParseFloat(string(val), 64)
		if err != nil || n != math.Trunc(n) || n < 0 || n >= float64(len(MacroEventTypes)) {
			return "", false
		}
		return MacroEventTypes[int(n)], true
	default:
		return "", false
	}
	text := unquote(val)
	if slices.Contains(eventTypeNames, text) {
		return text, true
	}
	t := strings.TrimSpace(text)
	for _, k := range eventTypeNames {
		if strings.EqualFold(k, t) {
			return k, true
		}
	}
	if n, err := strconv.Atoi(t); err == nil && n >= 0 && n < len(MacroEventTypes) {
		return MacroEventTypes[n], true
	}
	return text, true
}

// readBool reads true or false; also "true"/"false" in any case, and 0,
// 1, "0", "1".
func readBool(val json.RawMessage) (b, ok bool) {
	switch string(val) {
	case "true", "1":
		return true, true
	case "false", "0":
		return false, true
	}
	if val[0] != '"' {
		return false, false
	}
	switch strings.ToLower(strings.TrimSpace(unquote(val))) {
	case "true", "1":
		return true, true
	case "false", "0":
		return false, true
	}
	return false, false
}

// readNumber reads a number, or a JSON number in a string ("100"); one
// beyond float64 is not read.
func readNumber(val json.RawMessage) (float64, bool) {
	text := string(val)
	if val[0] == '"' {
		text = strings.TrimSpace(unquote(val))
	}
	if text == "" || !(text[0] == '-' || text[0] >= '0' && text[0] <= '9') || !json.Valid([]byte(text)) {
		return 0, false
	}
	n, err := strconv.ParseFloat(text, 64)
	return n, err == nil
}

// readStrings reads a list of strings; a number element is read as its
// text, a null element as "", and a lone string as a list of one.
func readStrings(val json.RawMessage) ([]string, bool) {
	if val[0] == '"' {
		return []string{unquote(val)}, true
	}
	if val[0] != '[' {
		return nil, false
	}
	elems := elementsOf(val)
	list := make([]string, 0, len(elems))
	for _, e := range elems {
		if string(e) == "null" {
			list = append(list, "")
			continue
		}
		s, ok := readString(e)
		if !ok {
			return nil, false
		}
		list = append(list, s)
	}
	return list, true
}

// unquote decodes a valid JSON string.
func unquote(quoted json.RawMessage) string {
	if inner := quoted[1 : len(quoted)-1]; !slices.Contains(inner, '\\') && utf8.Valid(inner) {
		return string(inner)
	}
	var s string
	json.Unmarshal(quoted, &s) // valid JSON: cannot fail
	return s
}

// excerpt is a value as an Oddity shows it: at most 40 bytes.
func excerpt(val []byte) string {
	if len(val) <= 40 {
		return string(val)
	}
	cut := 37
	for cut > 0 && !utf8.RuneStart(val[cut]) {
		cut--
	}
	return string(val[:cut]) + "..."
}

// canonical returns the valid JSON b compact, each string written as
// encoding/json writes it.
func canonical(b []byte) json.RawMessage {
	var buf bytes.Buffer
	json.Compact(&buf, b) // valid JSON: cannot fail
	out := buf.Bytes()
	if !slices.ContainsFunc(out, func(c byte) bool { return c == '\\' || c >= utf8.RuneSelf || c == '<' || c == '>' || c == '&' }) {
		return out // every string is plain ASCII: as encoding/json writes it
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	type level struct {
		object bool
		n      int // values and keys written
	}
	var stack []level
	w := make([]byte, 0, len(out))
	sep := func() {
		if len(stack) == 0 {
			return
		}
		l := &stack[len(stack)-1]
		switch {
		case l.n == 0:
		case l.object && l.n%2 == 1:
			w = append(w, ':')
		default:
			w = append(w, ',')
		}
		l.n++
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		switch t := tok.(type) {
		case json.Delim:
			if t == '{' || t == '[' {
				sep()
				stack = append(stack, level{object: t == '{'})
			} else {
				stack = stack[:len(stack)-1]
			}
			w = append(w, byte(t))
		case string:
			sep()
			w = appendString(w, t)
		case json.Number:
			sep()
			w = append(w, t...)
		case bool:
			sep()
			w = strconv.AppendBool(w, t)
		default:
			sep()
			w = append(w, "null"...)
		}
	}
	return w
}

// appendString appends s as a JSON string, as encoding/json writes it.
func appendString(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s) // a string always encodes
			return append(buf, b...)
		}
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"')
}
