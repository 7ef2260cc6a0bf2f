package rules

import "testing"

// TestDescribe: how a rule is described to the person (the demo's hint,
// `rules test`), on the embedded demo set.
func TestDescribe(t *testing.T) {
	set, err := Demo()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"hello":      `rule "hello": command "hello"`,
		"typed-text": `rule "typed-text": event_type "Type"`,
		"ask":        `rule "ask": custom_action "ask-agent"`,
		"slow":       `rule "slow": command_glob "slow *"; busy: queue (at most 3 waiting, for 5m0s)`,
		"long":       `rule "long": command_glob "long *"; busy: restart (a new one cancels the run in flight)`,
		"notify":     `rule "notify": command_regex "(?i)notify\\s+(?P<text>.+)"`,
	} {
		r, ok := set.Rule(name)
		if !ok {
			t.Fatalf("no rule %q in the demo set", name)
		}
		if got := r.Describe(); got != want {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
	hello, _ := set.Rule("hello")
	if got, want := hello.DescribeBusy(), "single (dropped while a run is in flight)"; got != want {
		t.Errorf("busy %q, want %q", got, want)
	}
	if got, want := DescribeMatch(MatchSpec{MacroName: "Lights", EventType: "KeyPress"}), `macro_name "Lights", event_type "KeyPress"`; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
