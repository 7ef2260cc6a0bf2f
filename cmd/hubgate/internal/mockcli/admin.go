package mockcli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// adminOptions are what the options of every admin subcommand hold: the
// streams and the running mock's admin client.
type adminOptions struct {
	In       io.Reader
	Out, Err io.Writer
	// Client is the running mock's admin client: --url, else $EnvURL,
	// else http://mockhub.DefaultListen.
	Client *mockhub.AdminClient
	JSON   bool // --json: print the answer as JSON
}

// admin is the admin client of the mock at u ("": $EnvURL, else the
// default address); a u that is not an http URL is a UsageError.
func (a *cli) admin(u string) (*mockhub.AdminClient, error) {
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

// readJSONFile reads --file (- for stdin) and checks it is JSON.
func (o *adminOptions) readJSONFile(file string) ([]byte, error) {
	b, err := cliout.ReadInput(o.In, file)
	if err != nil {
		return nil, fmt.Errorf("--file: %w", err)
	}
	if !json.Valid(b) {
		return nil, &UsageError{fmt.Errorf("--file %s is not JSON", file)}
	}
	return b, nil
}

func (o *adminOptions) printJSON(v any) error { return cliout.WriteJSON(o.Out, v) }

// adminCommand builds an admin subcommand, as gh builds a command: its
// options o (whose adminOptions are ao) are filled from the flags; RunE
// makes the admin client of --url, runs check (nil: none) on the parsed
// command line, then hands o to runF when a test gave one, else to run.
func adminCommand[O any](a *cli, use, short string, withJSON bool, o *O, ao *adminOptions,
	check func(cmd *cobra.Command, args []string) error, runF, run func(context.Context, *O) error) *cobra.Command {
	ao.In, ao.Out, ao.Err = a.In, a.Out, a.Err
	var u string
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.admin(u)
			if err != nil {
				return err
			}
			ao.Client = c
			if check != nil {
				if err := check(cmd, args); err != nil {
					return err
				}
			}
			return cliout.Run(cmd, runF, run, o)
		},
	}
	cmd.Flags().StringVar(&u, "url", "", "base URL of the running mock (default $"+EnvURL+")")
	if withJSON {
		cmd.Flags().BoolVar(&ao.JSON, "json", false, "print the answer as JSON")
	}
	return cmd
}

func (o *adminOptions) printPush(res mockhub.PushResult, what string) error {
	if o.JSON {
		return o.printJSON(res)
	}
	_, err := fmt.Fprintf(o.Out, "%s delivered to %d connection(s)\n", what, res.Delivered)
	return err
}

// devicesOptions are `mock devices`' options.
type devicesOptions struct{ adminOptions }

func newDevicesCommand(a *cli) *cobra.Command { return newCmdDevices(a, nil) }

// newCmdDevices builds mock devices; runF (nil: runDevices) gets the
// parsed options.
func newCmdDevices(a *cli, runF func(context.Context, *devicesOptions) error) *cobra.Command {
	o := &devicesOptions{}
	return adminCommand(a, "devices", "List the mock's devices, their flags and hub connections", true, o, &o.adminOptions, nil, runF, runDevices)
}

// runDevices lists the mock's devices: a table, or JSON.
func runDevices(ctx context.Context, o *devicesOptions) error {
	list, err := o.Client.Devices(ctx)
	if err != nil {
		return err
	}
	if o.JSON {
		return o.printJSON(list)
	}
	tw := tabwriter.NewWriter(o.Out, 0, 4, 2, ' ', 0)
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
}

// createDeviceOptions are `mock create-device`'s options.
type createDeviceOptions struct {
	adminOptions
	Name       string // --name ("": the mock's default)
	DeviceType string // --device-type ("": the mock's)
}

func newCreateDeviceCommand(a *cli) *cobra.Command { return newCmdCreateDevice(a, nil) }

// newCmdCreateDevice builds mock create-device; runF (nil:
// runCreateDevice) gets the parsed options.
func newCmdCreateDevice(a *cli, runF func(context.Context, *createDeviceOptions) error) *cobra.Command {
	o := &createDeviceOptions{}
	cmd := adminCommand(a, "create-device", "Create a device and its device token without OAuth (prints both as JSON, token included, with or without --json)", true,
		o, &o.adminOptions, nil, runF, runCreateDevice)
	cmd.Flags().StringVar(&o.Name, "name", "", "device name (default \"Mock device\")")
	cmd.Flags().StringVar(&o.DeviceType, "device-type", "", "device type id (default: the mock's)")
	return cmd
}

// runCreateDevice creates a device and its token and prints both as JSON.
func runCreateDevice(ctx context.Context, o *createDeviceOptions) error {
	created, err := o.Client.CreateDevice(ctx, mockhub.CreateDeviceRequest{DeviceTypeID: o.DeviceType, Name: o.Name})
	if err != nil {
		return err
	}
	return o.printJSON(created)
}

// sendOptions are `mock send`'s options.
type sendOptions struct {
	adminOptions
	Device    string   // --device ("": the mock's only device)
	Command   string   // --command
	MacroFile string   // --macro ("-": stdin)
	MacroName string   // --macro-name: a macro of the device's profile
	Events    []string // --event, each a MacroEvent's JSON
}

func newSendCommand(a *cli) *cobra.Command { return newCmdSend(a, nil) }

// newCmdSend builds mock send; runF (nil: runSend) gets the parsed
// options.
func newCmdSend(a *cli, runF func(context.Context, *sendOptions) error) *cobra.Command {
	o := &sendOptions{}
	check := func(cmd *cobra.Command, _ []string) error {
		if o.Command == "" && o.MacroFile == "" && o.MacroName == "" {
			return &UsageError{errors.New(cmd.CommandPath() + " needs --command, --macro FILE or --macro-name NAME")}
		}
		if o.MacroFile != "" && o.MacroName != "" {
			return &UsageError{errors.New("--macro and --macro-name are exclusive: one macro is sent")}
		}
		if o.MacroName != "" && len(o.Events) > 0 {
			return &UsageError{errors.New("--event adds to --macro FILE or to the macro made from --command, not to a profile's macro")}
		}
		return nil
	}
	cmd := adminCommand(a, "send", "Push a DeviceCommand (command and macro) to a device's hub connections", true, o, &o.adminOptions, check, runF, runSend)
	cmd.Flags().StringVar(&o.Device, "device", "", "device id (default: the mock's only device)")
	cmd.Flags().StringVar(&o.Command, "command", "", "the command string (default with a macro: the macro's name, as the real app sends it, else its first command)")
	cmd.Flags().StringVar(&o.MacroFile, "macro", "", "JSON file of the Macro to send (- for stdin; default: no macro, a null one, as the real service may send)")
	cmd.Flags().StringVar(&o.MacroName, "macro-name", "", "send the macro of this name in the device's current profile (as the real app does)")
	cmd.Flags().StringArrayVar(&o.Events, "event", nil, `a MacroEvent as JSON, appended to the macro's events (repeatable), e.g. '{"eventType":"Type","typedPhrase":"water the plants"}'`)
	return cmd
}

// runSend pushes the command with its macro to the device.
func runSend(ctx context.Context, o *sendOptions) error {
	var macro *deviceapi.Macro
	if o.MacroFile != "" {
		b, err := cliout.ReadInput(o.In, o.MacroFile)
		if err != nil {
			return fmt.Errorf("--macro: %w", err)
		}
		macro = &deviceapi.Macro{}
		if err := json.Unmarshal(b, macro); err != nil {
			return &UsageError{fmt.Errorf("--macro %s is not a Macro JSON object: %w", o.MacroFile, err)}
		}
		if o.Command == "" && macro.Name == "" && len(macro.Commands) == 0 {
			return &UsageError{fmt.Errorf("--macro %s has neither a name nor a command: give --command", o.MacroFile)}
		}
	}
	macro, err := MacroWithEvents(macro, o.Command, o.Events)
	if err != nil {
		return err
	}
	id, err := pickDevice(ctx, o.Client, o.Device)
	if err != nil {
		return err
	}
	// Without --macro, --macro-name or --event the command goes as the
	// real service may send it: with a null macro.
	res, err := o.Client.Send(ctx, id, mockhub.CommandRequest{Command: o.Command, Macro: macro, MacroName: o.MacroName,
		NoMacro: macro == nil && o.MacroName == ""})
	if err != nil {
		return err
	}
	return o.printPush(res, "DeviceCommand")
}

// pickDevice is the device a subcommand pushes to: --device, else the
// mock's only device; with none or several it says which exist (a usage
// error).
func pickDevice(ctx context.Context, c *mockhub.AdminClient, device string) (string, error) {
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

// fileForDevice is what profile and settings push: the JSON of file
// and the device it goes to (pickDevice).
func (o *adminOptions) fileForDevice(ctx context.Context, file, device string) (string, []byte, error) {
	b, err := o.readJSONFile(file)
	if err != nil {
		return "", nil, err
	}
	id, err := pickDevice(ctx, o.Client, device)
	return id, b, err
}

// fileOptions are the options of `mock profile` and `mock settings`.
type fileOptions struct {
	adminOptions
	Device string // --device ("": the mock's only device)
	File   string // --file, required ("-": stdin)
}

// fileCommand is profile or settings: --device and the required --file.
func fileCommand(a *cli, use, short, fileHelp string, runF, run func(context.Context, *fileOptions) error) *cobra.Command {
	o := &fileOptions{}
	check := func(cmd *cobra.Command, _ []string) error { return required(cmd, "file") }
	cmd := adminCommand(a, use, short, true, o, &o.adminOptions, check, runF, run)
	cmd.Flags().StringVar(&o.Device, "device", "", "device id (default: the mock's only device)")
	cmd.Flags().StringVar(&o.File, "file", "", fileHelp)
	return cmd
}

func newProfileCommand(a *cli) *cobra.Command { return newCmdProfile(a, nil) }

// newCmdProfile builds mock profile; runF (nil: runProfile) gets the
// parsed options.
func newCmdProfile(a *cli, runF func(context.Context, *fileOptions) error) *cobra.Command {
	return fileCommand(a, "profile", "Set a device's current profile and push DeviceProfileUpdate", "JSON file of the Profile (- for stdin)", runF, runProfile)
}

// runProfile sets the device's profile.
func runProfile(ctx context.Context, o *fileOptions) error {
	id, b, err := o.fileForDevice(ctx, o.File, o.Device)
	if err != nil {
		return err
	}
	res, err := o.Client.Profile(ctx, id, b)
	if err != nil {
		return err
	}
	if o.JSON {
		return o.printJSON(res)
	}
	_, err = fmt.Fprintf(o.Out, "profile set; DeviceProfileUpdate delivered to %d connection(s)\n", res.Delivered)
	return err
}

// listeningOptions are the options of `mock start-listening` and `mock
// stop-listening`.
type listeningOptions struct {
	adminOptions
	Start  bool   // StartListening; false: StopListening
	Device string // --device ("": the mock's only device)
}

func newListeningCommand(a *cli, start bool) *cobra.Command { return newCmdListening(a, start, nil) }

// newCmdListening builds mock start-listening (start) or stop-listening;
// runF (nil: runListening) gets the parsed options.
func newCmdListening(a *cli, start bool, runF func(context.Context, *listeningOptions) error) *cobra.Command {
	use, target := "stop-listening", "StopListening"
	if start {
		use, target = "start-listening", "StartListening"
	}
	o := &listeningOptions{Start: start}
	cmd := adminCommand(a, use, "Push "+target+" to a device's hub connections", true, o, &o.adminOptions, nil, runF, runListening)
	cmd.Flags().StringVar(&o.Device, "device", "", "device id (default: the mock's only device)")
	return cmd
}

// runListening pushes StartListening or StopListening to the device.
func runListening(ctx context.Context, o *listeningOptions) error {
	id, err := pickDevice(ctx, o.Client, o.Device)
	if err != nil {
		return err
	}
	var res mockhub.PushResult
	target := "StopListening"
	if o.Start {
		target = "StartListening"
		res, err = o.Client.StartListening(ctx, id)
	} else {
		res, err = o.Client.StopListening(ctx, id)
	}
	if err != nil {
		return err
	}
	return o.printPush(res, target)
}

func newSettingsCommand(a *cli) *cobra.Command { return newCmdSettings(a, nil) }

// newCmdSettings builds mock settings; runF (nil: runSettings) gets the
// parsed options.
func newCmdSettings(a *cli, runF func(context.Context, *fileOptions) error) *cobra.Command {
	return fileCommand(a, "settings", "Push DeviceSettingsUpdate with any JSON value", "JSON file of the settings (- for stdin)", runF, runSettings)
}

// runSettings pushes DeviceSettingsUpdate to the device.
func runSettings(ctx context.Context, o *fileOptions) error {
	id, b, err := o.fileForDevice(ctx, o.File, o.Device)
	if err != nil {
		return err
	}
	res, err := o.Client.Settings(ctx, id, b)
	if err != nil {
		return err
	}
	return o.printPush(res, "DeviceSettingsUpdate")
}

// disableTokenOptions are `mock disable-token`'s options.
type disableTokenOptions struct {
	adminOptions
	TokenID string // --token-id, required
}

func newDisableTokenCommand(a *cli) *cobra.Command { return newCmdDisableToken(a, nil) }

// newCmdDisableToken builds mock disable-token; runF (nil:
// runDisableToken) gets the parsed options.
func newCmdDisableToken(a *cli, runF func(context.Context, *disableTokenOptions) error) *cobra.Command {
	o := &disableTokenOptions{}
	check := func(cmd *cobra.Command, _ []string) error { return required(cmd, "token-id") }
	cmd := adminCommand(a, "disable-token", "Disable a device token and drop the hub connections using it", true, o, &o.adminOptions, check, runF, runDisableToken)
	cmd.Flags().StringVar(&o.TokenID, "token-id", "", "id of the device token (not the token itself)")
	return cmd
}

// runDisableToken disables the token and drops its connections.
func runDisableToken(ctx context.Context, o *disableTokenOptions) error {
	res, err := o.Client.DisableToken(ctx, o.TokenID)
	if err != nil {
		return err
	}
	if o.JSON {
		return o.printJSON(res)
	}
	_, err = fmt.Fprintf(o.Out, "token %s disabled; %d connection(s) dropped\n", res.Token.ID, res.Dropped)
	return err
}

// faultOptions are `mock fault`'s options.
type faultOptions struct {
	adminOptions
	Faults mockhub.Faults // what the flags ask for (faultFlags.faults)
}

func newFaultCommand(a *cli) *cobra.Command { return newCmdFault(a, nil) }

// newCmdFault builds mock fault; runF (nil: runFault) gets the parsed
// options.
func newCmdFault(a *cli, runF func(context.Context, *faultOptions) error) *cobra.Command {
	o := &faultOptions{}
	var fl faultFlags
	check := func(cmd *cobra.Command, _ []string) error {
		var err error
		o.Faults, err = fl.faults(cmd)
		return err
	}
	cmd := adminCommand(a, "fault", "Inject hub faults: drop every connection, refuse new ones for a while, freeze, or fail the SignalR service", true,
		o, &o.adminOptions, check, runF, runFault)
	cmd.Flags().BoolVar(&fl.drop, "drop", false, "close every hub connection now")
	cmd.Flags().DurationVar(&fl.refuseFor, "refuse-for", 0, "answer 503 to new hub connections for this long (0s ends it)")
	cmd.Flags().DurationVar(&fl.freeze, "freeze", 0, "stop all hub traffic for this long without closing (0s thaws)")
	cmd.Flags().BoolVar(&fl.expireService, "expire-service-tokens", false, "expire every access token of a negotiate redirect issued so far (open connections stay)")
	cmd.Flags().DurationVar(&fl.serviceError, "service-error-for", 0, "the SignalR service's negotiate answers an error for this long (0s ends it)")
	return cmd
}

// runFault injects the faults and says what the mock did.
func runFault(ctx context.Context, o *faultOptions) error {
	st, err := o.Client.Faults(ctx, o.Faults)
	if err != nil {
		return err
	}
	if o.JSON {
		return o.printJSON(st)
	}
	_, err = fmt.Fprintln(o.Out, faultSummary(o.Faults, st))
	return err
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

// eventsOptions are `mock events`' options.
type eventsOptions struct {
	adminOptions
	Since  int64  // --since: entries after this sequence number
	Follow bool   // --follow: until interrupted
	Device string // --device: only this device's entries
}

func newEventsCommand(a *cli) *cobra.Command { return newCmdEvents(a, nil) }

// newCmdEvents builds mock events; runF (nil: runEvents) gets the parsed
// options.
func newCmdEvents(a *cli, runF func(context.Context, *eventsOptions) error) *cobra.Command {
	o := &eventsOptions{}
	check := func(*cobra.Command, []string) error {
		if o.Since < 0 {
			return &UsageError{errors.New("--since must be >= 0")}
		}
		return nil
	}
	cmd := adminCommand(a, "events", "Show the mock's journal: every OAuth, REST, admin and hub call, both directions, with payloads (secrets redacted)", true,
		o, &o.adminOptions, check, runF, runEvents)
	cmd.Flags().Int64Var(&o.Since, "since", 0, "show entries after this sequence number (with --follow, one beyond the last follows from now)")
	cmd.Flags().BoolVar(&o.Follow, "follow", false, "keep showing new entries as they come (JSON lines with --json) until interrupted")
	cmd.Flags().StringVar(&o.Device, "device", "", "only the entries of this device")
	return cmd
}

// runEvents prints the journal's entries; with Follow, the new ones until
// ctx ends.
func runEvents(ctx context.Context, o *eventsOptions) error {
	show := func(e mockhub.Event) error {
		if o.JSON {
			return cliout.WriteJSONLine(o.Out, e) // bounded in depth and size
		}
		_, err := fmt.Fprintln(o.Out, formatEvent(e))
		return err
	}
	if !o.Follow {
		page, err := o.Client.Journal(ctx, o.Since, o.Device, 0)
		if err != nil {
			return err
		}
		if o.JSON {
			return o.printJSON(page)
		}
		for _, e := range page.Events {
			if err := show(e); err != nil {
				return err
			}
		}
		return nil
	}
	err := o.Client.FollowJournal(ctx, o.Since, o.Device, show, func(missed int64) {
		fmt.Fprintf(o.Err, "hubgate: %d journal entries were dropped before they could be shown\n", missed)
	})
	if ctx.Err() != nil {
		return nil // interrupted: the normal end of --follow
	}
	if err == nil {
		return errors.New("the mock closed the journal stream (it stopped)")
	}
	return err
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
