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

func newTokenCommand(a *cli) *cobra.Command {
	var device string
	cmd, _ := a.adminCommand("token", "Print an access token of the mock's user (and with --device a new device token), without a browser", true,
		func(ctx context.Context, c *mockhub.AdminClient, m *clientFlags, _ *cobra.Command) error {
			var out Tokens
			if device != "" { // first, so that an unknown device mints nothing
				tok, err := c.CreateToken(ctx, device)
				if err != nil {
					return err
				}
				out.Device = &tok
			}
			user, err := c.SignIn(ctx)
			if err != nil {
				return err
			}
			out.User = user
			if m.json {
				return a.printJSON(out)
			}
			fmt.Fprintln(a.Out, out.User.AccessToken)
			if out.Device != nil {
				fmt.Fprintln(a.Out, out.Device.Token)
			}
			return nil
		})
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
	cmd.Flags().StringVar(&device, "device", "", "also create a device token for this device id")
	return cmd
}
