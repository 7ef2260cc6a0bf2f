package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/hubgate/hubgate/configs"
	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/internal/localhttp"
)

// envMockSecret overrides the mock's OAuth client secret (a test
// credential); envMockURL is the default --url of the admin subcommands.
const (
	envMockSecret = "HUBGATE_MOCK_CLIENT_SECRET"
	envMockURL    = "HUBGATE_MOCK_URL"
)

type mockFlags struct {
	listen       string
	clientID     string
	clientSecret string
	deviceType   string
	denyConsent  bool
	accessTTL    time.Duration
	refreshTTL   time.Duration
	keepAlive    time.Duration
	timeout      time.Duration
	directHub    bool
	serviceAddr  string
	hubTokenTTL  time.Duration
	// sign-in as the real service answers it
	redirectURIs  []string
	requireSecret bool
	stateFile     string
}

func newMockCommand(a *app) *cobra.Command {
	var f mockFlags
	cmd := &cobra.Command{
		Use:   "mock",
		Short: "Run the mock remote device service, or drive a running one",
		Long: `Run the mock of the remote device service on this machine: OAuth sign-in
(/signin, /signin/token, answering as the real service does), the device REST
routes, the SignalR device hub at /device (whose negotiate redirects to a mock
Azure SignalR Service on a second port, as the real service does; --direct-hub
serves it at /device), an admin API under /mock (loopback peers only; GET /mock
lists it), a hub console at /mock/console (push to a device, watch its hub
frames live) and an API explorer at /swagger. Once it accepts connections it
prints its base URL on stdout; SIGINT or SIGTERM stops it cleanly.

It listens on ` + mockhub.DefaultListen + ` by default, a fixed address, so that a paired
daemon finds it again after a restart (--listen 127.0.0.1:0 takes any free
port). Everything is in memory unless --state FILE keeps the devices, device
tokens, profiles and sign-ins across restarts (written on each change; a
corrupt file is an error, never silently replaced): with both, a daemon
paired with the mock reconnects after a mock restart without pairing again.
The journal (GET /mock/journal, 'hubgate mock events') keeps the last
10000 entries in memory.

Defaults: client id mock-client, client secret mock-secret, device type
mock-controller. As on the real service, a client may sign in without the
secret; one that sends it must send the right one (--require-client-secret
demands it). The client secret is a test credential of the mock: set it with
` + envMockSecret + ` (preferred) or --client-secret; never reuse a real secret.
--redirect-uri registers the redirect addresses the sign-in accepts (as the
developer portal does); without it any loopback address is accepted.

The subcommands drive a running mock through its admin API; they take the base
URL from --url, else ` + envMockURL + `, else http://` + mockhub.DefaultListen + `. Those that
push to a device take --device, or pick the mock's only device.`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return &usageError{fmt.Errorf("unknown command %q for %q; see '%s --help'", args[0], c.CommandPath(), c.CommandPath())}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runMock(cmd.Context(), f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.listen, "listen", mockhub.DefaultListen, "address to listen on (port 0: any free port)")
	fl.StringVar(&f.stateFile, "state", "", "keep devices, device tokens, profiles and sign-ins in this file across restarts (default: in memory)")
	fl.StringVar(&f.clientID, "client-id", "", "OAuth client id (default mock-client)")
	fl.StringVar(&f.clientSecret, "client-secret", "", "OAuth client secret of the mock, a TEST credential (default mock-secret; prefer "+envMockSecret+")")
	fl.StringVar(&f.deviceType, "device-type", "", "the device type id User Devices are created with (default mock-controller)")
	fl.BoolVar(&f.denyConsent, "deny-consent", false, "the authorization page denies every request (redirects with error=access_denied)")
	fl.StringArrayVar(&f.redirectURIs, "redirect-uri", nil, "a registered redirect address, e.g. http://127.0.0.1:51772/ (repeatable; default: any loopback address)")
	fl.BoolVar(&f.requireSecret, "require-client-secret", false, "refuse token requests without client_secret (default: the secret is optional, as on the real service)")
	fl.DurationVar(&f.accessTTL, "access-token-ttl", 0, "lifetime of access tokens (default 1h)")
	fl.DurationVar(&f.refreshTTL, "refresh-token-ttl", 0, "lifetime of refresh tokens (default 720h)")
	fl.DurationVar(&f.keepAlive, "hub-keepalive", 0, "hub keep-alive ping interval (default 15s)")
	fl.DurationVar(&f.timeout, "hub-timeout", 0, "the hub drops a client silent for this long (default 30s)")
	fl.BoolVar(&f.directHub, "direct-hub", false, "serve the hub at /device itself; by default /device/negotiate redirects to the mock's SignalR service, as the real service redirects to Azure SignalR Service")
	fl.StringVar(&f.serviceAddr, "service-listen", "", "address of the mock SignalR service the negotiate redirects to (default: the --listen host, any free port)")
	fl.DurationVar(&f.hubTokenTTL, "hub-token-ttl", 0, "lifetime of the access tokens of the negotiate redirect (default 1h)")
	cmd.AddCommand(
		newMockDevicesCommand(a), newMockCreateDeviceCommand(a), newMockSendCommand(a),
		newMockProfileCommand(a), newMockListeningCommand(a, true), newMockListeningCommand(a, false),
		newMockSettingsCommand(a), newMockDisableTokenCommand(a), newMockFaultCommand(a), newMockEventsCommand(a),
		newMockTokenCommand(a), newMockPlayCommand(a), newMockRecordCommand(a),
	)
	return cmd
}

func (a *app) runMock(ctx context.Context, f mockFlags) error {
	if _, _, err := net.SplitHostPort(f.listen); err != nil {
		return &usageError{fmt.Errorf("--listen must be host:port, got %q", f.listen)}
	}
	log := a.logger(&configs.Config{Log: configs.LogConfig{Level: a.logLevel, Format: a.logFormat}})
	secret := f.clientSecret
	if secret == "" {
		secret = a.getenv(envMockSecret)
	}
	cfg := mockhub.Config{
		ClientID: f.clientID, ClientSecret: secret, DeviceTypeID: f.deviceType,
		AccessTokenTTL: f.accessTTL, RefreshTokenTTL: f.refreshTTL,
		RedirectURIs: f.redirectURIs, RequireClientSecret: f.requireSecret,
		KeepAliveInterval: f.keepAlive, TimeoutInterval: f.timeout,
		DirectHub: f.directHub, ServiceAddr: f.serviceAddr, ServiceTokenTTL: f.hubTokenTTL,
		StateFile: f.stateFile,
		Logger:    log,
	}
	if cfg.ServiceAddr == "" {
		host, _, _ := net.SplitHostPort(f.listen)
		cfg.ServiceAddr = net.JoinHostPort(host, "0")
	} else if _, _, err := net.SplitHostPort(cfg.ServiceAddr); err != nil {
		return &usageError{fmt.Errorf("--service-listen must be host:port, got %q", cfg.ServiceAddr)}
	}
	if f.denyConsent {
		cfg.Consent = func(mockhub.ConsentRequest) bool { return false }
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("mock: %s is taken (another mock?); --listen 127.0.0.1:0 takes any free port: %w", f.listen, err)
		}
		return fmt.Errorf("mock: %w", err)
	}
	srv, err := mockhub.New(cfg)
	if err != nil {
		ln.Close()
		if errors.Is(err, mockhub.ErrCorruptState) {
			return &configError{err}
		}
		return &usageError{err}
	}
	defer srv.Close()
	addr := ln.Addr().(*net.TCPAddr)
	host := addr.IP.String()
	if addr.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	base := "http://" + net.JoinHostPort(host, fmt.Sprint(addr.Port))

	serving := localhttp.Serve(srv.NewHTTPServer(), ln)
	fmt.Fprintln(a.stdio.Out, base)
	eff := srv.Config()
	fmt.Fprintf(a.stdio.Err, "hubgate: mock remote service at %s (client id %s, device type %s); admin API %s/mock, console %s/mock/console, explorer %s/swagger\n",
		base, eff.ClientID, eff.DeviceTypeID, base, base, base)
	if f.stateFile != "" {
		fmt.Fprintf(a.stdio.Err, "hubgate: state kept in %s (%d device(s))\n", f.stateFile, len(srv.Devices()))
	}
	if svc := srv.ServiceURL(); svc != "" {
		fmt.Fprintf(a.stdio.Err, "hubgate: %s/negotiate redirects to the mock SignalR service at %s%s/ (access tokens live %s)\n",
			base+mockhub.HubPath, svc, mockhub.ServicePath, eff.ServiceTokenTTL)
	} else {
		fmt.Fprintf(a.stdio.Err, "hubgate: the hub is served directly at %s (--direct-hub)\n", base+mockhub.HubPath)
	}
	if !addr.IP.IsLoopback() {
		fmt.Fprintf(a.stdio.Err, "hubgate: warning: the mock listens on %s, beyond loopback; its admin API still answers loopback peers only\n", addr)
	}
	log.Info("mock listening", "url", base)

	select {
	case <-serving.Done():
		srv.Close()
		return fmt.Errorf("mock: %w", serving.Err())
	case <-ctx.Done():
	}
	log.Info("stopping the mock")
	srv.Close()
	_ = serving.Stop(context.Background(), 10*time.Second)
	return nil
}

// ---- admin subcommands ------------------------------------------------------

// mockClientFlags are the flags every admin subcommand shares.
type mockClientFlags struct {
	url  string
	json bool
}

func (m *mockClientFlags) register(cmd *cobra.Command, withJSON bool) {
	cmd.Flags().StringVar(&m.url, "url", "", "base URL of the running mock (default $"+envMockURL+")")
	if withJSON {
		cmd.Flags().BoolVar(&m.json, "json", false, "print the answer as JSON")
	}
}

func (a *app) mockAdmin(m *mockClientFlags) (*mockhub.AdminClient, error) {
	u := m.url
	if u == "" {
		u = a.getenv(envMockURL)
	}
	if u == "" {
		u = "http://" + mockhub.DefaultListen
	}
	if p, err := url.Parse(u); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return nil, &usageError{fmt.Errorf("--url must be an http URL like http://127.0.0.1:43123, got %q", u)}
	}
	return &mockhub.AdminClient{BaseURL: u}, nil
}

func mockRequired(cmd *cobra.Command, names ...string) error {
	for _, n := range names {
		if v, _ := cmd.Flags().GetString(n); v == "" {
			return &usageError{fmt.Errorf("%s needs --%s", cmd.CommandPath(), n)}
		}
	}
	return nil
}

// readInput reads a file, or stdin for "-".
// mockReadJSONFile reads --file (- for stdin) and checks it is JSON.
func (a *app) mockReadJSONFile(file string) ([]byte, error) {
	b, err := a.mockReadInput(file)
	if err != nil {
		return nil, fmt.Errorf("--file: %w", err)
	}
	if !json.Valid(b) {
		return nil, &usageError{fmt.Errorf("--file %s is not JSON", file)}
	}
	return b, nil
}

func (a *app) mockReadInput(name string) ([]byte, error) {
	return readInput(a.stdio.In, name)
}

func (a *app) mockPrintJSON(v any) error { return writeJSONTo(a.stdio.Out, v) }

// mockCommand builds an admin subcommand; run gets the client.
func (a *app) mockCommand(use, short string, withJSON bool, run func(ctx context.Context, c *mockhub.AdminClient, m *mockClientFlags, cmd *cobra.Command) error) (*cobra.Command, *mockClientFlags) {
	m := &mockClientFlags{}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.mockAdmin(m)
			if err != nil {
				return err
			}
			return run(cmd.Context(), c, m, cmd)
		},
	}
	m.register(cmd, withJSON)
	return cmd, m
}

func (a *app) mockPrintPush(m *mockClientFlags, res mockhub.PushResult, what string) error {
	if m.json {
		return a.mockPrintJSON(res)
	}
	_, err := fmt.Fprintf(a.stdio.Out, "%s delivered to %d connection(s)\n", what, res.Delivered)
	return err
}

func newMockDevicesCommand(a *app) *cobra.Command {
	cmd, _ := a.mockCommand("devices", "List the mock's devices, their flags and hub connections", true,
		func(ctx context.Context, c *mockhub.AdminClient, m *mockClientFlags, _ *cobra.Command) error {
			list, err := c.Devices(ctx)
			if err != nil {
				return err
			}
			if m.json {
				return a.mockPrintJSON(list)
			}
			tw := tabwriter.NewWriter(a.stdio.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tTYPE\tCONNECTIONS\tVERIFIED\tLISTENING\tTOKENS")
			for _, d := range list {
				var toks []string
				for _, t := range d.Tokens {
					s := t.ID
					if t.IsDisabled {
						s += " (disabled)"
					}
					toks = append(toks, s)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%v\t%v\t%s\n", d.Device.ID, d.Device.NameOverride, d.DeviceTypeID,
					d.Connections, d.Device.IsVerified, d.Device.IsListening, strings.Join(toks, ", "))
			}
			return tw.Flush()
		})
	return cmd
}

func newMockCreateDeviceCommand(a *app) *cobra.Command {
	var name, typeID string
	cmd, _ := a.mockCommand("create-device", "Create a device and its device token without OAuth (prints both as JSON, token included, with or without --json)", true,
		func(ctx context.Context, c *mockhub.AdminClient, _ *mockClientFlags, _ *cobra.Command) error {
			created, err := c.CreateDevice(ctx, mockhub.CreateDeviceRequest{DeviceTypeID: typeID, Name: name})
			if err != nil {
				return err
			}
			return a.mockPrintJSON(created)
		})
	cmd.Flags().StringVar(&name, "name", "", "device name (default \"Mock device\")")
	cmd.Flags().StringVar(&typeID, "device-type", "", "device type id (default: the mock's)")
	return cmd
}

func newMockSendCommand(a *app) *cobra.Command {
	var device, command, macroFile, macroName string
	var events []string
	cmd, _ := a.mockCommand("send", "Push a DeviceCommand (command and macro) to a device's hub connections", true,
		func(ctx context.Context, c *mockhub.AdminClient, m *mockClientFlags, cmd *cobra.Command) error {
			if command == "" && macroFile == "" && macroName == "" {
				return &usageError{errors.New(cmd.CommandPath() + " needs --command, --macro FILE or --macro-name NAME")}
			}
			if macroFile != "" && macroName != "" {
				return &usageError{errors.New("--macro and --macro-name are exclusive: one macro is sent")}
			}
			if macroName != "" && len(events) > 0 {
				return &usageError{errors.New("--event adds to --macro FILE or to the macro made from --command, not to a profile's macro")}
			}
			var macro *deviceapi.Macro
			if macroFile != "" {
				b, err := a.mockReadInput(macroFile)
				if err != nil {
					return fmt.Errorf("--macro: %w", err)
				}
				macro = &deviceapi.Macro{}
				if err := json.Unmarshal(b, macro); err != nil {
					return &usageError{fmt.Errorf("--macro %s is not a Macro JSON object: %w", macroFile, err)}
				}
				if command == "" && macro.Name == "" && len(macro.Commands) == 0 {
					return &usageError{fmt.Errorf("--macro %s has neither a name nor a command: give --command", macroFile)}
				}
			}
			macro, err := mockMacroWithEvents(macro, command, events)
			if err != nil {
				return err
			}
			id, err := a.mockPickDevice(ctx, c, device)
			if err != nil {
				return err
			}
			res, err := c.Send(ctx, id, mockhub.CommandRequest{Command: command, Macro: macro, MacroName: macroName})
			if err != nil {
				return err
			}
			return a.mockPrintPush(m, res, "DeviceCommand")
		})
	cmd.Flags().StringVar(&device, "device", "", "device id (default: the mock's only device)")
	cmd.Flags().StringVar(&command, "command", "", "the command string (default with a macro: the macro's name, as the real app sends it, else its first command)")
	cmd.Flags().StringVar(&macroFile, "macro", "", "JSON file of the Macro to send (- for stdin; default: a macro made from the command)")
	cmd.Flags().StringVar(&macroName, "macro-name", "", "send the macro of this name in the device's current profile (as the real app does)")
	cmd.Flags().StringArrayVar(&events, "event", nil, `a MacroEvent as JSON, appended to the macro's events (repeatable), e.g. '{"eventType":"Type","typedPhrase":"water the plants"}'`)
	return cmd
}

// mockPickDevice is the device a subcommand pushes to: --device, else the
// mock's only device; with none or several it says which exist (a usage
// error).
func (a *app) mockPickDevice(ctx context.Context, c *mockhub.AdminClient, device string) (string, error) {
	if device != "" {
		return device, nil
	}
	list, err := c.Devices(ctx)
	if err != nil {
		return "", err
	}
	switch len(list) {
	case 1:
		return list[0].Device.ID, nil
	case 0:
		return "", &usageError{errors.New("the mock has no device yet: pair one ('hubgate pair') or create one ('hubgate mock create-device')")}
	}
	var b strings.Builder
	for _, d := range list {
		fmt.Fprintf(&b, "\n  %s  %s (%d connection(s))", d.Device.ID, d.Device.NameOverride, d.Connections)
	}
	return "", &usageError{fmt.Errorf("the mock has %d devices; pick one with --device:%s", len(list), b.String())}
}

// mockMacroWithEvents appends the --event values to the macro (one made
// from the command, as the mock would make it, when there is none).
func mockMacroWithEvents(macro *deviceapi.Macro, command string, events []string) (*deviceapi.Macro, error) {
	if len(events) == 0 {
		return macro, nil
	}
	if macro == nil {
		macro = &deviceapi.Macro{ID: uuid.NewString(), Name: command, Commands: []string{command}}
	}
	for i, raw := range events {
		// An object is sent as given, odd members included (they test the
		// receiver's leniency); anything else is a mistake.
		var e deviceapi.MacroEvent
		err := json.Unmarshal([]byte(raw), &e)
		if t := strings.TrimSpace(raw); err == nil && (t == "" || t[0] != '{') {
			err = errors.New("not an object")
		}
		if err != nil {
			return nil, &usageError{fmt.Errorf("--event #%d is not a MacroEvent JSON object: %w", i+1, err)}
		}
		macro.Events = append(macro.Events, e)
	}
	return macro, nil
}

func newMockProfileCommand(a *app) *cobra.Command {
	var device, file string
	cmd, _ := a.mockCommand("profile", "Set a device's current profile and push DeviceProfileUpdate", true,
		func(ctx context.Context, c *mockhub.AdminClient, m *mockClientFlags, cmd *cobra.Command) error {
			if err := mockRequired(cmd, "file"); err != nil {
				return err
			}
			b, err := a.mockReadJSONFile(file)
			if err != nil {
				return err
			}
			id, err := a.mockPickDevice(ctx, c, device)
			if err != nil {
				return err
			}
			res, err := c.Profile(ctx, id, b)
			if err != nil {
				return err
			}
			if m.json {
				return a.mockPrintJSON(res)
			}
			_, err = fmt.Fprintf(a.stdio.Out, "profile set; DeviceProfileUpdate delivered to %d connection(s)\n", res.Delivered)
			return err
		})
	cmd.Flags().StringVar(&device, "device", "", "device id (default: the mock's only device)")
	cmd.Flags().StringVar(&file, "file", "", "JSON file of the Profile (- for stdin)")
	return cmd
}

func newMockListeningCommand(a *app, start bool) *cobra.Command {
	use, target := "stop-listening", "StopListening"
	if start {
		use, target = "start-listening", "StartListening"
	}
	var device string
	cmd, _ := a.mockCommand(use, "Push "+target+" to a device's hub connections", true,
		func(ctx context.Context, c *mockhub.AdminClient, m *mockClientFlags, cmd *cobra.Command) error {
			id, err := a.mockPickDevice(ctx, c, device)
			if err != nil {
				return err
			}
			var res mockhub.PushResult
			if start {
				res, err = c.StartListening(ctx, id)
			} else {
				res, err = c.StopListening(ctx, id)
			}
			if err != nil {
				return err
			}
			return a.mockPrintPush(m, res, target)
		})
	cmd.Flags().StringVar(&device, "device", "", "device id (default: the mock's only device)")
	return cmd
}

func newMockSettingsCommand(a *app) *cobra.Command {
	var device, file string
	cmd, _ := a.mockCommand("settings", "Push DeviceSettingsUpdate with any JSON value", true,
		func(ctx context.Context, c *mockhub.AdminClient, m *mockClientFlags, cmd *cobra.Command) error {
			if err := mockRequired(cmd, "file"); err != nil {
				return err
			}
			b, err := a.mockReadJSONFile(file)
			if err != nil {
				return err
			}
			id, err := a.mockPickDevice(ctx, c, device)
			if err != nil {
				return err
			}
			res, err := c.Settings(ctx, id, b)
			if err != nil {
				return err
			}
			return a.mockPrintPush(m, res, "DeviceSettingsUpdate")
		})
	cmd.Flags().StringVar(&device, "device", "", "device id (default: the mock's only device)")
	cmd.Flags().StringVar(&file, "file", "", "JSON file of the settings (- for stdin)")
	return cmd
}

func newMockDisableTokenCommand(a *app) *cobra.Command {
	var tokenID string
	cmd, _ := a.mockCommand("disable-token", "Disable a device token and drop the hub connections using it", true,
		func(ctx context.Context, c *mockhub.AdminClient, m *mockClientFlags, cmd *cobra.Command) error {
			if err := mockRequired(cmd, "token-id"); err != nil {
				return err
			}
			res, err := c.DisableToken(ctx, tokenID)
			if err != nil {
				return err
			}
			if m.json {
				return a.mockPrintJSON(res)
			}
			_, err = fmt.Fprintf(a.stdio.Out, "token %s disabled; %d connection(s) dropped\n", res.Token.ID, res.Dropped)
			return err
		})
	cmd.Flags().StringVar(&tokenID, "token-id", "", "id of the device token (not the token itself)")
	return cmd
}

func newMockFaultCommand(a *app) *cobra.Command {
	var drop, expireService bool
	var refuseFor, freeze, serviceError time.Duration
	cmd, _ := a.mockCommand("fault", "Inject hub faults: drop every connection, refuse new ones for a while, freeze, or fail the SignalR service", true,
		func(ctx context.Context, c *mockhub.AdminClient, m *mockClientFlags, cmd *cobra.Command) error {
			var f mockhub.Faults
			f.Drop = drop
			if cmd.Flags().Changed("refuse-for") {
				if refuseFor < 0 {
					return &usageError{errors.New("--refuse-for must not be negative")}
				}
				d := mockhub.Duration(refuseFor)
				f.RefuseFor = &d
			}
			if cmd.Flags().Changed("freeze") {
				if freeze < 0 {
					return &usageError{errors.New("--freeze must not be negative")}
				}
				d := mockhub.Duration(freeze)
				f.Freeze = &d
			}
			f.ExpireServiceTokens = expireService
			if cmd.Flags().Changed("service-error-for") {
				if serviceError < 0 {
					return &usageError{errors.New("--service-error-for must not be negative")}
				}
				d := mockhub.Duration(serviceError)
				f.ServiceErrorFor = &d
			}
			if !f.Drop && f.RefuseFor == nil && f.Freeze == nil && !f.ExpireServiceTokens && f.ServiceErrorFor == nil {
				return &usageError{errors.New("fault needs --drop, --refuse-for, --freeze, --expire-service-tokens or --service-error-for")}
			}
			st, err := c.Faults(ctx, f)
			if err != nil {
				return err
			}
			if m.json {
				return a.mockPrintJSON(st)
			}
			msg := fmt.Sprintf("dropped %d connection(s)", st.Dropped)
			if st.RefusingUntil != nil {
				msg += "; refusing new connections until " + st.RefusingUntil.Local().Format(time.TimeOnly)
			}
			if st.FrozenUntil != nil {
				msg += "; frozen until " + st.FrozenUntil.Local().Format(time.TimeOnly)
			}
			if f.ExpireServiceTokens {
				msg += fmt.Sprintf("; %d service access token(s) expired", st.ExpiredServiceTokens)
			}
			if st.ServiceErrorUntil != nil {
				msg += "; the SignalR service's negotiate fails until " + st.ServiceErrorUntil.Local().Format(time.TimeOnly)
			}
			_, err = fmt.Fprintln(a.stdio.Out, msg)
			return err
		})
	cmd.Flags().BoolVar(&drop, "drop", false, "close every hub connection now")
	cmd.Flags().DurationVar(&refuseFor, "refuse-for", 0, "answer 503 to new hub connections for this long (0s ends it)")
	cmd.Flags().DurationVar(&freeze, "freeze", 0, "stop all hub traffic for this long without closing (0s thaws)")
	cmd.Flags().BoolVar(&expireService, "expire-service-tokens", false, "expire every access token of a negotiate redirect issued so far (open connections stay)")
	cmd.Flags().DurationVar(&serviceError, "service-error-for", 0, "the SignalR service's negotiate answers an error for this long (0s ends it)")
	return cmd
}

func newMockEventsCommand(a *app) *cobra.Command {
	var since int64
	var follow bool
	var device string
	cmd, _ := a.mockCommand("events", "Show the mock's journal: every OAuth, REST, admin and hub call, both directions, with payloads (secrets redacted)", true,
		func(ctx context.Context, c *mockhub.AdminClient, m *mockClientFlags, _ *cobra.Command) error {
			if since < 0 {
				return &usageError{errors.New("--since must be >= 0")}
			}
			show := func(e mockhub.Event) error {
				if m.json {
					b, err := json.Marshal(e)
					if err != nil {
						return err
					}
					_, err = fmt.Fprintf(a.stdio.Out, "%s\n", b)
					return err
				}
				_, err := fmt.Fprintln(a.stdio.Out, formatMockEvent(e))
				return err
			}
			if !follow {
				page, err := c.Journal(ctx, since, device, 0)
				if err != nil {
					return err
				}
				if m.json {
					return a.mockPrintJSON(page)
				}
				for _, e := range page.Events {
					if err := show(e); err != nil {
						return err
					}
				}
				return nil
			}
			err := c.FollowJournal(ctx, since, device, show, func(missed int64) {
				fmt.Fprintf(a.stdio.Err, "hubgate: %d journal entries were dropped before they could be shown\n", missed)
			})
			if ctx.Err() != nil {
				return nil // interrupted: the normal end of --follow
			}
			if err == nil {
				return errors.New("the mock closed the journal stream (it stopped)")
			}
			return err
		})
	cmd.Flags().Int64Var(&since, "since", 0, "show entries after this sequence number")
	cmd.Flags().BoolVar(&follow, "follow", false, "keep showing new entries as they come (JSON lines with --json) until interrupted")
	cmd.Flags().StringVar(&device, "device", "", "only the entries of this device")
	return cmd
}

func formatMockEvent(e mockhub.Event) string {
	var b strings.Builder
	dir := "<-"
	if e.Direction == mockhub.DirectionOut {
		dir = "->"
	}
	fmt.Fprintf(&b, "%5d %s %-5s %s %s", e.Seq, e.Time.Local().Format("15:04:05.000"), e.Source, dir, e.Action)
	if e.DeviceID != "" {
		fmt.Fprintf(&b, " device=%s", e.DeviceID)
	}
	if e.Status != 0 {
		fmt.Fprintf(&b, " status=%d", e.Status)
	}
	if e.Error != "" {
		fmt.Fprintf(&b, " error=%q", e.Error)
	}
	if len(e.Args) > 0 {
		args, _ := json.Marshal(e.Args)
		fmt.Fprintf(&b, " args=%s", args)
	}
	if len(e.Payload) > 0 {
		fmt.Fprintf(&b, " payload=%s", e.Payload)
	}
	if len(e.Result) > 0 {
		fmt.Fprintf(&b, " result=%s", e.Result)
	}
	return b.String()
}
