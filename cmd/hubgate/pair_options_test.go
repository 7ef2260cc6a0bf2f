package main

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/hubgate/hubgate/configs"
)

// pair's flags reach its options; only the flags that were set become
// configuration overrides, each naming its flag.
func TestPairOptionsFromFlags(t *testing.T) {
	var got pairFlags
	cmd := newCmdPair(&app{}, func(_ context.Context, o *pairOptions) error { got = o.Flags; return nil })
	cmd.SetArgs([]string{"--api-url", "https://api.example.com", "--reuse", "--timeout", "90s", "--name", "desk"})
	cmd.SetOut(io.Discard)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	want := []configs.Override{{Path: "remote.api_url", Value: "https://api.example.com", Origin: "flag --api-url"}}
	if len(got.overrides) != 1 || got.overrides[0] != want[0] {
		t.Fatalf("overrides %+v", got.overrides)
	}
	if !got.reuse || got.replace || got.timeout != 90*time.Second || got.name != "desk" || got.secretStdin {
		t.Fatalf("options %+v", got)
	}
}

func TestServiceInstallOptionsFromFlags(t *testing.T) {
	var got *serviceInstallOptions
	cmd := newServiceInstallCommand(&app{configPath: "/etc/h.yaml"}, func(_ context.Context, o *serviceInstallOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--no-start"})
	if err := cmd.Execute(); err != nil || got == nil || !got.NoStart || got.ConfigPath != "/etc/h.yaml" {
		t.Fatalf("%+v %v", got, err)
	}
	cmd.SetArgs([]string{"extra"})
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "takes no arguments") {
		t.Fatalf("a positional argument: %v", err)
	}
}
