package rules

import (
	"encoding/json"
	"testing"

	"github.com/hubgate/hubgate/deviceapi"
)

func mustCompile(t *testing.T, specs []Spec, tools []CommandToolSpec, u UnmatchedSpec) *Set {
	t.Helper()
	s, err := Compile(specs, tools, u)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return s
}

func rule(name string, m MatchSpec) Spec {
	return Spec{Name: name, Match: m, Run: RunTemplate{Prompt: "do " + name}}
}

// typeEvent is a Type event carrying text under "text", the name hubgate
// read before the vendor's typedPhrase was known (still a fallback).
func typeEvent(t testing.TB, text string) deviceapi.MacroEvent {
	t.Helper()
	var e deviceapi.MacroEvent
	b, _ := json.Marshal(map[string]string{"eventType": deviceapi.EventType, "text": text})
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	return e
}

func TestMatch(t *testing.T) {
	specs := []Spec{
		rule("exact", MatchSpec{Command: "lights on"}),
		rule("glob", MatchSpec{CommandGlob: "play *"}),
		rule("glob-class", MatchSpec{CommandGlob: "mode [a-c]?"}),
		rule("glob-negated", MatchSpec{CommandGlob: "room [!0-9]"}),
		rule("glob-escape", MatchSpec{CommandGlob: `what\?`}),
		rule("regex", MatchSpec{CommandRegex: `(?i)volume (\d+)`}),
		rule("macro-name", MatchSpec{MacroName: "Coffee"}),
		rule("macro-id", MatchSpec{MacroID: "m-42"}),
		rule("stop-outputs", MatchSpec{EventType: deviceapi.EventStopOutputs}),
		rule("typed-and-command", MatchSpec{Command: "type it", EventType: deviceapi.EventType}),
		rule("typed", MatchSpec{EventType: deviceapi.EventType}),
		rule("after-exact", MatchSpec{Command: "lights on"}), // shadowed by "exact"
	}
	s := mustCompile(t, specs, nil, UnmatchedSpec{})
	typed := &deviceapi.Macro{ID: "t", Name: "Typer", Events: []deviceapi.MacroEvent{typeEvent(t, "hi")}}
	stop := &deviceapi.Macro{ID: "s", Name: "Stop", Events: []deviceapi.MacroEvent{{EventType: deviceapi.EventKeyPress}, {EventType: deviceapi.EventStopOutputs}}}
	tests := []struct {
		name string
		cmd  Command
		want string // "" for no match
	}{
		{"exact", Command{Text: "lights on"}, "exact"},
		{"exact is case-sensitive", Command{Text: "Lights on"}, ""},
		{"exact is not trimmed", Command{Text: "lights on "}, ""},
		{"glob star", Command{Text: "play jazz / blues"}, "glob"},
		{"glob star matches empty", Command{Text: "play "}, "glob"},
		{"glob is anchored", Command{Text: "replay jazz"}, ""},
		{"glob class and ?", Command{Text: "mode bX"}, "glob-class"},
		{"glob class miss", Command{Text: "mode dX"}, ""},
		{"glob ? is one character", Command{Text: "mode b"}, ""},
		{"glob negated class", Command{Text: "room x"}, "glob-negated"},
		{"glob negated class miss", Command{Text: "room 7"}, ""},
		{"glob escape", Command{Text: "what?"}, "glob-escape"},
		{"glob escaped ? is literal", Command{Text: "whatX"}, ""},
		{"regex full match", Command{Text: "Volume 11"}, "regex"},
		{"regex is anchored", Command{Text: "volume 11 please"}, ""},
		{"macro name", Command{Text: "x", Macro: &deviceapi.Macro{Name: "Coffee"}}, "macro-name"},
		{"macro name without macro", Command{Text: "Coffee"}, ""},
		{"macro id", Command{Text: "x", Macro: &deviceapi.Macro{ID: "m-42", Name: "Other"}}, "macro-id"},
		{"event type present", Command{Text: "x", Macro: stop}, "stop-outputs"},
		{"all criteria must hold", Command{Text: "type it", Macro: typed}, "typed-and-command"},
		{"one criterion fails, next rule", Command{Text: "other", Macro: typed}, "typed"},
		{"event type absent", Command{Text: "x", Macro: &deviceapi.Macro{Name: "y", Events: []deviceapi.MacroEvent{{EventType: deviceapi.EventPause}}}}, ""},
		{"nothing", Command{Text: "unknown"}, ""},
		{"empty text", Command{}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, ok := s.Match(tc.cmd)
			got := ""
			if ok {
				got = r.Name()
			}
			if got != tc.want {
				t.Fatalf("Match(%q) = %q, want %q", tc.cmd.Text, got, tc.want)
			}
			if ok != (tc.want != "") || (ok && r == nil) {
				t.Fatalf("ok %v rule %v", ok, r)
			}
		})
	}
}

func TestFirstMatchWinsAndRoute(t *testing.T) {
	s := mustCompile(t, []Spec{
		rule("a", MatchSpec{CommandGlob: "*"}),
		rule("b", MatchSpec{Command: "x"}),
	}, nil, UnmatchedSpec{})
	if r, ok := s.Match(Command{Text: "x"}); !ok || r.Name() != "a" || r.Index() != 0 {
		t.Fatalf("got %v %v", r, ok)
	}
	if r, ok := s.Rule("b"); !ok || r.Index() != 1 {
		t.Fatal("Rule(b)")
	}

	// Route: unmatched ignored vs run.
	s = mustCompile(t, []Spec{rule("a", MatchSpec{Command: "a"})}, nil, UnmatchedSpec{})
	if _, matched, ok := s.Route(Command{Text: "zzz"}); matched || ok {
		t.Fatal("ignored command routed")
	}
	if _, ok := s.Unmatched(Command{Text: "zzz"}); ok {
		t.Fatal("Unmatched with action ignore")
	}
	if _, ok := s.Rule(UnmatchedRuleName); ok {
		t.Fatal("Rule(unmatched) with action ignore")
	}
	s = mustCompile(t, []Spec{rule("a", MatchSpec{Command: "a"})}, nil, UnmatchedSpec{Action: UnmatchedRun, Busy: BusyQueue})
	r, matched, ok := s.Route(Command{Text: "zzz"})
	if matched || !ok || r.Index() != -1 || r.Name() != UnmatchedRuleName || r.Busy() != BusyQueue || r.QueueLimit() != DefaultQueueLimit {
		t.Fatalf("unmatched route: %v %v %v", r, matched, ok)
	}
	if r2, ok := s.Rule(UnmatchedRuleName); !ok || r2 != r {
		t.Fatal("Rule(UnmatchedRuleName)")
	}
	if r, matched, ok := s.Route(Command{Text: "a"}); !matched || !ok || r.Name() != "a" {
		t.Fatal("matched route")
	}
	// The unmatched rule never matches through Match.
	if _, ok := s.Match(Command{Text: "zzz"}); ok {
		t.Fatal("Match returned the unmatched rule")
	}
}

func TestCatalogCompletion(t *testing.T) {
	coffee := deviceapi.Macro{ID: "m-1", Name: "Coffee", Commands: []string{"make coffee", "coffee"},
		Events: []deviceapi.MacroEvent{typeEvent(t, "espresso")}}
	tea := deviceapi.Macro{ID: "m-2", Name: "Tea", Commands: []string{"coffee", "tea"}} // "coffee" also in m-1: first wins
	dupID := deviceapi.Macro{ID: "m-1", Name: "Shadowed"}
	cat := NewCatalog([]deviceapi.Macro{coffee, tea, dupID})

	tests := []struct {
		name     string
		cmd      Command
		wantName string // "" for nil macro
		wantID   string
	}{
		{"nil macro by command text", Command{Text: "make coffee"}, "Coffee", "m-1"},
		{"first macro with the command wins", Command{Text: "coffee"}, "Coffee", "m-1"},
		{"second macro", Command{Text: "tea"}, "Tea", "m-2"},
		{"command text is trimmed and case-insensitive", Command{Text: " TEA\t"}, "Tea", "m-2"},
		{"macro name when no command holds the text", Command{Text: "shadowed"}, "Shadowed", "m-1"},
		{"id only", Command{Text: "whatever", Macro: &deviceapi.Macro{ID: "m-2"}}, "Tea", "m-2"},
		{"first id wins", Command{Text: "whatever", Macro: &deviceapi.Macro{ID: "m-1"}}, "Coffee", "m-1"},
		{"unknown id: looked up by text", Command{Text: "tea", Macro: &deviceapi.Macro{ID: "m-9"}}, "Tea", "m-2"},
		{"unknown id kept when the text finds nothing", Command{Text: "nothing", Macro: &deviceapi.Macro{ID: "m-9"}}, "", "m-9"},
		{"empty macro is like none", Command{Text: "tea", Macro: &deviceapi.Macro{}}, "Tea", "m-2"},
		{"delivered macro kept", Command{Text: "tea", Macro: &deviceapi.Macro{ID: "m-1", Name: "As delivered"}}, "As delivered", "m-1"},
		{"delivered macro with events only kept", Command{Text: "tea", Macro: &deviceapi.Macro{Events: []deviceapi.MacroEvent{{EventType: deviceapi.EventPause}}}}, "", ""},
		{"no match", Command{Text: "nothing"}, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := cat.Complete(tc.cmd)
			if tc.wantName == "" && tc.wantID == "" {
				if got.Macro != nil && (got.Macro.Name != "" || got.Macro.ID != "") {
					t.Fatalf("macro %+v, want none", got.Macro)
				}
				if tc.cmd.Macro == nil && got.Macro != nil {
					t.Fatal("macro invented")
				}
				return
			}
			if got.Macro == nil || got.Macro.Name != tc.wantName || got.Macro.ID != tc.wantID {
				t.Fatalf("macro %+v, want %s/%s", got.Macro, tc.wantName, tc.wantID)
			}
			again := cat.Complete(got)
			if again.Macro.Name != got.Macro.Name || again.Macro.ID != got.Macro.ID {
				t.Fatal("Complete is not idempotent")
			}
		})
	}

	t.Run("completed macro is a copy", func(t *testing.T) {
		got := cat.Complete(Command{Text: "tea"})
		got.Macro.Name = "changed"
		if m, _ := cat.ByID("m-2"); m.Name != "Tea" {
			t.Fatal("the catalogue was modified through a completed command")
		}
	})

	t.Run("match and render through the set's catalogue", func(t *testing.T) {
		base := mustCompile(t, []Spec{
			{Name: "by-name", Match: MatchSpec{MacroName: "Coffee"}, Run: RunTemplate{Prompt: "{{.Macro.Name}}: {{.TypedText}}"}},
		}, nil, UnmatchedSpec{})
		cmd := Command{Text: "make coffee"}
		if _, ok := base.Match(cmd); ok {
			t.Fatal("matched without a catalogue")
		}
		withCat := base.WithCatalog([]deviceapi.Macro{coffee})
		r, ok := withCat.Match(cmd)
		if !ok {
			t.Fatal("no match with the catalogue")
		}
		if _, ok := base.Match(cmd); ok {
			t.Fatal("WithCatalog changed the receiver")
		}
		req, err := r.Render(cmd, withCat.Catalog())
		if err != nil || req.Prompt != "Coffee: espresso" {
			t.Fatalf("prompt %q err %v", req.Prompt, err)
		}
		// Rendering the completed command needs no catalogue.
		req, err = r.Render(withCat.Complete(cmd), Catalog{})
		if err != nil || req.Prompt != "Coffee: espresso" {
			t.Fatalf("prompt %q err %v", req.Prompt, err)
		}
		// A profile update replaces the catalogue: the rule stops matching.
		updated := withCat.WithCatalog([]deviceapi.Macro{tea})
		if _, ok := updated.Match(cmd); ok {
			t.Fatal("matched after the macro left the profile")
		}
		if updated.Catalog().Len() != 1 || withCat.Catalog().Len() != 1 {
			t.Fatal("catalogue sizes")
		}
	})
}
