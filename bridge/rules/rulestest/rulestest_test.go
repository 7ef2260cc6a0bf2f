package rulestest

import (
	"strings"
	"testing"
)

func TestParseStrict(t *testing.T) {
	_, err := Parse([]byte("rules:\n  - name: a\n    mtch: {command: x}\n"))
	if err == nil || !strings.Contains(err.Error(), "field mtch not found") {
		t.Fatalf("err %v", err)
	}
	f, err := Parse(nil)
	if err != nil || len(f.Rules) != 0 {
		t.Fatalf("empty file: %+v %v", f, err)
	}
}

func TestDemoCompiles(t *testing.T) {
	f, err := Demo()
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Rules) < 4 {
		t.Fatalf("demo has %d rules", len(f.Rules))
	}
	if _, err := f.Compile(); err != nil {
		t.Fatal(err)
	}
}
