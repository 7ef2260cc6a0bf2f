package rules

import (
	"strings"
	"testing"
)

// A set that can start no run says how to fix it, naming its file; a set
// with a rule, or one that runs unmatched commands, says nothing.
func TestNoRunHintOnlyWhenNothingCanRun(t *testing.T) {
	none, err := Compile(nil, nil, UnmatchedSpec{})
	if err != nil {
		t.Fatal(err)
	}
	if h := none.NoRunHint("/etc/x.yaml"); !strings.Contains(h, "no routing rule in /etc/x.yaml") || !strings.Contains(h, "bridge.unmatched.action: run") {
		t.Errorf("with a file: %q", h)
	}
	if h := none.NoRunHint(""); !strings.Contains(h, "'hubgate config init'") {
		t.Errorf("without a file: %q", h)
	}
	runs, err := Compile(nil, nil, UnmatchedSpec{Action: UnmatchedRun})
	if err != nil {
		t.Fatal(err)
	}
	one, err := Compile([]Spec{{Name: "m", Match: MatchSpec{Command: "x"}, Run: RunTemplate{Prompt: "p"}}}, nil, UnmatchedSpec{})
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*Set{"unmatched run": runs, "a rule": one} {
		if h := s.NoRunHint("/etc/x.yaml"); h != "" {
			t.Errorf("%s: %q", name, h)
		}
	}
}
