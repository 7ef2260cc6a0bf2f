package scripted

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode"
)

func TestParseScript(t *testing.T) {
	sc := parseScript("  \r\nFirst line\r\n  #!answer hi there \n\tsecond\n#!move \"a b.txt\" c d.txt\n#!tool t\n#!mcp s x {\"k\": [1, 2]}\n")
	if sc.taskText != "First line\n\tsecond" || sc.firstLine != "First line" {
		t.Fatalf("task text %q first %q", sc.taskText, sc.firstLine)
	}
	if len(sc.directives) != 4 {
		t.Fatalf("%d directives", len(sc.directives))
	}
	d := sc.directives
	if d[0].name != "answer" || d[0].text != "hi there" || d[0].line != 3 || d[0].err != nil {
		t.Fatalf("answer %+v", d[0])
	}
	if d[1].path != "a b.txt" || d[1].path2 != "c d.txt" || d[1].err != nil {
		t.Fatalf("move %+v", d[1])
	}
	if len(d[2].calls) != 1 || string(d[2].calls[0].args) != "{}" {
		t.Fatalf("tool %+v", d[2])
	}
	if d[3].server != "s" || d[3].tool != "x" || string(d[3].args) != `{"k":[1,2]}` {
		t.Fatalf("mcp %+v", d[3])
	}
	// Text that merely contains #! is task text.
	if sc := parseScript("say #!answer x"); len(sc.directives) != 0 || sc.taskText != "say #!answer x" {
		t.Fatalf("%+v", sc)
	}
}

// FuzzParseScript: no prompt makes the parser or the step planning panic,
// directive lines never leak into the task text, and every planned step's
// toolArgs is valid JSON.
func FuzzParseScript(f *testing.F) {
	for _, seed := range []string{
		"", "hello", "#!", "#!answer", "#!sleep 10", "#!sleep -5", "#!tool x {\"a\":1}", "#!tools [{\"name\":\"a\"},{}]",
		"#!tools [{\"name\":\"a\",\"arguments\":[1]}]", "#!ask {\"fields\":[{\"id\":\"x\",\"required\":true}]}",
		"#!write \"a\\u0000b\" \"x\\ny\"", "#!write a", "#!read \"unterminated", "#!move a", "#!mcp s t {",
		"#!fail TOOL_TIMEOUT", "#!recall extra", "\r\n#!run echo \"hi\"\r\n", "#!\xff\xfe", "#!tool \"\\ud800\" {}",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, prompt string) {
		sc := parseScript(prompt)
		r := &run{}
		for _, line := range strings.Split(sc.taskText, "\n") {
			if strings.HasPrefix(strings.TrimLeftFunc(line, unicode.IsSpace), "#!") {
				t.Fatalf("directive line in task text: %q", line)
			}
		}
		for i := range sc.directives {
			d := &sc.directives[i]
			n := d.steps()
			if n < 1 {
				t.Fatalf("directive %q plans %d steps", d.raw, n)
			}
			for k := 0; k < n; k++ {
				st := r.describe(d, k)
				if len(st.ToolArgs) > 0 && !json.Valid(st.ToolArgs) {
					t.Fatalf("directive %q: toolArgs %q", d.raw, st.ToolArgs)
				}
				if st.Title == "" {
					t.Fatalf("directive %q: no title", d.raw)
				}
			}
		}
	})
}

// FuzzRun runs the engine itself on arbitrary prompts, confined to a
// temporary workspace with destructive tools rejected and a short deadline
// (which cuts long #!sleep steps): it must never panic and always end with
// a result.
func FuzzRun(f *testing.F) {
	for _, seed := range []string{
		"hello\n#!answer x", "#!write a.txt hi\n#!read a.txt", "#!tools [{\"name\":\"t\"}]", "#!ask {\"fields\":[{\"id\":\"x\"}]}",
		"#!mcp s t {}", "#!fail SERVER_LOST", "#!recall", "#!run rm -rf /", "#!delete .", "#!move a b", "#!sleep 5",
	} {
		f.Add(seed)
	}
	e := newEngine(Config{})
	f.Fuzz(func(t *testing.T, prompt string) {
		ws := workspace(t)
		tk := task(prompt)
		tk.Workspace, tk.Confine = ws, ws
		tk.ClientTools = declared("t")
		tk.HITLAnswers = map[string]any{"x": "y"}
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		res, _ := e.Run(ctx, tk, newEnv())
		if res == nil {
			t.Fatal("no result")
		}
		if _, err := json.Marshal(res); err != nil {
			t.Fatalf("result does not encode: %v", err)
		}
	})
}
