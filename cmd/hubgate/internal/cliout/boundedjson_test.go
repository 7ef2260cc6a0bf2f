package cliout

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// Ordinary values print as encoding/json prints them, indented or not.
func TestBoundedJSONIsEncodingJSONWithinBounds(t *testing.T) {
	v := map[string]any{"a": []any{1, "x<y", map[string]any{}, []any{}, nil, true}, "b": map[string]any{"c": "d\"e\\"}, "e": ""}
	for _, indent := range []string{"", "  "} {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", indent)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		got, err := BoundedJSON(v, indent)
		if err != nil {
			t.Fatal(err)
		}
		if string(got)+"\n" != want.String() {
			t.Errorf("indent %q:\n%s\nwant\n%s", indent, got, want.String())
		}
	}
}

// A payload nested 5,000 deep prints in a few kilobytes, valid JSON that
// says what it cut.
func TestBoundedJSONCutsDepth(t *testing.T) {
	deep := json.RawMessage(strings.Repeat("[", 5000) + `"core"` + strings.Repeat("]", 5000))
	for _, indent := range []string{"", "  "} {
		var out bytes.Buffer
		if err := WriteJSON(&out, map[string]any{"payload": deep}); indent == "" {
			out.Reset()
			err = WriteJSONLine(&out, map[string]any{"payload": deep})
			if err != nil {
				t.Fatal(err)
			}
		} else if err != nil {
			t.Fatal(err)
		}
		if out.Len() > 16<<10 {
			t.Errorf("indent %q: %d bytes printed", indent, out.Len())
		}
		if !json.Valid(out.Bytes()) {
			t.Fatalf("indent %q: not JSON: %.300s", indent, out.String())
		}
		if !strings.Contains(out.String(), `[cut: 9880 bytes nested deeper than 64 levels]`) {
			t.Errorf("indent %q: no note of the cut: %.300s", indent, out.String())
		}
	}
}

// A value past MaxJSONBytes: the rest of each open container is one
// note, and the output stays valid JSON near the limit.
func TestBoundedJSONCutsSize(t *testing.T) {
	items := make([]map[string]string, 0, 3000)
	for range 3000 {
		items = append(items, map[string]string{"text": strings.Repeat("x", 4000)})
	}
	v := map[string]any{"items": items, "z": "last"}
	got, err := BoundedJSON(v, "  ")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) > MaxJSONBytes+64<<10 {
		t.Errorf("%d bytes printed, limit %d", len(got), MaxJSONBytes)
	}
	if !json.Valid(got) {
		t.Fatalf("not JSON: ...%s", got[len(got)-300:])
	}
	var back struct {
		Items []any
		Cut   string `json:"[cut]"`
	}
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	last, _ := back.Items[len(back.Items)-1].(string)
	if !strings.Contains(last, "more items") || !strings.Contains(last, "output limit") || len(back.Items) >= 3000 {
		t.Errorf("the array's end: %d items, last %q", len(back.Items), last)
	}
	if !strings.Contains(back.Cut, "1 more items") {
		t.Errorf("the object's cut: %q", back.Cut)
	}
}
