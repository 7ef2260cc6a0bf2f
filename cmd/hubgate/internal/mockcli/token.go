package mockcli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/hub/mockhub"
)

// Tokens is what `hubgate mock token --json` prints.
type Tokens struct {
	User   mockhub.TokenResponse  `json:"user"`             // the user's access and refresh tokens
	Device *deviceapi.DeviceToken `json:"device,omitempty"` // with --device: a new device token
}

// tokenOptions are `mock token`'s options.
type tokenOptions struct {
	adminOptions
	Device string // --device: also a new device token of this device
}

func newTokenCommand(a *cli) *cobra.Command { return newCmdToken(a, nil) }

// newCmdToken builds mock token; runF (nil: runToken) gets the parsed
// options.
func newCmdToken(a *cli, runF func(context.Context, *tokenOptions) error) *cobra.Command {
	o := &tokenOptions{}
	cmd := adminCommand(a, "token", "Print an access token of the mock's user (and with --device a new device token), without a browser", true,
		o, &o.adminOptions, nil, runF, runToken)
	cmd.Long = `Sign the mock's user in through the admin API (loopback only) and print the
access token on one line: paste it into the explorer's Authorize box
(/swagger), or use it with curl:

  curl -X POST -H "Authorization: Bearer $(hubgate mock token)" \
    "${` + EnvURL + `:-http://` + mockhub.DefaultListen + `}/api/Device/userDevices/new/mock-controller?name=test"

(` + EnvURL + ` is the mock's address when you set it; the default is the one
'hubgate mock' listens on.)

With --device ID a new device token of that device follows on a second line
(for the hub: bearer and X-Device-Token). --json prints both answers whole
(expirations, refresh token, token id).`
	cmd.Flags().StringVar(&o.Device, "device", "", "also create a device token for this device id")
	return cmd
}

// runToken signs the mock's user in (and with Device creates a device
// token first) and prints the tokens.
func runToken(ctx context.Context, o *tokenOptions) error {
	var out Tokens
	if o.Device != "" { // first, so that an unknown device mints nothing
		tok, err := o.Client.CreateToken(ctx, o.Device)
		if err != nil {
			return err
		}
		out.Device = &tok
	}
	user, err := o.Client.SignIn(ctx)
	if err != nil {
		return err
	}
	out.User = user
	if o.JSON {
		return o.printJSON(out)
	}
	fmt.Fprintln(o.Out, out.User.AccessToken)
	if out.Device != nil {
		fmt.Fprintln(o.Out, out.Device.Token)
	}
	return nil
}
