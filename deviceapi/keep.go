package deviceapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// The lossless JSON of the resources: a decode/encode round trip gives
// the same JSON document. Members the struct does not type are kept in
// Extra; a wireShape remembers the order the members came in, the key as
// spelled for each typed field (typed fields match exactly first, then
// case-insensitively, as encoding/json does), which came as null and
// which were absent, so that encoding writes null where null came, []
// where [] came and nothing where nothing came. A value built in Go (no
// wireShape) encodes by its struct tags.

// wireShape is how one resource arrived. It is written once, by the
// decode, and only read afterwards (copies of a resource share it).
type wireShape struct {
	null     bool           // the whole value was JSON null
	order    []string       // member keys in arrival order (first occurrence)
	keyField map[string]int // key as spelled -> position in structInfo.fields
	fields   map[int]wireField
}

// wireField is how one typed field arrived.
type wireField struct {
	key  string
	null bool
	// raw and decoded are kept for a []string that held a null element
	// (Go cannot hold it): while the field still equals decoded, raw is
	// written back.
	raw     json.RawMessage
	decoded []string
}

// fieldInfo is one serialised field of a resource struct.
type fieldInfo struct {
	index     int
	name      string
	omitEmpty bool
	omitZero  bool
}

type structInfo struct {
	name   string
	fields []fieldInfo
	byName map[string]int // JSON name -> position in fields
}

var structInfos sync.Map // reflect.Type -> *structInfo

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
		fi := fieldInfo{index: i, name: name}
		for _, o := range strings.Split(opts, ",") {
			fi.omitEmpty = fi.omitEmpty || o == "omitempty"
			fi.omitZero = fi.omitZero || o == "omitzero"
		}
		info.byName[name] = len(info.fields)
		info.fields = append(info.fields, fi)
	}
	v, _ := structInfos.LoadOrStore(t, info)
	return v.(*structInfo)
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

func isJSONNull(raw []byte) bool { return string(bytes.TrimSpace(raw)) == "null" }

// member is one member of a JSON object.
type member struct {
	key string
	raw json.RawMessage
}

// readMembers splits a JSON object into its members, in order; ok is
// false when b is not an object. b is checked with json.Valid first, so
// the scan below only has to find the boundaries of valid JSON.
func readMembers(b []byte) (members []member, ok bool, err error) {
	if !json.Valid(b) {
		var v any
		return nil, false, json.Unmarshal(b, &v) // the decoder's own syntax error
	}
	i := skipSpace(b, 0)
	if b[i] != '{' {
		return nil, false, nil
	}
	i = skipSpace(b, i+1)
	for b[i] != '}' {
		end := stringEnd(b, i)
		key, err := decodeKey(b[i:end])
		if err != nil {
			return nil, true, err
		}
		i = skipSpace(b, end)
		i = skipSpace(b, i+1) // the colon
		end = valueEnd(b, i)
		members = append(members, member{key, json.RawMessage(b[i:end])})
		i = skipSpace(b, end)
		if b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	return members, true, nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index after the string starting at b[i] (a quote).
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// valueEnd returns the index after the value starting at b[i].
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = stringEnd(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return len(b)
	}
	for i < len(b) && !strings.ContainsRune(",}] \t\n\r", rune(b[i])) {
		i++
	}
	return i
}

// decodeKey decodes a quoted key; plain ASCII without escapes is copied.
func decodeKey(quoted []byte) (string, error) {
	plain := true
	for _, c := range quoted[1 : len(quoted)-1] {
		if c == '\\' || c >= 0x80 {
			plain = false
			break
		}
	}
	if plain {
		return string(quoted[1 : len(quoted)-1]), nil
	}
	var key string
	err := json.Unmarshal(quoted, &key)
	return key, err
}

// jsonKind names the JSON type of b for an error message.
func jsonKind(b []byte) string {
	switch t := bytes.TrimSpace(b); {
	case len(t) == 0:
		return "nothing"
	case t[0] == '[':
		return "array"
	case t[0] == '"':
		return "string"
	case t[0] == 't' || t[0] == 'f':
		return "bool"
	default:
		return "number"
	}
}

// unmarshalKeep decodes the JSON object b into the typed fields of v (a
// pointer to a resource struct), every other member into *extra, and how
// it came into *wire. On an error v is left zero.
func unmarshalKeep(b []byte, v any, extra *map[string]json.RawMessage, wire **wireShape) error {
	rv := reflect.ValueOf(v).Elem()
	rv.SetZero()
	if isJSONNull(b) {
		*wire = &wireShape{null: true}
		return nil
	}
	info := structInfoOf(rv.Type())
	members, isObject, err := readMembers(b)
	if err != nil {
		return err
	}
	if !isObject {
		return &json.UnmarshalTypeError{Value: jsonKind(b), Type: rv.Type()}
	}
	shape := &wireShape{keyField: map[string]int{}, fields: map[int]wireField{}}
	values := make(map[string]json.RawMessage, len(members))
	for _, m := range members {
		if _, seen := values[m.key]; !seen {
			shape.order = append(shape.order, m.key)
		}
		values[m.key] = m.raw // the last of duplicate keys wins, as in encoding/json
	}
	// Typed fields take their exact key first, then a key equal under
	// case folding that no field took exactly.
	taken := make([]bool, len(info.fields))
	for _, k := range shape.order {
		if p, ok := info.byName[k]; ok {
			taken[p] = true
			shape.keyField[k] = p
		}
	}
	for _, k := range shape.order {
		if _, ok := shape.keyField[k]; ok {
			continue
		}
		for p, f := range info.fields {
			if !taken[p] && strings.EqualFold(k, f.name) {
				taken[p] = true
				shape.keyField[k] = p
				break
			}
		}
	}
	for _, k := range shape.order {
		raw := values[k]
		p, typed := shape.keyField[k]
		if !typed {
			if *extra == nil {
				*extra = map[string]json.RawMessage{}
			}
			(*extra)[k] = raw
			continue
		}
		fv := rv.Field(info.fields[p].index)
		wf := wireField{key: k, null: isJSONNull(raw)}
		if wf.null && (fv.Kind() == reflect.Pointer || !reflect.PointerTo(fv.Type()).Implements(unmarshalerType)) {
			// What json.Unmarshal does with null here: nothing (the field
			// is zero already). An Unmarshaler value still sees it.
			shape.fields[p] = wf
			continue
		}
		if err := json.Unmarshal(raw, fv.Addr().Interface()); err != nil {
			rv.SetZero()
			return fmt.Errorf("%s.%s: %w", info.name, k, err)
		}
		if s, ok := fv.Interface().([]string); ok && hasNullElement(raw) {
			wf.raw, wf.decoded = raw, slices.Clone(s)
		}
		shape.fields[p] = wf
	}
	*wire = shape
	return nil
}

// hasNullElement reports whether the JSON array raw has a null element.
func hasNullElement(raw json.RawMessage) bool {
	var elems []json.RawMessage
	if json.Unmarshal(raw, &elems) != nil {
		return false
	}
	return slices.ContainsFunc(elems, func(e json.RawMessage) bool { return isJSONNull(e) })
}

// marshalKeep encodes the resource v (a pointer to its struct), its kept
// members and the shape it came in: the members that came first, in their
// order and spelling, then typed fields set since, in struct order, then
// kept members added since, sorted. A typed field wins over a kept member
// of the same key.
func marshalKeep(v any, extra map[string]json.RawMessage, wire *wireShape) ([]byte, error) {
	rv := reflect.ValueOf(v).Elem()
	info := structInfoOf(rv.Type())
	if wire != nil && wire.null && len(extra) == 0 && typedZero(rv, info) {
		return []byte("null"), nil
	}
	var buf bytes.Buffer
	buf.WriteByte('{')
	written := map[string]bool{}
	write := func(key string, val []byte) {
		if len(written) > 0 {
			buf.WriteByte(',')
		}
		written[key] = true
		kb, _ := json.Marshal(key)
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(val)
	}
	done := make([]bool, len(info.fields))
	field := func(p int) ([]byte, error) {
		b, err := json.Marshal(rv.Field(info.fields[p].index).Interface())
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", info.name, info.fields[p].name, err)
		}
		return b, nil
	}
	if wire != nil {
		for _, k := range wire.order {
			p, typed := wire.keyField[k]
			if !typed {
				if raw, ok := extra[k]; ok && !isTypedName(info, k) {
					write(k, raw)
				}
				continue
			}
			done[p] = true
			fv := rv.Field(info.fields[p].index)
			wf := wire.fields[p]
			switch {
			case wf.null && fv.IsZero():
				write(k, []byte("null"))
			case wf.raw != nil && slices.Equal(fv.Interface().([]string), wf.decoded):
				write(k, wf.raw)
			default:
				b, err := field(p)
				if err != nil {
					return nil, err
				}
				write(k, b)
			}
		}
	}
	for p, f := range info.fields {
		if done[p] || written[f.name] {
			continue
		}
		fv := rv.Field(f.index)
		// A decoded resource writes only the fields that came or that were
		// set since; a resource built in Go follows its tags.
		if (wire != nil && fv.IsZero()) || (f.omitEmpty && isEmptyValue(fv)) || (f.omitZero && fv.IsZero()) {
			continue
		}
		b, err := field(p)
		if err != nil {
			return nil, err
		}
		write(f.name, b)
	}
	for _, k := range sortedKeys(extra) {
		if written[k] || isTypedName(info, k) {
			continue
		}
		write(k, extra[k])
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
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
