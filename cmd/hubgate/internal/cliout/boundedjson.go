package cliout

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// The bounds of the JSON a command prints (WriteJSON, WriteJSONLine,
// BoundedJSON): what a daemon, a journal or the mock hands over can be
// nested thousands deep or megabytes long, and indenting it as it comes
// costs the square of its depth (a payload nested 5,000 deep printed
// about 100 MB). A value nested deeper than MaxJSONDepth is replaced by a
// note, and once MaxJSONBytes have been printed of one value the rest of
// each open array or object is replaced by a note. Each note is a JSON
// string that says what it cut, so the output stays valid JSON:
//
//	"[cut: 812 bytes nested deeper than 64 levels]"
//	"[cut: 3 more items (1843 bytes) past the 4194304-byte output limit]"
//
// In an object, a note stands under the key "[cut]".
const (
	MaxJSONDepth = 64
	MaxJSONBytes = 4 << 20
)

// WriteJSON prints v as the indented JSON of a --json output, within the
// bounds above.
func WriteJSON(w io.Writer, v any) error {
	b, err := BoundedJSON(v, "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// WriteJSONLine prints v as one line of compact JSON (a stream of
// --json events), within the bounds above.
func WriteJSONLine(w io.Writer, v any) error {
	b, err := BoundedJSON(v, "")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// BoundedJSON renders v as JSON within the bounds above: indented by
// indent, or compact when indent is "".
func BoundedJSON(v any, indent string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	if err := enc.Encode(v); err != nil { // compact, linear in the value's size
		return nil, err
	}
	src := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	r := renderer{src: src, indent: indent, out: make([]byte, 0, min(len(src)+len(src)/4, MaxJSONBytes+1024))}
	r.value(0, 0)
	return r.out, nil
}

// renderer re-renders compact, valid JSON (encoding/json's output).
type renderer struct {
	src    []byte
	indent string
	out    []byte
}

// skip returns the end of the value that starts at i.
func (r *renderer) skip(i int) int {
	depth := 0
	for ; i < len(r.src); i++ {
		switch c := r.src[i]; c {
		case '"':
			i = r.skipString(i) - 1
			if depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i // the end of a number or a literal
			}
			depth--
			if depth == 0 {
				return i + 1
			}
		case ',', ':':
			if depth == 0 {
				return i
			}
		}
	}
	return i
}

// skipString returns the end of the string that starts at i.
func (r *renderer) skipString(i int) int {
	for i++; i < len(r.src); i++ {
		switch r.src[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

func (r *renderer) newline(depth int) {
	if r.indent == "" {
		return
	}
	r.out = append(r.out, '\n')
	for range depth {
		r.out = append(r.out, r.indent...)
	}
}

func (r *renderer) note(format string, args ...any) {
	r.out = strconv.AppendQuote(r.out, "[cut: "+fmt.Sprintf(format, args...)+"]")
}

// value renders the value at i, nested depth deep, and returns its end.
func (r *renderer) value(i, depth int) int {
	if i >= len(r.src) {
		return i
	}
	c := r.src[i]
	if c != '{' && c != '[' {
		end := r.skip(i)
		r.out = append(r.out, r.src[i:end]...)
		return end
	}
	if depth >= MaxJSONDepth {
		end := r.skip(i)
		r.note("%d bytes nested deeper than %d levels", end-i, MaxJSONDepth)
		return end
	}
	obj, closing := c == '{', byte(']')
	if obj {
		closing = '}'
	}
	r.out = append(r.out, c)
	i++
	if i < len(r.src) && r.src[i] == closing {
		r.out = append(r.out, closing)
		return i + 1
	}
	for first := true; i < len(r.src); first = false {
		if !first {
			r.out = append(r.out, ',')
		}
		r.newline(depth + 1)
		if len(r.out) > MaxJSONBytes {
			start, items := i, 0
			for i < len(r.src) && r.src[i] != closing {
				i = r.skip(i)
				if obj && i < len(r.src) && r.src[i] == ':' {
					i = r.skip(i + 1)
				}
				items++
				if i < len(r.src) && r.src[i] == ',' {
					i++
				}
			}
			if obj {
				r.out = append(r.out, `"[cut]":`...)
				if r.indent != "" {
					r.out = append(r.out, ' ')
				}
			}
			r.note("%d more items (%d bytes) past the %d-byte output limit", items, i-start, MaxJSONBytes)
			break
		}
		if obj {
			end := r.skipString(i)
			r.out = append(r.out, r.src[i:end]...)
			r.out = append(r.out, ':')
			if r.indent != "" {
				r.out = append(r.out, ' ')
			}
			i = end + 1 // past ':'
		}
		i = r.value(i, depth+1)
		if i >= len(r.src) || r.src[i] != ',' {
			break
		}
		i++
	}
	r.newline(depth)
	r.out = append(r.out, closing)
	return i + 1
}
