package mockcli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/hubgate/hubgate/cmd/hubgate/internal/cliout"
	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/hub/mockhub"
)

// clientFlags are the flags every admin subcommand shares.
type clientFlags struct {
	url  string
	json bool
}

func (m *clientFlags) register(cmd *cobra.Command, withJSON bool) {
	cmd.Flags().StringVar(&m.url, "url", "", "base URL of the running mock (default $"+EnvURL+")")
	if withJSON {
		cmd.Flags().BoolVar(&m.json, "json", false, "print the answer as JSON")
	}
}

func (a *cli) admin(m *clientFlags) (*mockhub.AdminClient, error) {
	u := m.url
	if u == "" {
		u = a.Getenv(EnvURL)
	}
	if u == "" {
		u = "http://" + mockhub.DefaultListen
	}
	if p, err := url.Parse(u); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return nil, &UsageError{fmt.Errorf("--url must be an http URL like http://127.0.0.1:43123, got %q", u)}
	}
	return &mockhub.AdminClient{BaseURL: u}, nil
}

func required(cmd *cobra.Command, names ...string) error {
	for _, n := range names {
		if v, _ := cmd.Flags().GetString(n); v == "" {
			return &UsageError{fmt.Errorf("%s needs --%s", cmd.CommandPath(), n)}
		}
	}
	return nil
}

// readInput reads a file, or stdin for "-".
// readJSONFile reads --file (- for stdin) and checks it is JSON.
func (a *cli) readJSONFile(file string) ([]byte, error) {
	b, err := a.readInput(file)
	if err != nil {
		return nil, fmt.Errorf("--file: %w", err)
	}
	if !json.Valid(b) {
		return nil, &UsageError{fmt.Errorf("--file %s is not JSON", file)}
	}
	return b, nil
}

func (a *cli) readInput(name string) ([]byte, error) {
	return cliout.ReadInput(a.In, name)
}

func (a *cli) printJSON(v any) error { return cliout.WriteJSON(a.Out, v) }

// adminCommand builds an admin subcommand; run gets the client.
func (a *cli) adminCommand(use, short string, withJSON bool, run func(ctx context.Context, c *mockhub.AdminClient, m *clientFlags, cmd *cobra.Command) error) (*cobra.Command, *clientFlags) {
	m := &clientFlags{}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.admin(m)
			if err != nil {
				return err
			}
			return run(cmd.Context(), c, m, cmd)
		},
	}
	m.register(cmd, withJSON)
	return cmd, m
}

func (a *cli) printPush(m *clientFlags, res mockhub.PushResult, what string) error {
	if m.json {
		return a.printJSON(res)
	}
	_, err := fmt.Fprintf(a.Out, "%s delivered to %d connection(s)\n", what, res.Delivered)
	return err
}

func newDevicesCommand(a *cli) *cobra.Command {
	cmd, _ := a.adminCommand("devices", "List the mock's devices, their flags and hub connections", true,
		func(ctx context.Context, c *mockhub.AdminClient, m *clientFlags, _ *cobra.Command) error {
			list, err := c.Devices(ctx)
			if err != nil {
				return err
			}
			if m.json {
				return a.printJSON(list)
			}
			tw := tabwriter.NewWriter(a.Out, 0, 4, 2, ' ', 0)
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

func newCreateDeviceCommand(a *cli) *cobra.Command {
	var name, typeID string
	cmd, _ := a.adminCommand("create-device", "Create a device and its device token without OAuth (prints both as JSON, token included, with or without --json)", true,
		func(ctx context.Context, c *mockhub.AdminClient, _ *clientFlags, _ *cobra.Command) error {
			created, err := c.CreateDevice(ctx, mockhub.CreateDeviceRequest{DeviceTypeID: typeID, Name: name})
			if err != nil {
				return err
			}
			return a.printJSON(created)
		})
	cmd.Flags().StringVar(&name, "name", "", "device name (default \"Mock device\")")
	cmd.Flags().StringVar(&typeID, "device-type", "", "device type id (default: the mock's)")
	return cmd
}

func newSendCommand(a *cli) *cobra.Command {
	var device, command, macroFile, macroName string
	var events []string
	cmd, _ := a.adminCommand("send", "Push a DeviceCommand (command and macro) to a device's hub connections", true,
		func(ctx context.Context, c *mockhub.AdminClient, m *clientFlags, cmd *cobra.Command) error {
			if command == "" && macroFile == "" && macroName == "" {
				return &UsageError{errors.New(cmd.CommandPath() + " needs --command, --macro FILE or --macro-name NAME")}
			}
			if macroFile != "" && macroName != "" {
				return &UsageError{errors.New("--macro and --macro-name are exclusive: one macro is sent")}
			}
			if macroName != "" && len(events) > 0 {
				return &UsageError{errors.New("--event adds to --macro FILE or to the macro made from --command, not to a profile's macro")}
			}
			var macro *deviceapi.Macro
			if macroFile != "" {
				b, err := a.readInput(macroFile)
				if err != nil {
					return fmt.Errorf("--macro: %w", err)
				}
				macro = &deviceapi.Macro{}
				if err := json.Unmarshal(b, macro); err != nil {
					return &UsageError{fmt.Errorf("--macro %s is not a Macro JSON object: %w", macroFile, err)}
				}
				if command == "" && macro.Name == "" && len(macro.Commands) == 0 {
					return &UsageError{fmt.Errorf("--macro %s has neither a name nor a command: give --command", macroFile)}
				}
			}
			macro, err := MacroWithEvents(macro, command, events)
			if err != nil {
				return err
			}
			id, err := a.pickDevice(ctx, c, device)
			if err != nil {
				return err
			}
			// Without --macro, --macro-name or --event the command goes
			// as the real service may send it: with a null macro.
			res, err := c.Send(ctx, id, mockhub.CommandRequest{Command: command, Macro: macro, MacroName: macroName,
				NoMacro: macro == nil && macroName == ""})
			if err != nil {
				return err
			}
			return a.printPush(m, res, "DeviceCommand")
		})
	cmd.Flags().StringVar(&device, "device", "", "device id (default: the mock's only device)")
	cmd.Flags().StringVar(&command, "command", "", "the command string (default with a macro: the macro's name, as the real app sends it, else its first command)")
	cmd.Flags().StringVar(&macroFile, "macro", "", "JSON file of the Macro to send (- for stdin; default: no macro, a null one, as the real service may send)")
	cmd.Flags().StringVar(&macroName, "macro-name", "", "send the macro of this name in the device's current profile (as the real app does)")
	cmd.Flags().StringArrayVar(&events, "event", nil, `a MacroEvent as JSON, appended to the macro's events (repeatable), e.g. '{"eventType":"Type","typedPhrase":"water the plants"}'`)
	return cmd
}

// pickDevice is the device a subcommand pushes to: --device, else the
// mock's only device; with none or several it says which exist (a usage
// error).
func (a *cli) pickDevice(ctx context.Context, c *mockhub.AdminClient, device string) (string, error) {
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
		return "", &UsageError{errors.New("the mock has no device yet: pair one ('hubgate pair') or create one ('hubgate mock create-device')")}
	}
	var b strings.Builder
	for _, d := range list {
		fmt.Fprintf(&b, "\n  %s  %s (%d connection(s))", d.Device.ID, d.Device.NameOverride, d.Connections)
	}
	return "", &UsageError{fmt.Errorf("the mock has %d devices; pick one with --device:%s", len(list), b.String())}
}

// MacroWithEvents appends the --event values to the macro (one made
// from the command, as the mock would make it, when there is none), as
// `mock send --event` does; `rules test --event` builds its macro so too.
func MacroWithEvents(macro *deviceapi.Macro, command string, events []string) (*deviceapi.Macro, error) {
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
			return nil, &UsageError{fmt.Errorf("--event #%d is not a MacroEvent JSON object: %w", i+1, err)}
		}
		macro.Events = append(macro.Events, e)
	}
	return macro, nil
}

// fileForDevice is what profile and settings push: the JSON of --file
// (required) and the device it goes to (pickDevice).
func (a *cli) fileForDevice(ctx context.Context, c *mockhub.AdminClient, cmd *cobra.Command, file, device string) (string, []byte, error) {
	if err := required(cmd, "file"); err != nil {
		return "", nil, err
	}
	b, err := a.readJSONFile(file)
	if err != nil {
		return "", nil, err
	}
	id, err := a.pickDevice(ctx, c, device)
	return id, b, err
}

func newProfileCommand(a *cli) *cobra.Command {
	var device, file string
	cmd, _ := a.adminCommand("profile", "Set a device's current profile and push DeviceProfileUpdate", true,
		func(ctx context.Context, c *mockhub.AdminClient, m *clientFlags, cmd *cobra.Command) error {
			id, b, err := a.fileForDevice(ctx, c, cmd, file, device)
			if err != nil {
				return err
			}
			res, err := c.Profile(ctx, id, b)
			if err != nil {
				return err
			}
			if m.json {
				return a.printJSON(res)
			}
			_, err = fmt.Fprintf(a.Out, "profile set; DeviceProfileUpdate delivered to %d connection(s)\n", res.Delivered)
			return err
		})
	cmd.Flags().StringVar(&device, "device", "", "device id (default: the mock's only device)")
	cmd.Flags().StringVar(&file, "file", "", "JSON file of the Profile (- for stdin)")
	return cmd
}

func newListeningCommand(a *cli, start bool) *cobra.Command {
	use, target := "stop-listening", "StopListening"
	if start {
		use, target = "start-listening", "StartListening"
	}
	var device string
	cmd, _ := a.adminCommand(use, "Push "+target+" to a device's hub connections", true,
		func(ctx context.Context, c *mockhub.AdminClient, m *clientFlags, cmd *cobra.Command) error {
			id, err := a.pickDevice(ctx, c, device)
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
			return a.printPush(m, res, target)
		})
	cmd.Flags().StringVar(&device, "device", "", "device id (default: the mock's only device)")
	return cmd
}

func newSettingsCommand(a *cli) *cobra.Command {
	var device, file string
	cmd, _ := a.adminCommand("settings", "Push DeviceSettingsUpdate with any JSON value", true,
		func(ctx context.Context, c *mockhub.AdminClient, m *clientFlags, cmd *cobra.Command) error {
			id, b, err := a.fileForDevice(ctx, c, cmd, file, device)
			if err != nil {
				return err
			}
			res, err := c.Settings(ctx, id, b)
			if err != nil {
				return err
			}
			return a.printPush(m, res, "DeviceSettingsUpdate")
		})
	cmd.Flags().StringVar(&device, "device", "", "device id (default: the mock's only device)")
	cmd.Flags().StringVar(&file, "file", "", "JSON file of the settings (- for stdin)")
	return cmd
}

func newDisableTokenCommand(a *cli) *cobra.Command {
	var tokenID string
	cmd, _ := a.adminCommand("disable-token", "Disable a device token and drop the hub connections using it", true,
		func(ctx context.Context, c *mockhub.AdminClient, m *clientFlags, cmd *cobra.Command) error {
			if err := required(cmd, "token-id"); err != nil {
				return err
			}
			res, err := c.DisableToken(ctx, tokenID)
			if err != nil {
				return err
			}
			if m.json {
				return a.printJSON(res)
			}
			_, err = fmt.Fprintf(a.Out, "token %s disabled; %d connection(s) dropped\n", res.Token.ID, res.Dropped)
			return err
		})
	cmd.Flags().StringVar(&tokenID, "token-id", "", "id of the device token (not the token itself)")
	return cmd
}

func newFaultCommand(a *cli) *cobra.Command {
	var fl faultFlags
	cmd, _ := a.adminCommand("fault", "Inject hub faults: drop every connection, refuse new ones for a while, freeze, or fail the SignalR service", true,
		func(ctx context.Context, c *mockhub.AdminClient, m *clientFlags, cmd *cobra.Command) error {
			f, err := fl.faults(cmd)
			if err != nil {
				return err
			}
			st, err := c.Faults(ctx, f)
			if err != nil {
				return err
			}
			if m.json {
				return a.printJSON(st)
			}
			_, err = fmt.Fprintln(a.Out, faultSummary(f, st))
			return err
		})
	cmd.Flags().BoolVar(&fl.drop, "drop", false, "close every hub connection now")
	cmd.Flags().DurationVar(&fl.refuseFor, "refuse-for", 0, "answer 503 to new hub connections for this long (0s ends it)")
	cmd.Flags().DurationVar(&fl.freeze, "freeze", 0, "stop all hub traffic for this long without closing (0s thaws)")
	cmd.Flags().BoolVar(&fl.expireService, "expire-service-tokens", false, "expire every access token of a negotiate redirect issued so far (open connections stay)")
	cmd.Flags().DurationVar(&fl.serviceError, "service-error-for", 0, "the SignalR service's negotiate answers an error for this long (0s ends it)")
	return cmd
}

// faultFlags are the flags of `mock fault`.
type faultFlags struct {
	drop, expireService             bool
	refuseFor, freeze, serviceError time.Duration
}

// faults are the faults the flags ask for; a duration is sent only when
// its flag was given (0s ends that fault).
func (fl *faultFlags) faults(cmd *cobra.Command) (mockhub.Faults, error) {
	f := mockhub.Faults{Drop: fl.drop, ExpireServiceTokens: fl.expireService}
	for _, d := range []struct {
		flag string
		v    time.Duration
		dst  **mockhub.Duration
	}{{"refuse-for", fl.refuseFor, &f.RefuseFor}, {"freeze", fl.freeze, &f.Freeze}, {"service-error-for", fl.serviceError, &f.ServiceErrorFor}} {
		if !cmd.Flags().Changed(d.flag) {
			continue
		}
		if d.v < 0 {
			return f, &UsageError{errors.New("--" + d.flag + " must not be negative")}
		}
		v := mockhub.Duration(d.v)
		*d.dst = &v
	}
	if !f.Drop && f.RefuseFor == nil && f.Freeze == nil && !f.ExpireServiceTokens && f.ServiceErrorFor == nil {
		return f, &UsageError{errors.New("fault needs --drop, --refuse-for, --freeze, --expire-service-tokens or --service-error-for")}
	}
	return f, nil
}

// faultSummary is the one line `mock fault` prints of the mock's answer.
func faultSummary(f mockhub.Faults, st mockhub.FaultState) string {
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
	return msg
}

func newEventsCommand(a *cli) *cobra.Command {
	var since int64
	var follow bool
	var device string
	cmd, _ := a.adminCommand("events", "Show the mock's journal: every OAuth, REST, admin and hub call, both directions, with payloads (secrets redacted)", true,
		func(ctx context.Context, c *mockhub.AdminClient, m *clientFlags, _ *cobra.Command) error {
			if since < 0 {
				return &UsageError{errors.New("--since must be >= 0")}
			}
			show := func(e mockhub.Event) error {
				if m.json {
					return cliout.WriteJSONLine(a.Out, e) // bounded in depth and size
				}
				_, err := fmt.Fprintln(a.Out, formatEvent(e))
				return err
			}
			if !follow {
				page, err := c.Journal(ctx, since, device, 0)
				if err != nil {
					return err
				}
				if m.json {
					return a.printJSON(page)
				}
				for _, e := range page.Events {
					if err := show(e); err != nil {
						return err
					}
				}
				return nil
			}
			err := c.FollowJournal(ctx, since, device, show, func(missed int64) {
				fmt.Fprintf(a.Err, "hubgate: %d journal entries were dropped before they could be shown\n", missed)
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

func formatEvent(e mockhub.Event) string {
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
	// The JSON parts within cliout's bounds: a payload may be nested
	// thousands deep.
	for _, p := range []struct {
		name string
		v    any
		set  bool
	}{{"args", e.Args, len(e.Args) > 0}, {"payload", e.Payload, len(e.Payload) > 0}, {"result", e.Result, len(e.Result) > 0}} {
		if !p.set {
			continue
		}
		if j, err := cliout.BoundedJSON(p.v, ""); err == nil {
			fmt.Fprintf(&b, " %s=%s", p.name, j)
		} else {
			fmt.Fprintf(&b, " %s=(unprintable: %v)", p.name, err)
		}
	}
	return b.String()
}
