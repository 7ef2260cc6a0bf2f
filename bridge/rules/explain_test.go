package rules

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/automate"
)

// toolNames are the names of a request's client tools, in order.
func toolNames(req *automate.RunRequest) []string {
	if req == nil {
		return nil
	}
	var out []string
	for _, t := range req.ClientTools {
		out = append(out, t.Name)
	}
	return out
}

// Explain shows the request the bridge sends: the rule's client tools and
// ask_person where the rule or bridge.ask offers it (Rule.WithAskTool,
// the bridge's own); a rule full of client tools goes without it.
func TestExplainShowsTheRequestAsSent(t *testing.T) {
	yes, no := true, false
	full := make([]string, automate.MaxClientTools)
	var tools []CommandToolSpec
	for i := range full {
		full[i] = fmt.Sprintf("t%d", i)
		tools = append(tools, CommandToolSpec{Name: full[i], Enabled: true, Description: "x", Argv: []string{"/bin/true"}})
	}
	set := mustCompile(t, []Spec{
		{Name: "asks", Ask: &yes, Match: MatchSpec{Command: "asks"}, Run: RunTemplate{Prompt: "p", ClientTools: []string{NotifyToolName}}},
		{Name: "quiet", Ask: &no, Match: MatchSpec{Command: "quiet"}, Run: RunTemplate{Prompt: "p"}},
		{Name: "default", Match: MatchSpec{Command: "default"}, Run: RunTemplate{Prompt: "p"}},
		{Name: "full", Ask: &yes, Match: MatchSpec{Command: "full"}, Run: RunTemplate{Prompt: "p", ClientTools: full}},
	}, tools, UnmatchedSpec{})
	for _, tc := range []struct {
		cmd  string
		ask  bool
		want []string
	}{
		{"asks", false, []string{NotifyToolName, AskPersonToolName}},
		{"quiet", true, nil},
		{"default", true, []string{AskPersonToolName}},
		{"default", false, nil},
		{"full", false, full},
	} {
		res := set.Explain(Command{Text: tc.cmd}, Defaults{Ask: tc.ask})
		if got := toolNames(res.Request); res.Action != string(ActionRun) || !slices.Equal(got, tc.want) {
			t.Errorf("%s (bridge.ask %v): %s, tools %q, want %q", tc.cmd, tc.ask, res.Action, got, tc.want)
		}
		r, _ := set.Rule(tc.cmd)
		sent, _ := r.WithAskTool(mustRender(t, r, tc.cmd), tc.ask)
		if got := toolNames(&sent); !slices.Equal(got, tc.want) {
			t.Errorf("%s: the bridge's request has tools %q, Explain %q", tc.cmd, got, tc.want)
		}
	}
	if _, full := set.Rules()[3].WithAskTool(automate.RunRequest{ClientTools: make([]automate.ClientTool, automate.MaxClientTools)}, false); !full {
		t.Error("WithAskTool of a request full of tools did not report it")
	}
}

func mustRender(t *testing.T, r *Rule, text string) automate.RunRequest {
	t.Helper()
	req, err := r.Render(Command{Text: text}, Catalog{})
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// A template error names its rule once: Rule holds the name, Error and
// the text output's error line do not repeat it.
func TestExplainNamesAFailedRuleOnce(t *testing.T) {
	set := mustCompile(t, []Spec{{Name: "coloured", Match: MatchSpec{Command: "paint"}, Run: RunTemplate{Prompt: "x {{.Macro.Extra.colour}}"}}}, nil, UnmatchedSpec{})
	res := set.Explain(Command{Text: "paint"}, Defaults{})
	if res.Action != string(ActionError) || res.Rule != "coloured" || res.Request != nil ||
		!strings.HasPrefix(res.Error, "run.prompt: ") || !strings.Contains(res.Error, `map has no entry for key "colour"`) {
		t.Fatalf("%+v", res)
	}
	var sb strings.Builder
	res.WriteText(&sb)
	if n := strings.Count(sb.String(), "coloured"); n != 1 {
		t.Errorf("the rule is named %d times:\n%s", n, sb.String())
	}
}
