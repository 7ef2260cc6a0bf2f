// Package configs owns hubgate's configuration and its secret store.
//
// Configuration (config.go): a YAML schema with an embedded, commented
// defaults file (defaults.yaml). Load applies, in this order, the defaults,
// the config file, the HUBGATE_* environment variables of one explicit table
// (envVars in config.go) and the caller's overrides (usually command-line flags, keyed by
// field path such as "automate.port"). Decoding is strict: an unknown key, a
// duplicate key or a value of the wrong type is an error naming the key path
// and the file line. Validate reports every problem at once as a
// *ValidationError whose entries name the field path and where the value
// came from. Choices the brief left open:
//   - an empty environment variable counts as unset (CI templates often
//     export empty variables);
//   - the clients of a running daemon (status, watch, history, cancel,
//     open) need only its endpoints, the control socket and the journal:
//     LoadEndpoints gives them even when the file does not validate (the
//     defaults, the file's own values of those two keys where they decode,
//     the environment, the overrides), with Load's error for a warning, so
//     that a bad key elsewhere never locks the person out of a runaway run;
//   - paths (automate.workspace, workspace_restriction, models_file) must be
//     absolute after expanding a leading "~/"; validation never touches the
//     file system;
//   - remote URLs must be https, except for loopback hosts (the mock service
//     runs on 127.0.0.1 over plain http); user info, query and fragment are
//     rejected (credentials never live in the config);
//   - secrets are never read from the file or from configs' environment
//     variables; an unknown key that looks like a secret gets a hint saying
//     so;
//   - lists (automate.openai.known_models, mcp_servers) and string maps (an
//     MCP server's env and headers) can only be set in the file; problems in
//     a list item name it as path[i].key. In a configured MCP server's env
//     or headers, a key that looks like a secret (or Authorization) must
//     carry its value as ${VAR} references to hubgate's environment;
//   - the automate.openai section is checked only when automate.engine is
//     openai, so a scripted setup is never refused for it; its upstream may
//     use plain http on any host (local model servers rarely speak TLS);
//   - the bridge section (bridge.go) holds the routing rules, command tools
//     and unmatched action in the schema of package bridge/rules; configs
//     compiles nothing: Validate checks them with the compiler the caller
//     passes (LoadOptions.CheckRules: cmd passes rules.Compile), so a bad
//     rule is refused at load with the field path, the rule's name
//     and the file line ("bridge.rules[2].match.command_regex: rule
//     "lights": error parsing regexp: ... (config.yaml:14)"); a rule whose
//     keys failed to decode gets no further rule messages. Free-form values
//     (a command tool's JSON Schema, hitl_answers) are plain YAML values,
//     bounded against alias expansion. bridge.journal defaults to
//     $XDG_DATA_HOME (else ~/.local/share)/hubgate/journal.db, and
//     bridge.control_socket to $XDG_RUNTIME_DIR/hubgate/control.sock (else
//     <user config dir>/hubgate/control.sock, at most 103 bytes).
//
// Secrets (secrets.go, keyring.go): SecretStore is the small interface every
// consumer depends on. Keyring implements it over the OS Secret Service
// (github.com/zalando/go-keyring), with a timeout on every call, one call in
// flight at a time, a guard against godbus autolaunching a stray dbus-daemon,
// and errors classified into *StoreError kinds. There is no plaintext
// fallback: where no secure store is usable the store says so and refuses.
// MemoryStore is for unit tests and the one-process demo only.
//
// The Automate access key (automatekey.go): AutomateKey takes it from
// HUBGATE_AUTOMATE_KEY (through the getenv its caller passes) or from the
// store, generating it on first use; RotateAutomateKey replaces it.
//
// Tests: unit tests plug a fake backend into Keyring. The integration tests
// (keyring_integration_test.go) need a real Secret Service and run under
// .ci/with-keyring, which sets HUBGATE_TEST_KEYRING=1; without it they skip,
// or fail when CI is set. The locked-collection test also needs the
// harness's throwaway password (HUBGATE_TEST_KEYRING_PASSWORD_FILE) so that
// it can unlock again and never locks a keyring it does not own.
package configs
