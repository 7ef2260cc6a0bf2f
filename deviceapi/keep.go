package deviceapi

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// The lossless, liberal JSON of the resources. A decode reads every
// member it can and keeps the rest; a decode/encode round trip gives the
// same JSON document.
//
// A wireShape remembers how one resource arrived: its members in arrival
// order and spelling (typed fields match their exact key first, then
// case-insensitively, as encoding/json does), which came as null, and,
// for a member whose value was read in another type than its field's
// ("100" for a number, 0 for an event type) or not read at all (an odd
// member), the value as it came: it is written back while the field
// still holds what the decode gave it. A resource that was not an object
// at all keeps its whole JSON. A value built in Go (no wireShape) encodes
// by its struct tags.
//
// The decoder works on one string copy of the input: member keys and
// plain string values are substrings of it, so a well-typed macro costs
// few allocations.

// keeper is a resource type: it keeps the members it does not type and
// the shape it came in.
type keeper interface {
	keepParts() (*map[string]json.RawMessage, **wireShape)
}

func (d *UserDevice) keepParts() (*map[string]json.RawMessage, **wireShape) { return &d.Extra, &d.wire }
func (p *Profile) keepParts() (*map[string]json.RawMessage, **wireShape)    { return &p.Extra, &p.wire }
func (c *Configuration) keepParts() (*map[string]json.RawMessage, **wireShape) {
	return &c.Extra, &c.wire
}
func (m *Macro) keepParts() (*map[string]json.RawMessage, **wireShape)      { return &m.Extra, &m.wire }
func (e *MacroEvent) keepParts() (*map[string]json.RawMessage, **wireShape) { return &e.Extra, &e.wire }
func (t *DeviceToken) keepParts() (*map[string]json.RawMessage, **wireShape) {
	return &t.Extra, &t.wire
}

// wireShape is how one resource arrived. It is written once, by the
// decode, and only read afterwards (copies of a resource share it).
type wireShape struct {
	null    bool         // the whole value was JSON null
	whole   string       // the whole value, when it was not an object (nor null)
	members []wireMember // in arrival order (first occurrence of each key)
	odd     []Oddity     // this resource's own odd members (Path relative to it)
}

// wireMember is one member as it came.
type wireMember struct {
	key   string
	field int // position in structInfo.fields; -1: kept in Extra
	null  bool
	kept  *keptValue // nil: the field's own encoding is what came
}

// keptValue is a member's value as it came and what the decode made of
// it; the value is written back while the field still equals decoded.
type keptValue struct {
	raw     string
	decoded any // the field's value after the decode (the pointee for a pointer); nil: the zero value
}

// fieldKind is how the decoder reads a field.
type fieldKind uint8

const (
	kindOther     fieldKind = iota // encoding/json, an error makes the member odd
	kindString                     // string
	kindEventType                  // MacroEvent.eventType: a string, or the enum's number
	kindBool                       // bool
	kindFloat                      // float64
	kindStringPtr                  // *string
	kindBoolPtr                    // *bool
	kindFloatPtr                   // *float64
	kindStrings                    // []string
	kindRaws                       // []json.RawMessage
	kindKeepers                    // []T, *T a keeper
	kindKeeperPtr                  // *T, a keeper
	kindKeeper                     // T, *T a keeper
)

// fieldInfo is one serialised field of a resource struct.
type fieldInfo struct {
	index     int
	name      string
	kind      fieldKind
	omitEmpty bool
	omitZero  bool
}

type structInfo struct {
	name   string
	fields []fieldInfo
	byName map[string]int // JSON name -> position in fields
}

// maxFields is the most typed fields a resource may have: the decoder
// tracks them in a 64-bit mask.
const maxFields = 64

var (
	structInfos    sync.Map // reflect.Type -> *structInfo
	keeperType     = reflect.TypeFor[keeper]()
	rawMessageType = reflect.TypeFor[json.RawMessage]()
	macroEventType = reflect.TypeFor[MacroEvent]()
)

func kindOf(owner reflect.Type, name string, t reflect.Type) fieldKind {
	switch {
	case owner == macroEventType && name == "eventType":
		return kindEventType
	case t.Kind() == reflect.String:
		return kindString
	case t.Kind() == reflect.Bool:
		return kindBool
	case t.Kind() == reflect.Float64:
		return kindFloat
	case t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.String:
		return kindStringPtr
	case t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Bool:
		return kindBoolPtr
	case t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Float64:
		return kindFloatPtr
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		return kindStrings
	case t.Kind() == reflect.Slice && t.Elem() == rawMessageType:
		return kindRaws
	case t.Kind() == reflect.Slice && reflect.PointerTo(t.Elem()).Implements(keeperType):
		return kindKeepers
	case t.Kind() == reflect.Pointer && t.Implements(keeperType):
		return kindKeeperPtr
	case reflect.PointerTo(t).Implements(keeperType):
		return kindKeeper
	}
	return kindOther
}

func structInfoOf(t reflect.Type) *structInfo {
	if v, ok := structInfos.Load(t); ok {
		return v.(*structInfo)
	}
	info := &structInfo{name: t.Name(), byName: map[string]int{}}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if !f.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		fi := fieldInfo{index: i, name: name, kind: kindOf(t, name, f.Type)}
		for _, o := range strings.Split(opts, ",") {
			fi.omitEmpty = fi.omitEmpty || o == "omitempty"
			fi.omitZero = fi.omitZero || o == "omitzero"
		}
		info.byName[name] = len(info.fields)
		info.fields = append(info.fields, fi)
	}
	if len(info.fields) > maxFields {
		panic("deviceapi: " + t.Name() + " has too many fields for the decoder")
	}
	v, _ := structInfos.LoadOrStore(t, info)
	return v.(*structInfo)
}

// unmarshalKeep decodes the JSON value b into the resource v. Only
// invalid JSON is an error (v is then left zero); a value of an
// unexpected shape is kept as it came and noted (see Oddity).
func unmarshalKeep(b []byte, v keeper) error {
	s := string(b) // the one copy every kept string points into
	if end := validValue(s, skipSpace(s, 0), 0); end < 0 || skipSpace(s, end) != len(s) {
		var x any
		if err := json.Unmarshal(b, &x); err != nil { // the decoder's own syntax error
			reflect.ValueOf(v).Elem().SetZero()
			return err
		}
	}
	decodeKeep(strings.Trim(s, " \t\r\n"), v) // valid JSON: one value
	return nil
}

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

// validValue returns the index after the JSON value starting at s[i], or
// -1 when there is none (json.Valid's grammar: any byte from 0x20 in a
// string; nesting to maxDepth).
func validValue(s string, i, depth int) int {
	if i >= len(s) {
		return -1
	}
	switch c := s[i]; {
	case c == '{' || c == '[':
		if depth >= maxDepth {
			return -1
		}
		closing := byte('}')
		if c == '[' {
			closing = ']'
		}
		i = skipSpace(s, i+1)
		if i < len(s) && s[i] == closing {
			return i + 1
		}
		for {
			if c == '{' {
				if i = validString(s, i); i < 0 {
					return -1
				}
				if i = skipSpace(s, i); i >= len(s) || s[i] != ':' {
					return -1
				}
				i = skipSpace(s, i+1)
			}
			if i = validValue(s, i, depth+1); i < 0 {
				return -1
			}
			switch i = skipSpace(s, i); {
			case i >= len(s):
				return -1
			case s[i] == ',':
				i = skipSpace(s, i+1)
			case s[i] == closing:
				return i + 1
			default:
				return -1
			}
		}
	case c == '"':
		return validString(s, i)
	case c == 't':
		return literalEnd(s, i, "true")
	case c == 'f':
		return literalEnd(s, i, "false")
	case c == 'n':
		return literalEnd(s, i, "null")
	}
	end := i
	for end < len(s) && strings.IndexByte("0123456789+-.eE", s[end]) >= 0 {
		end++
	}
	if !isJSONNumber(s[i:end]) {
		return -1
	}
	return end
}

func literalEnd(s string, i int, lit string) int {
	if strings.HasPrefix(s[i:], lit) {
		return i + len(lit)
	}
	return -1
}

// validString returns the index after the JSON string starting at s[i],
// or -1.
func validString(s string, i int) int {
	if i >= len(s) || s[i] != '"' {
		return -1
	}
	for i++; i < len(s); {
		switch c := s[i]; {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		case c == '\\':
			if i+1 >= len(s) {
				return -1
			}
			switch s[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(s) {
					return -1
				}
				for _, h := range []byte(s[i+2 : i+6]) {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return -1
					}
				}
				i += 6
			default:
				return -1
			}
		default:
			i++
		}
	}
	return -1
}

// member is one member of a JSON object: its key (decoded) and its value
// as it came.
type member struct {
	key, val string
}

// decodeKeep decodes the valid JSON value s (no surrounding space) into
// the resource v.
func decodeKeep(s string, v keeper) {
	rv := reflect.ValueOf(v).Elem()
	rv.SetZero()
	extra, wire := v.keepParts()
	switch s[0] {
	case 'n':
		*wire = &wireShape{null: true}
		return
	case '{':
	default:
		*wire = &wireShape{whole: s, odd: []Oddity{{Got: excerpt(s), Want: "an object"}}}
		return
	}
	info := structInfoOf(rv.Type())
	var stack [32]member
	members := scanMembers(s, stack[:0])
	shape := &wireShape{members: make([]wireMember, 0, len(members))}
	// The first occurrence of a key sets its place, the last its value, as
	// in encoding/json.
	var index map[string]int
	var valStack [32]member
	vals := valStack[:0]
	if len(members) > 16 {
		index = make(map[string]int, len(members))
	}
	for _, m := range members {
		at := -1
		if index != nil {
			if p, ok := index[m.key]; ok {
				at = p
			}
		} else {
			for p := range shape.members {
				if shape.members[p].key == m.key {
					at = p
					break
				}
			}
		}
		if at >= 0 {
			vals[at] = m
			continue
		}
		if index != nil {
			index[m.key] = len(shape.members)
		}
		shape.members = append(shape.members, wireMember{key: m.key, field: -1})
		vals = append(vals, m)
	}
	// Typed fields take their exact key first, then a key equal under
	// case folding that no field took exactly.
	var taken uint64
	for p := range shape.members {
		if f, ok := info.byName[shape.members[p].key]; ok {
			taken |= 1 << f
			shape.members[p].field = f
		}
	}
	for p := range shape.members {
		if shape.members[p].field >= 0 {
			continue
		}
		for f := range info.fields {
			if taken&(1<<f) == 0 && strings.EqualFold(shape.members[p].key, info.fields[f].name) {
				taken |= 1 << f
				shape.members[p].field = f
				break
			}
		}
	}
	for p := range shape.members {
		wm := &shape.members[p]
		val := vals[p].val
		if wm.field < 0 {
			if *extra == nil {
				*extra = map[string]json.RawMessage{}
			}
			(*extra)[wm.key] = json.RawMessage(val)
			continue
		}
		f := &info.fields[wm.field]
		if val[0] == 'n' {
			wm.null = true
			continue
		}
		fv := rv.Field(f.index)
		decoded, converted, want := decodeField(val, fv, f.kind)
		switch {
		case want != "":
			shape.odd = append(shape.odd, Oddity{Path: wm.key, Got: excerpt(val), Want: want})
			fv.SetZero()
			wm.kept = &keptValue{raw: val} // written back while the field stays zero
		case converted:
			wm.kept = &keptValue{raw: val, decoded: decoded}
		}
	}
	*wire = shape
}

// decodeField reads the value val into the field fv. converted is true
// when the value came in another shape than the field's encoding; then
// decoded is the field's value (the pointee for a pointer). want is
// non-empty, naming what was expected, when the value could not be read.
func decodeField(val string, fv reflect.Value, kind fieldKind) (decoded any, converted bool, want string) {
	switch kind {
	case kindString, kindStringPtr:
		s, conv, ok := readString(val)
		return store(fv, kind == kindStringPtr, s, conv, ok, "a string")
	case kindEventType:
		s, conv, ok := readEventType(val)
		return store(fv, false, s, conv, ok, "an event type: a name or a number 0..9")
	case kindBool, kindBoolPtr:
		b, conv, ok := readBool(val)
		return store(fv, kind == kindBoolPtr, b, conv, ok, "a boolean")
	case kindFloat, kindFloatPtr:
		n, conv, ok := readNumber(val)
		return store(fv, kind == kindFloatPtr, n, conv, ok, "a number")
	case kindStrings:
		list, conv, ok := readStrings(val)
		if !ok {
			return nil, false, "a list of strings"
		}
		fv.Set(reflect.ValueOf(list))
		if conv {
			return slices.Clone(list), true, ""
		}
	case kindRaws:
		if val[0] != '[' {
			return nil, false, "a list"
		}
		var stack [16]string
		elems := elementsOf(val, stack[:])
		list := make([]json.RawMessage, len(elems))
		for i, e := range elems {
			list[i] = json.RawMessage(e)
		}
		fv.Set(reflect.ValueOf(list))
	case kindKeepers:
		if val[0] != '[' {
			return nil, false, "a list of objects"
		}
		var stack [16]string
		elems := elementsOf(val, stack[:])
		list := reflect.MakeSlice(fv.Type(), len(elems), len(elems))
		for i, e := range elems {
			decodeKeep(e, list.Index(i).Addr().Interface().(keeper))
		}
		fv.Set(list)
	case kindKeeperPtr:
		if val[0] != '{' {
			return nil, false, "an object"
		}
		p := reflect.New(fv.Type().Elem())
		decodeKeep(val, p.Interface().(keeper))
		fv.Set(p)
	case kindKeeper:
		if val[0] != '{' {
			return nil, false, "an object"
		}
		decodeKeep(val, fv.Addr().Interface().(keeper))
	default:
		p := reflect.New(fv.Type())
		if err := json.Unmarshal([]byte(val), p.Interface()); err != nil {
			return nil, false, "a " + fv.Type().String()
		}
		fv.Set(p.Elem())
	}
	return nil, false, ""
}

// store sets the field fv (a T, or a *T when ptr) to v when it was read
// (ok), and answers as decodeField does.
func store[T any](fv reflect.Value, ptr bool, v T, converted, ok bool, want string) (any, bool, string) {
	switch {
	case !ok:
		return nil, false, want
	case ptr:
		p := new(T)
		*p = v
		fv.Set(reflect.ValueOf(p))
	default:
		*fv.Addr().Interface().(*T) = v
	}
	if converted {
		return v, true, ""
	}
	return nil, false, ""
}

// readString reads a string; a number is read as its literal text
// (ids such as 1 for "1").
func readString(val string) (s string, converted, ok bool) {
	switch c := val[0]; {
	case c == '"':
		return unquote(val), false, true
	case c == '-' || c >= '0' && c <= '9':
		return val, true, true
	}
	return "", false, false
}

// readEventType reads an event type: a name of MacroEventTypes in any
// case (written in the spec's spelling, JoystickMove kept as spelled), a
// number 0..9 (the Unity enum, in the spec's order) or such a number in a
// string. Any other string is kept as it is: an event type hubgate does
// not know.
func readEventType(val string) (s string, converted, ok bool) {
	var text string
	switch c := val[0]; {
	case c == '"':
		text = unquote(val)
	case c == '-' || c >= '0' && c <= '9':
		n, err := strconv.ParseFloat(val, 64)
		if err != nil || n != math.Trunc(n) || n < 0 || n >= float64(len(MacroEventTypes)) {
			return "", false, false
		}
		return MacroEventTypes[int(n)], true, true
	default:
		return "", false, false
	}
	for _, k := range MacroEventTypes {
		if k == text {
			return k, false, true
		}
	}
	if text == EventJoystickMove {
		return text, false, true
	}
	t := strings.TrimSpace(text)
	for _, k := range eventTypeNames {
		if strings.EqualFold(k, t) {
			return k, true, true
		}
	}
	if n, err := strconv.Atoi(t); err == nil && n >= 0 && n < len(MacroEventTypes) {
		return MacroEventTypes[n], true, true
	}
	return text, false, true
}

// eventTypeNames are the event types a name is matched against.
var eventTypeNames = append(slices.Clone(MacroEventTypes), EventJoystickMove)

// readBool reads true or false; also "true"/"false" in any case, and 0,
// 1, "0", "1".
func readBool(val string) (b, converted, ok bool) {
	switch val {
	case "true":
		return true, false, true
	case "false":
		return false, false, true
	case "1":
		return true, true, true
	case "0":
		return false, true, true
	}
	if val[0] != '"' {
		return false, false, false
	}
	switch strings.ToLower(strings.TrimSpace(unquote(val))) {
	case "true", "1":
		return true, true, true
	case "false", "0":
		return false, true, true
	}
	return false, false, false
}

// readNumber reads a number, or a JSON number in a string ("100"); one
// beyond float64 is not read.
func readNumber(val string) (n float64, converted, ok bool) {
	text := val
	if val[0] == '"' {
		text = strings.TrimSpace(unquote(val))
		if !isJSONNumber(text) {
			return 0, false, false
		}
		converted = true
	} else if !isJSONNumber(text) {
		return 0, false, false
	}
	n, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return 0, false, false
	}
	return n, converted, true
}

// readStrings reads a list of strings; a number element is read as its
// text, a null element as "" (the list is then kept as it came), and a
// lone string as a list of one.
func readStrings(val string) (list []string, converted, ok bool) {
	if val[0] == '"' {
		return []string{unquote(val)}, true, true
	}
	if val[0] != '[' {
		return nil, false, false
	}
	var stack [16]string
	elems := elementsOf(val, stack[:])
	list = make([]string, 0, len(elems))
	for _, e := range elems {
		if e[0] == 'n' {
			list = append(list, "")
			converted = true
			continue
		}
		s, conv, ok := readString(e)
		if !ok {
			return nil, false, false
		}
		converted = converted || conv
		list = append(list, s)
	}
	return list, converted, true
}

// isJSONNumber reports whether s is a number in JSON's grammar.
func isJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - start
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

// unquote decodes a valid JSON string; a plain one is a substring.
func unquote(quoted string) string {
	inner := quoted[1 : len(quoted)-1]
	if strings.IndexByte(inner, '\\') < 0 && utf8.ValidString(inner) {
		return inner
	}
	var s string
	_ = json.Unmarshal([]byte(quoted), &s) // valid JSON: cannot fail
	return s
}

// excerpt is a value as an Oddity shows it: at most 40 bytes.
func excerpt(val string) string {
	if len(val) <= 40 {
		return val
	}
	cut := 37
	for cut > 0 && !utf8.RuneStart(val[cut]) {
		cut--
	}
	return val[:cut] + "..."
}

// scanMembers appends the members of the valid JSON object s to out.
func scanMembers(s string, out []member) []member {
	i := skipSpace(s, 1)
	for s[i] != '}' {
		end := stringEnd(s, i)
		key := unquote(s[i:end])
		i = skipSpace(s, end)
		i = skipSpace(s, i+1) // the colon
		end = valueEnd(s, i)
		out = append(out, member{key, s[i:end]})
		i = skipSpace(s, end)
		if s[i] == ',' {
			i = skipSpace(s, i+1)
		}
	}
	return out
}

// elementsOf returns the elements of the valid JSON array s, in stack
// when they fit (the caller's buffer, so that a short list costs no
// allocation).
func elementsOf(s string, stack []string) []string {
	out := stack[:0]
	i := skipSpace(s, 1)
	for s[i] != ']' {
		end := valueEnd(s, i)
		out = append(out, s[i:end])
		i = skipSpace(s, end)
		if s[i] == ',' {
			i = skipSpace(s, i+1)
		}
	}
	return out
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index after the string starting at s[i] (a quote).
func stringEnd(s string, i int) int {
	for i++; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(s)
}

// valueEnd returns the index after the value starting at s[i].
func valueEnd(s string, i int) int {
	switch s[i] {
	case '"':
		return stringEnd(s, i)
	case '{', '[':
		depth := 0
		for ; i < len(s); i++ {
			switch s[i] {
			case '"':
				i = stringEnd(s, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return len(s)
	}
	for i < len(s) && !strings.ContainsRune(",}] \t\n\r", rune(s[i])) {
		i++
	}
	return i
}

// marshalKeep encodes the resource v, its kept members and the shape it
// came in: the members that came first, in their order and spelling, then
// typed fields set since, in struct order, then kept members added since,
// sorted. A typed field wins over a kept member of the same key.
func marshalKeep(v keeper) ([]byte, error) {
	return appendKeep(nil, v)
}

func appendKeep(buf []byte, v keeper) ([]byte, error) {
	rv := reflect.ValueOf(v).Elem()
	info := structInfoOf(rv.Type())
	extraP, wireP := v.keepParts()
	extra, wire := *extraP, *wireP
	if wire != nil && (wire.null || wire.whole != "") && len(extra) == 0 && typedZero(rv, info) {
		if wire.null {
			return append(buf, "null"...), nil
		}
		return append(buf, wire.whole...), nil
	}
	buf = append(buf, '{')
	start := len(buf)
	var written uint64 // typed fields written
	writtenKey := func(k string) bool {
		if p, ok := info.byName[k]; ok && written&(1<<p) != 0 {
			return true
		}
		if wire == nil {
			return false
		}
		for _, m := range wire.members {
			if m.key == k {
				return true
			}
		}
		return false
	}
	key := func(k string) {
		if len(buf) > start {
			buf = append(buf, ',')
		}
		buf = appendString(buf, k)
		buf = append(buf, ':')
	}
	var err error
	if wire != nil {
		for _, m := range wire.members {
			if m.field < 0 {
				if raw, ok := extra[m.key]; ok && !isTypedName(info, m.key) {
					key(m.key)
					buf = append(buf, raw...)
				}
				continue
			}
			written |= 1 << m.field
			f := &info.fields[m.field]
			fv := rv.Field(f.index)
			key(m.key)
			switch {
			case m.kept != nil && sameAsDecoded(fv, m.kept.decoded):
				buf = append(buf, m.kept.raw...)
			case m.null && fv.IsZero():
				buf = append(buf, "null"...)
			default:
				if buf, err = appendField(buf, fv, f, info); err != nil {
					return nil, err
				}
			}
		}
	}
	for p, f := range info.fields {
		if written&(1<<p) != 0 {
			continue
		}
		fv := rv.Field(f.index)
		// A decoded resource writes only the fields that came or that were
		// set since; a resource built in Go follows its tags.
		if (wire != nil && fv.IsZero()) || (f.omitEmpty && isEmptyValue(fv)) || (f.omitZero && fv.IsZero()) {
			continue
		}
		written |= 1 << p
		key(f.name)
		if buf, err = appendField(buf, fv, &info.fields[p], info); err != nil {
			return nil, err
		}
	}
	if len(extra) > 0 {
		for _, k := range sortedKeys(extra) {
			if writtenKey(k) || isTypedName(info, k) {
				continue
			}
			key(k)
			buf = append(buf, extra[k]...)
		}
	}
	return append(buf, '}'), nil
}

// sameAsDecoded reports whether the field still holds what the decode
// gave it.
func sameAsDecoded(fv reflect.Value, decoded any) bool {
	if fv.Kind() == reflect.Pointer {
		if fv.IsNil() || decoded == nil {
			return fv.IsNil() && decoded == nil
		}
		fv = fv.Elem()
	}
	switch d := decoded.(type) {
	case []string:
		return fv.Kind() == reflect.Slice && (fv.IsNil() == (d == nil)) && slices.Equal(fv.Interface().([]string), d)
	case nil:
		return fv.IsZero()
	}
	return fv.Interface() == decoded
}

// appendField encodes one typed field.
func appendField(buf []byte, fv reflect.Value, f *fieldInfo, info *structInfo) ([]byte, error) {
	switch f.kind {
	case kindString, kindEventType:
		return appendString(buf, fv.String()), nil
	case kindStringPtr, kindBoolPtr, kindFloatPtr:
		if fv.IsNil() {
			return append(buf, "null"...), nil
		}
		fv = fv.Elem()
		if fv.Kind() == reflect.String {
			return appendString(buf, fv.String()), nil
		}
	case kindStrings, kindKeepers:
		if fv.IsNil() {
			return append(buf, "null"...), nil
		}
		buf = append(buf, '[')
		for i := range fv.Len() {
			if i > 0 {
				buf = append(buf, ',')
			}
			if f.kind == kindStrings {
				buf = appendString(buf, fv.Index(i).String())
				continue
			}
			var err error
			if buf, err = appendKeep(buf, fv.Index(i).Addr().Interface().(keeper)); err != nil {
				return nil, err
			}
		}
		return append(buf, ']'), nil
	case kindKeeperPtr:
		if fv.IsNil() {
			return append(buf, "null"...), nil
		}
		return appendKeep(buf, fv.Interface().(keeper))
	case kindKeeper:
		if fv.CanAddr() {
			return appendKeep(buf, fv.Addr().Interface().(keeper))
		}
		p := reflect.New(fv.Type())
		p.Elem().Set(fv)
		return appendKeep(buf, p.Interface().(keeper))
	}
	switch fv.Kind() {
	case reflect.Bool:
		return strconv.AppendBool(buf, fv.Bool()), nil
	case reflect.Float64:
		if n := fv.Float(); n == math.Trunc(n) && math.Abs(n) < 1e15 && !(n == 0 && math.Signbit(n)) {
			return strconv.AppendInt(buf, int64(n), 10), nil
		}
	}
	b, err := json.Marshal(fv.Interface())
	if err != nil {
		return nil, fmt.Errorf("%s.%s: %w", info.name, f.name, err)
	}
	return append(buf, b...), nil
}

// appendString appends s as a JSON string: plain printable ASCII as it
// is, anything else as encoding/json writes it.
func appendString(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s) // a string always encodes
			return append(buf, b...)
		}
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"')
}

// typedZero reports whether every typed field of rv is zero.
func typedZero(rv reflect.Value, info *structInfo) bool {
	for _, f := range info.fields {
		if !rv.Field(f.index).IsZero() {
			return false
		}
	}
	return true
}

func isTypedName(info *structInfo, k string) bool {
	_, ok := info.byName[k]
	return ok
}

// isEmptyValue is encoding/json's omitempty test.
func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
