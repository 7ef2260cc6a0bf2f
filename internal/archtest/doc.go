// Package archtest owns the tests that keep the package arrows of
// docs/architecture.md ("Dependencies point one way") true: each package
// may import only the packages its entry in the table of arch_test.go
// allows, test helpers are imported by tests only, and configs compiles no
// rules. An import that breaks the architecture fails `go test` instead of
// a review. The table mirrors docs/architecture.md: change both together.
// It has no code of its own.
package archtest
