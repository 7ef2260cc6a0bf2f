package oauth

import (
	"reflect"
	"runtime"
	"testing"
)

func TestSplitCommandLine(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"curl -fsSL", []string{"curl", "-fsSL"}},
		{"  firefox   --new-window  ", []string{"firefox", "--new-window"}},
		{`"/opt/My Browser/run" --flag`, []string{"/opt/My Browser/run", "--flag"}},
		{`'/opt/it'\''s' x`, []string{"/opt/it's", "x"}},
		{`a\ b "c \"d\" \n" ''`, []string{"a b", `c "d" \n`, ""}},
		{"", nil},
	} {
		got, err := SplitCommandLine(tc.in)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %q %v, want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{`"open`, `'x`, `x\`} {
		if _, err := SplitCommandLine(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestBrowserCommand(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "BROWSER" {
				return v
			}
			return ""
		}
	}
	const u = "https://a/signin/authorize?x=1&y=2"
	got, err := BrowserCommand(env("curl -fsSL"), u)
	if err != nil || !reflect.DeepEqual(got, []string{"curl", "-fsSL", u}) {
		t.Errorf("%q %v", got, err)
	}
	got, _ = BrowserCommand(env("my-browser %s --tab"), u)
	if !reflect.DeepEqual(got, []string{"my-browser", u, "--tab"}) {
		t.Errorf("%q", got)
	}
	if _, err := BrowserCommand(env(`"unterminated`), u); err == nil {
		t.Error("bad BROWSER accepted")
	}
	got, _ = BrowserCommand(env(""), u)
	if runtime.GOOS == "linux" && !reflect.DeepEqual(got, []string{"xdg-open", u}) {
		t.Errorf("%q", got)
	}
}
