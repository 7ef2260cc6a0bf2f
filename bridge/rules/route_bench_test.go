package rules

import (
	"fmt"
	"testing"

	"github.com/hubgate/hubgate/deviceapi"
)

// BenchmarkDecide is the routing decision of one command in a profile of
// 200 macros: a delivered custom action (the common case), and a command
// without a macro found by its macro's name (the slowest lookup: commands
// first, then names, each case-folded).
func BenchmarkDecide(b *testing.B) {
	macros := make([]deviceapi.Macro, 200)
	for i := range macros {
		macros[i] = deviceapi.Macro{ID: fmt.Sprint(i), Name: fmt.Sprintf("Macro Number %d", i),
			Commands: []string{fmt.Sprintf("number %d", i), fmt.Sprintf("run %d", i)}}
	}
	set, err := Compile([]Spec{
		{Name: "ask", Match: MatchSpec{CustomAction: "ask-agent"}, Run: RunTemplate{Prompt: "{{.CustomAction.Content}}"}},
		{Name: "named", Match: MatchSpec{MacroName: "Macro Number 199"}, Run: RunTemplate{Prompt: "{{.Macro.Name}}"}},
	}, nil, UnmatchedSpec{})
	if err != nil {
		b.Fatal(err)
	}
	set = set.WithCatalog(macros).WithDeviceType("hubgate-agent")
	ask := &deviceapi.Macro{ID: "a", Name: "Ask", Events: []deviceapi.MacroEvent{customAction("ask-agent", "hubgate-agent", "summarise my inbox")}}
	for _, bc := range []struct {
		name  string
		cmd   Command
		rule  string
		found Found
	}{
		{"delivered custom action", Command{Text: "ask", Macro: ask}, "ask", FoundDelivered},
		{"found by name", Command{Text: "  MACRO number 199 "}, "named", FoundByName},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if d := set.Decide(bc.cmd); d.Action != ActionRun || d.Rule.Name() != bc.rule || d.Found != bc.found {
					b.Fatalf("%s %v", d.Action, d.Err)
				}
			}
		})
	}
}
