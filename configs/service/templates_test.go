package service

import (
	"encoding/xml"
	"slices"
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
	b, err := LaunchdPlist([]string{"/Applications/a&b/hubgate", "run", `--name=<"it's">`}, "/Users/x/Library/Logs/hubgate.log")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<string>/Applications/a&amp;b/hubgate</string>", "<string>run</string>", "<string>" + LaunchdLabel + "</string>",
		"<string>--name=&lt;&#34;it&#39;s&#34;&gt;</string>", "<string>/Users/x/Library/Logs/hubgate.log</string>"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("plist lacks %q:\n%s", want, b)
		}
	}
	// An XML parser reads the arguments back as they were given.
	var plist struct {
		Dict struct {
			Strings []string `xml:"string"`
			Array   struct {
				Strings []string `xml:"string"`
			} `xml:"array"`
		} `xml:"dict"`
	}
	if err := xml.Unmarshal(b, &plist); err != nil {
		t.Fatalf("the plist does not parse: %v\n%s", err, b)
	}
	if got := plist.Dict.Array.Strings; !slices.Equal(got, []string{"/Applications/a&b/hubgate", "run", `--name=<"it's">`}) {
		t.Errorf("ProgramArguments read back as %q", got)
	}
	// What XML 1.0 cannot carry is refused, not written.
	for _, c := range []struct {
		argv    []string
		logPath string
	}{
		{nil, "/l"}, {[]string{"hubgate", "run"}, "/l"}, {[]string{"/bin/hubgate", "a\x01b"}, "/l"},
		{[]string{"/bin/hubgate", "a\xffb"}, "/l"}, {[]string{"/bin/hubgate", "run"}, "/l\x00og"},
	} {
		if _, err := LaunchdPlist(c.argv, c.logPath); err == nil {
			t.Errorf("LaunchdPlist(%q, %q) accepted it", c.argv, c.logPath)
		}
	}
}
