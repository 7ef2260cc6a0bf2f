package main

// Where the secrets live (configs.OpenSecrets: the secrets setting, the
// automatic file store of machines without a Secret Service) and
// `hubgate secrets migrate`.
//
// Why a migrate command: gh users move a plain-text token into the keyring
// by logging in again once a keyring is reachable; here a new pairing would
// create a new device (or renew its token with --reuse and a sign-in), which
// costs more than the move. `hubgate secrets migrate` does the move alone:
// each secret into the OS secret store, read back, and only then the file
// removed. It touches nothing on the remote service.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hubgate/hubgate/cmd/hubgate/internal/cliout"
	"github.com/hubgate/hubgate/configs"
)

// secretStore is the command's secret store: chosen at its first use by
// the secrets setting (cfg nil: auto). The choice's warning goes to tell,
// line by line.
func (a *app) secretStore(cfg *configs.Config, log *slog.Logger, tell func(line string)) *configs.LazySecrets {
	o := configs.SecretsOptions{Keyring: configs.KeyringOptions{Logger: log}}
	o.UserConfigDir = a.userConfigDir // the command's, not the process's
	if cfg != nil {
		o.Mode = cfg.Secrets
	}
	return configs.NewLazySecrets(o, func(s *configs.Secrets) {
		log.Debug("secret store", "backend", s.Backend, "file", s.File, "fallback", s.Fallback)
		if s.Warning == "" || tell == nil {
			return
		}
		for _, l := range strings.Split(s.Warning, "\n") {
			tell(l)
		}
	})
}

// tellErr prints a line on stderr, as the commands' other notes.
func (a *app) tellErr(line string) { tellOn(a.stdio.Err, line) }

// tellOn prints a note line on w (stderr): "hubgate: <line>".
func tellOn(w io.Writer, line string) { fmt.Fprintf(w, "hubgate: %s\n", line) }

// secretsMigrateOptions are `secrets migrate`'s options.
type secretsMigrateOptions struct {
	IO Stdio
	// LoadConfig loads and validates the configuration.
	LoadConfig func() (*configs.Config, error)
	// Logger is the command's logger for cfg.
	Logger func(cfg *configs.Config) *slog.Logger
	// SecretsPath is the secrets file's path (in the user config directory of the command's environment).
	SecretsPath func() (string, error)
	// OpenKeyring opens the OS secret store the secrets move into.
	OpenKeyring func(ctx context.Context, file string, log *slog.Logger) (configs.SecretStore, error)
}

// openKeyring is the real secretsMigrateOptions.OpenKeyring.
func openKeyring(ctx context.Context, file string, log *slog.Logger) (configs.SecretStore, error) {
	return configs.OpenSecrets(ctx, configs.SecretsOptions{Mode: configs.SecretsKeyring, File: file,
		Keyring: configs.KeyringOptions{Logger: log}})
}

func newSecretsCommand(a *app) *cobra.Command { return newCmdSecrets(a, nil) }

// newCmdSecrets builds secrets and its migrate; runF (nil:
// runSecretsMigrate) gets migrate's options.
func newCmdSecrets(a *app, runF func(context.Context, *secretsMigrateOptions) error) *cobra.Command {
	o := &secretsMigrateOptions{IO: a.stdio, LoadConfig: func() (*configs.Config, error) { return a.loadConfig(nil) },
		Logger: a.logger, SecretsPath: a.secretsPath, OpenKeyring: openKeyring}
	cmd := &cobra.Command{
		Use: "secrets",
		Example: `  hubgate secrets migrate          # after setting up a keyring on a machine that had none
  hubgate --config ~/hubgate.yaml secrets migrate`,
		Short: "Where hubgate keeps its secrets; move them from the plain-text file into the OS secret store",
		Long: `hubgate keeps its secrets (the device token, the OAuth refresh token and client
secret, the Automate access key) in the OS secret store. Where none can be
reached (a server, SSH, WSL, a container) it keeps them in a private file,
$XDG_CONFIG_HOME/hubgate/secrets.json (mode 0600, plain text), and says so.
The setting 'secrets: auto | keyring | file' in the configuration chooses.`,
		Args: noArgs,
	}
	cmd.AddCommand(&cobra.Command{
		Use:     "migrate",
		Example: `  hubgate secrets migrate && systemctl --user restart hubgate   # move them, then restart the daemon`,
		Short:   "Move the secrets from the plain-text file into the OS secret store",
		Long: `Move every secret of $XDG_CONFIG_HOME/hubgate/secrets.json into the OS secret
store (the Secret Service on Linux: start one such as gnome-keyring on your
D-Bus session first), read each back, and remove the file only when all
arrived. The pairing stays as it is: nothing changes on the remote service.
A running daemon reads the file until it restarts: restart it afterwards.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cliout.Run(cmd, runF, runSecretsMigrate, o) },
	})
	return cmd
}

// runSecretsMigrate moves the secrets file's secrets into the OS secret
// store (configs.MigrateSecrets) and says what it did on stderr.
func runSecretsMigrate(ctx context.Context, o *secretsMigrateOptions) error {
	tell := func(line string) { tellOn(o.IO.Err, line) }
	cfg, err := o.LoadConfig()
	if err != nil {
		return err
	}
	path, err := o.SecretsPath()
	if err != nil {
		return err
	}
	if cfg.Secrets == configs.SecretsFile {
		return &configError{fmt.Errorf("the configuration says 'secrets: file'%s: set it to auto or keyring first, then migrate", inFile(cfg))}
	}
	file := configs.NewFileStore(path)
	if !file.Exists() {
		tell("nothing to migrate: there is no secrets file at " + path)
		return nil
	}
	to, err := o.OpenKeyring(ctx, path, o.Logger(cfg))
	if err != nil {
		return fmt.Errorf("the OS secret store, where the secrets would go: %w", err)
	}
	moved, shadowed, err := configs.MigrateSecrets(ctx, file, to)
	if err != nil {
		return err
	}
	tell(fmt.Sprintf("moved %d secrets (%s) into the OS secret store and removed %s", len(moved), strings.Join(moved, ", "), path))
	if len(shadowed) > 0 {
		tell(fmt.Sprintf("kept the OS secret store's own %s (read before the file's older copy, which is gone)", strings.Join(shadowed, ", ")))
	}
	tell("a running daemon still reads the file: restart it (stop and start 'hubgate run', or restart its service)")
	return nil
}

// inFile names cfg's file for a message (" in <file>"), or "".
func inFile(cfg *configs.Config) string {
	if cfg.File() == "" {
		return ""
	}
	return " in " + cfg.File()
}
