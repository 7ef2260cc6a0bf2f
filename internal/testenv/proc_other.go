//go:build !unix

package testenv

func pidAlive(int) bool { return false }
