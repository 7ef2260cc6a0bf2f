package service

import (
	"strings"
	"testing"
)

func TestSystemdUnitQuotesExecStart(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want string
	}{
		{[]string{"/usr/bin/hubgate", "run"}, "ExecStart=/usr/bin/hubgate run\n"},
		{[]string{"/opt/my apps/hubgate", "--config", "/home/a/50%/c$x.yaml", "run"},
			`ExecStart="/opt/my apps/hubgate" --config /home/a/50%%/c$$x.yaml run` + "\n"},
		{[]string{"/x/hub\"gate", "run"}, `ExecStart="/x/hub\"gate" run` + "\n"},
	} {
		b, err := SystemdUnit(c.argv)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "\n"+c.want) {
			t.Errorf("%q: unit lacks %q:\n%s", c.argv, c.want, b)
		}
	}
	for _, bad := range [][]string{nil, {"hubgate", "run"}, {"/bin/hubgate", "a\nb"}} {
		if _, err := SystemdUnit(bad); err == nil {
			t.Errorf("SystemdUnit(%q) accepted it", bad)
		}
	}
}

func TestLaunchdPlistEscapes(t *testing.T) {
	b, err := LaunchdPlist([]string{"/Applications/a&b/hubgate", "run"}, "/Users/x/Library/Logs/hubgate.log")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<string>/Applications/a&amp;b/hubgate</string>", "<string>run</string>", "<string>" + LaunchdLabel + "</string>",
		"<string>/Users/x/Library/Logs/hubgate.log</string>"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("plist lacks %q:\n%s", want, b)
		}
	}
}
