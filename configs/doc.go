// Package configs owns hubgate's configuration and its secret store: the
// YAML schema with its embedded, commented defaults (defaults.yaml); Load
// (defaults, file, the HUBGATE_* environment variables of one table, the
// caller's overrides), strict decoding, and Validate, which reports every
// problem at once with its field path and origin; LoadEndpoints for the
// clients of a running daemon; SecretStore, Keyring over the OS Secret
// Service (a timeout on every call), FileStore (a private plain-text file
// for machines without one), OpenSecrets (the secrets setting and the
// automatic fallback) and MemoryStore for unit tests and the demo; the
// Automate access key. It passes plain
// values down, reads no secret from the file, and compiles nothing (the
// rules are checked with the compiler its caller passes).
//
// The choices where the brief is silent, the secret store's design and how
// its tests run: docs/configs.md.
package configs
