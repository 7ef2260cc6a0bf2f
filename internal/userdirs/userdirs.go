// Package userdirs owns where the per-user directories are, read through an
// injected environment: os.UserConfigDir and os.UserHomeDir read the
// process's environment, which one process running several hubgate
// commands at once (the in-process tests of the command tree) cannot give
// each its own. Given os.Getenv, these answer exactly as the os functions.
package userdirs

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
)

// ConfigDir is os.UserConfigDir with the environment read through getenv
// (nil: os.Getenv): $XDG_CONFIG_HOME or $HOME/.config on Unix,
// $HOME/Library/Application Support on Darwin, %AppData% on Windows,
// $home/lib on Plan 9.
func ConfigDir(getenv func(string) string) (string, error) {
	if getenv == nil {
		return os.UserConfigDir()
	}
	var dir string
	switch runtime.GOOS {
	case "windows":
		dir = getenv("AppData")
		if dir == "" {
			return "", errors.New("%AppData% is not defined")
		}
	case "darwin", "ios":
		dir = getenv("HOME")
		if dir == "" {
			return "", errors.New("$HOME is not defined")
		}
		dir += "/Library/Application Support"
	case "plan9":
		dir = getenv("home")
		if dir == "" {
			return "", errors.New("$home is not defined")
		}
		dir += "/lib"
	default: // Unix
		dir = getenv("XDG_CONFIG_HOME")
		if dir == "" {
			dir = getenv("HOME")
			if dir == "" {
				return "", errors.New("neither $XDG_CONFIG_HOME nor $HOME are defined")
			}
			dir += "/.config"
		} else if !filepath.IsAbs(dir) {
			return "", errors.New("path in $XDG_CONFIG_HOME is relative")
		}
	}
	return dir, nil
}

// HomeDir is os.UserHomeDir with the environment read through getenv
// (nil: os.Getenv).
func HomeDir(getenv func(string) string) (string, error) {
	if getenv == nil {
		return os.UserHomeDir()
	}
	env, name := "HOME", "$HOME"
	switch runtime.GOOS {
	case "windows":
		env, name = "USERPROFILE", "%userprofile%"
	case "plan9":
		env, name = "home", "$home"
	}
	if v := getenv(env); v != "" {
		return v, nil
	}
	switch runtime.GOOS {
	case "android":
		return "/sdcard", nil
	case "ios":
		return "/", nil
	}
	return "", errors.New(name + " is not defined")
}
