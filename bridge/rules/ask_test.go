package rules

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestAskAndAnswers(t *testing.T) {
	yes, no := true, false
	pick := rule("pick", MatchSpec{Command: "pick"})
	pick.Ask, pick.Answers = &yes, "(?i)red|blue"
	quiet := rule("quiet", MatchSpec{Command: "quiet"})
	quiet.Ask = &no
	s := mustCompile(t, []Spec{pick, quiet, rule("plain", MatchSpec{Command: "plain"})}, nil, UnmatchedSpec{})
	r := func(name string) *Rule { x, _ := s.Rule(name); return x }
	for _, c := range []struct {
		rule     string
		def, ask bool
	}{{"pick", false, true}, {"quiet", true, false}, {"plain", false, false}, {"plain", true, true}} {
		if got := r(c.rule).Ask(c.def); got != c.ask {
			t.Errorf("%s.Ask(%v) = %v", c.rule, c.def, got)
		}
	}
	for text, want := range map[string]bool{"red": true, "Blue": true, "red wine": false, "": false} {
		if got := r("pick").Answers(text); got != want {
			t.Errorf("pick.Answers(%q) = %v", text, got)
		}
	}
	if !r("plain").Answers("anything") {
		t.Error("a rule without answers: does not take every command")
	}

	bad := rule("bad", MatchSpec{Command: "x"})
	bad.Answers = "(unclosed"
	_, err := Compile([]Spec{bad}, []CommandToolSpec{{Name: AskPersonToolName, Enabled: true, Description: "mine", Argv: []string{"/bin/true"}}}, UnmatchedSpec{})
	for _, want := range []string{"\"bad\": answers: is not a valid RE2 expression: error parsing regexp: missing closing ): `(unclosed`", "ask_person is the built-in tool"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Compile error %v, want it to say %q", err, want)
		}
	}
}

func TestParseAsk(t *testing.T) {
	q, err := ParseAsk(json.RawMessage(`{"question":"  Which colour? ","choices":["red","blue"]}`))
	if err != nil || q.Question != "Which colour?" || strings.Join(q.Choices, ",") != "red,blue" {
		t.Fatalf("ParseAsk: %+v %v", q, err)
	}
	if !json.Valid(AskPersonTool().Parameters) || AskPersonTool().Name != AskPersonToolName {
		t.Errorf("AskPersonTool %+v", AskPersonTool())
	}
	for args, want := range map[string]string{
		``:                                "question is required",
		`{"question":" "}`:                "question is required",
		`{"question":"q","extra":1}`:      "arguments must be an object",
		`{"question":"q","choices":[""]}`: "each choice must be a non-blank string",
		`{"question":"` + strings.Repeat("x", MaxQuestion+1) + `"}`:                "question must be at most",
		`{"question":"q","choices":["a","b","c","d","e","f","g","h","i","j","k"]}`: "at most 10 choices",
	} {
		if _, err := ParseAsk(json.RawMessage(args)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseAsk(%.40s): %v, want %q", args, err, want)
		}
	}
}
