// Package archtest owns the tests that keep the package arrows of
// docs/architecture.md ("Dependencies point one way") true: each package
// may import only the packages its entry in the table of arch_test.go
// allows, nothing under internal/ imports a package outside internal/,
// test helpers are imported by tests only, and configs compiles no
// rules. An import that breaks the architecture fails `go test` instead of
// a review. The table mirrors docs/architecture.md: change both together.
//
// deps_test.go is the dependency test of the daemon binary (as tailscale's
// deptest): `go list -deps ./cmd/hubgate` for linux, windows and darwin
// must link the design card's libraries (signalr, x/oauth2, resty, chi,
// go-keyring) and the MCP SDK, and must never link what its badDeps table
// lists, each with its reason (test-only libraries, a cgo SQLite, a second
// backoff, OpenAPI or MCP library, a fork); the mock and the CLI library
// may be linked only by the packages linkedOnlyBy names.
//
// thirdparty_test.go says, per module outside the standard library, which
// packages' non-test files may import it and why (resty only in deviceapi,
// chi in automate/server and the mock, cobra and pflag only under cmd/,
// ...): a new library or a library in a new package fails until its entry
// says why. It has no code of its own.
package archtest
