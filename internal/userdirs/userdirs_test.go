package userdirs

import (
	"os"
	"runtime"
	"testing"
)

// Given the process's environment, ConfigDir and HomeDir answer as the os
// functions do; given another, they follow it.
func TestDirsFollowTheGivenEnvironment(t *testing.T) {
	want, werr := os.UserConfigDir()
	got, gerr := ConfigDir(os.Getenv)
	if got != want || (werr == nil) != (gerr == nil) {
		t.Errorf("ConfigDir(os.Getenv) = %q, %v; os.UserConfigDir = %q, %v", got, gerr, want, werr)
	}
	wantHome, _ := os.UserHomeDir()
	if h, _ := HomeDir(os.Getenv); h != wantHome {
		t.Errorf("HomeDir(os.Getenv) = %q, want %q", h, wantHome)
	}
	if runtime.GOOS != "linux" {
		t.Skip("the rest is the Unix rule")
	}
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, c := range []struct {
		env     map[string]string
		want    string
		wantErr bool
	}{
		{map[string]string{"XDG_CONFIG_HOME": "/x/cfg", "HOME": "/h"}, "/x/cfg", false},
		{map[string]string{"HOME": "/h"}, "/h/.config", false},
		{map[string]string{"XDG_CONFIG_HOME": "rel", "HOME": "/h"}, "", true},
		{map[string]string{}, "", true},
	} {
		got, err := ConfigDir(env(c.env))
		if got != c.want || (err != nil) != c.wantErr {
			t.Errorf("ConfigDir(%v) = %q, %v; want %q (error %v)", c.env, got, err, c.want, c.wantErr)
		}
	}
	if h, err := HomeDir(env(map[string]string{"HOME": "/h"})); h != "/h" || err != nil {
		t.Errorf("HomeDir = %q, %v", h, err)
	}
	if _, err := HomeDir(env(nil)); err == nil {
		t.Error("HomeDir with no HOME: no error")
	}
}
