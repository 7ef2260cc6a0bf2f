package mockcli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/hubgate/hubgate/cmd/hubgate/internal/cliout"
	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/internal/localhttp"
)

// ServeOptions are `hubgate mock`'s own options: the streams and the
// environment it runs with, and its flags (the mock to run).
type ServeOptions struct {
	Out, Err io.Writer           // the base URL on Out; what it serves on Err
	Getenv   func(string) string // reads EnvClientSecret
	// Logger is the mock's logger, made once the flags are parsed.
	Logger func() *slog.Logger

	Listen       string
	ClientID     string
	ClientSecret string // flag --client-secret; empty: $HUBGATE_MOCK_CLIENT_SECRET
	DeviceType   string
	DenyConsent  bool
	AccessTTL    time.Duration
	RefreshTTL   time.Duration
	KeepAlive    time.Duration
	Timeout      time.Duration
	DirectHub    bool
	ServiceAddr  string
	HubTokenTTL  time.Duration
	// sign-in as the real service answers it
	RedirectURIs  []string
	RequireSecret bool
	StateFile     string
	// browser origins answered cross-origin; empty: any
	CORSOrigins []string
	// further addresses the mock is reached at (Host check); empty: none
	PublicURLs []string
}

const serveLong = `Run the mock of the remote device service on this machine: OAuth sign-in
(/signin, /signin/token, answering as the real service does), the device REST
routes, the SignalR device hub at /device (whose negotiate redirects to a mock
Azure SignalR Service on a second port, as the real service does; --direct-hub
serves it at /device), an admin API under /mock (loopback peers only; GET /mock
lists it; the mock's own user only), a hub console at /mock/console (push to a device, watch its hub
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
` + EnvClientSecret + ` (preferred) or --client-secret; never reuse a real secret.
--redirect-uri registers the redirect addresses the sign-in accepts (as the
developer portal does); without it any loopback address is accepted.

Browser clients (the vendor's browser sample, the official @microsoft/signalr
client in a page of another origin) reach sign-in, the REST routes, negotiate
(by GET or POST) and the hub cross-origin, with credentials and over
WebSockets, as on the real service: any origin by default; --cors-origin
narrows it to the origins given. The admin API, console and explorer never
answer other origins.

Every route answers only a Host header naming the mock: 127.0.0.1, localhost
or [::1] with its port (a DNS rebinding page gets 403); --public-url adds a
name it is reached at (a tunnel, a container's name). The admin API, console
and journal belong to the user who started the mock: on Linux another local
user gets 403 (the kernel tells who connected, as for the status page).

The subcommands drive a running mock through its admin API; they take the base
URL from --url, else ` + EnvURL + `, else http://` + mockhub.DefaultListen + `. Those that
push to a device take --device, or pick the mock's only device.`

// newCommand builds `hubgate mock` with its admin subcommands; runF (nil:
// runServe) runs the mock (tests pass their own to capture the options).
func newCommand(a *cli, runF func(context.Context, *ServeOptions) error) *cobra.Command {
	f := &ServeOptions{Out: a.Out, Err: a.Err, Getenv: a.Getenv, Logger: a.logger}
	cmd := &cobra.Command{
		Use:   "mock",
		Short: "Run the mock remote device service, or drive a running one",
		Long:  serveLong,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return &UsageError{errors.New(cliout.UnknownCommand(c, args[0]))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return cliout.Run(cmd, runF, runServe, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Listen, "listen", mockhub.DefaultListen, "address to listen on (port 0: any free port)")
	fl.StringVar(&f.StateFile, "state", "", "keep devices, device tokens, profiles and sign-ins in this file across restarts (default: in memory)")
	fl.StringVar(&f.ClientID, "client-id", "", "OAuth client id (default mock-client)")
	fl.StringVar(&f.ClientSecret, "client-secret", "", "OAuth client secret of the mock, a TEST credential (default mock-secret; prefer "+EnvClientSecret+")")
	fl.StringVar(&f.DeviceType, "device-type", "", "the device type id User Devices are created with (default mock-controller)")
	fl.BoolVar(&f.DenyConsent, "deny-consent", false, "the authorization page denies every request (redirects with error=access_denied)")
	fl.StringArrayVar(&f.RedirectURIs, "redirect-uri", nil, "a registered redirect address, e.g. http://127.0.0.1:51772/ (repeatable; default: any loopback address)")
	fl.StringArrayVar(&f.CORSOrigins, "cors-origin", nil, "a browser origin allowed cross-origin on sign-in, REST, negotiate and the hub (WebSockets), e.g. http://localhost:3000 (repeatable; default: any origin)")
	fl.StringArrayVar(&f.PublicURLs, "public-url", nil, "a further address the mock is reached at, e.g. http://mock.lan:5080 (repeatable; default: loopback names only)")
	fl.BoolVar(&f.RequireSecret, "require-client-secret", false, "refuse token requests without client_secret (default: the secret is optional, as on the real service)")
	fl.DurationVar(&f.AccessTTL, "access-token-ttl", 0, "lifetime of access tokens (default 1h)")
	fl.DurationVar(&f.RefreshTTL, "refresh-token-ttl", 0, "lifetime of refresh tokens (default 720h)")
	fl.DurationVar(&f.KeepAlive, "hub-keepalive", 0, "hub keep-alive ping interval (default 15s)")
	fl.DurationVar(&f.Timeout, "hub-timeout", 0, "the hub drops a client silent for this long (default 30s)")
	fl.BoolVar(&f.DirectHub, "direct-hub", false, "serve the hub at /device itself; by default /device/negotiate redirects to the mock's SignalR service, as the real service redirects to Azure SignalR Service")
	fl.StringVar(&f.ServiceAddr, "service-listen", "", "address of the mock SignalR service the negotiate redirects to (default: the --listen host, any free port)")
	fl.DurationVar(&f.HubTokenTTL, "hub-token-ttl", 0, "lifetime of the access tokens of the negotiate redirect (default 1h)")
	cmd.AddCommand(
		newDevicesCommand(a), newCreateDeviceCommand(a), newSendCommand(a),
		newProfileCommand(a), newListeningCommand(a, true), newListeningCommand(a, false),
		newSettingsCommand(a), newDisableTokenCommand(a), newFaultCommand(a), newEventsCommand(a),
		newTokenCommand(a), newPlayCommand(a), newRecordCommand(a),
	)
	return cmd
}

// mockConfig is the mock's configuration from the flags.
func mockConfig(f *ServeOptions) (mockhub.Config, error) {
	if _, _, err := net.SplitHostPort(f.Listen); err != nil {
		return mockhub.Config{}, &UsageError{fmt.Errorf("--listen must be host:port, got %q", f.Listen)}
	}
	secret := f.ClientSecret
	if secret == "" {
		secret = f.Getenv(EnvClientSecret)
	}
	cfg := mockhub.Config{
		ClientID: f.ClientID, ClientSecret: secret, DeviceTypeID: f.DeviceType,
		AccessTokenTTL: f.AccessTTL, RefreshTokenTTL: f.RefreshTTL,
		RedirectURIs: f.RedirectURIs, RequireClientSecret: f.RequireSecret,
		KeepAliveInterval: f.KeepAlive, TimeoutInterval: f.Timeout,
		DirectHub: f.DirectHub, ServiceAddr: f.ServiceAddr, ServiceTokenTTL: f.HubTokenTTL,
		StateFile: f.StateFile,
	}
	for _, o := range f.CORSOrigins {
		n, err := mockhub.ParseCORSOrigin(o)
		if err != nil {
			return mockhub.Config{}, &UsageError{fmt.Errorf("--cors-origin: %w", err)}
		}
		cfg.CORSOrigins = append(cfg.CORSOrigins, n)
	}
	for _, u := range f.PublicURLs {
		n, err := mockhub.ParsePublicURL(u)
		if err != nil {
			return mockhub.Config{}, &UsageError{fmt.Errorf("--public-url: %w", err)}
		}
		cfg.PublicURLs = append(cfg.PublicURLs, n)
	}
	if cfg.ServiceAddr == "" {
		host, _, _ := net.SplitHostPort(f.Listen)
		cfg.ServiceAddr = net.JoinHostPort(host, "0")
	} else if _, _, err := net.SplitHostPort(cfg.ServiceAddr); err != nil {
		return mockhub.Config{}, &UsageError{fmt.Errorf("--service-listen must be host:port, got %q", cfg.ServiceAddr)}
	}
	if f.DenyConsent {
		cfg.Consent = func(mockhub.ConsentRequest) bool { return false }
	}
	return cfg, nil
}

// runServe runs the mock until ctx ends.
func runServe(ctx context.Context, f *ServeOptions) error {
	cfg, err := mockConfig(f)
	if err != nil {
		return err
	}
	log := f.Logger()
	cfg.Logger = log
	ln, err := net.Listen("tcp", f.Listen)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return &UnavailableError{fmt.Errorf("mock: %s is taken (another mock?); --listen 127.0.0.1:0 takes any free port: %w", f.Listen, err)}
		}
		return fmt.Errorf("mock: %w", err)
	}
	srv, err := mockhub.New(cfg)
	if err != nil {
		ln.Close()
		if errors.Is(err, mockhub.ErrCorruptState) {
			return &InputError{err}
		}
		if errors.Is(err, syscall.EADDRINUSE) {
			return &UnavailableError{fmt.Errorf("%w; --service-listen 127.0.0.1:0 takes any free port", err)}
		}
		return &UsageError{err}
	}
	defer srv.Close()
	base := announce(f.Err, srv, ln.Addr().(*net.TCPAddr), f.StateFile)
	serving := localhttp.Serve(srv.NewHTTPServer(), ln)
	// The base URL on stdout is the sign that the mock serves, after
	// everything it says on stderr.
	fmt.Fprintln(f.Out, base)
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

// announce says on errOut what the mock serves; it returns the base URL.
func announce(errOut io.Writer, srv *mockhub.Server, addr *net.TCPAddr, stateFile string) string {
	host := addr.IP.String()
	if addr.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	base := "http://" + net.JoinHostPort(host, fmt.Sprint(addr.Port))
	eff := srv.Config()
	fmt.Fprintf(errOut, "hubgate: mock remote service at %s (client id %s, device type %s); admin API %s/mock, console %s/mock/console, explorer %s/swagger\n",
		base, eff.ClientID, eff.DeviceTypeID, base, base, base)
	if stateFile != "" {
		fmt.Fprintf(errOut, "hubgate: state kept in %s (%d device(s))\n", stateFile, len(srv.Devices()))
	}
	if svc := srv.ServiceURL(); svc != "" {
		fmt.Fprintf(errOut, "hubgate: %s/negotiate redirects to the mock SignalR service at %s%s/ (access tokens live %s)\n",
			base+mockhub.HubPath, svc, mockhub.ServicePath, eff.ServiceTokenTTL)
	} else {
		fmt.Fprintf(errOut, "hubgate: the hub is served directly at %s (--direct-hub)\n", base+mockhub.HubPath)
	}
	if !addr.IP.IsLoopback() {
		fmt.Fprintf(errOut, "hubgate: warning: the mock listens on %s, beyond loopback; its admin API still answers loopback peers only, and every route a Host naming loopback or a --public-url\n", addr)
	}
	return base
}
