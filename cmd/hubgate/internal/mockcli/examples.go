package mockcli

import (
	"github.com/spf13/cobra"

	"github.com/hubgate/hubgate/hub/mockhub"
)

// examples are the Examples sections of `hubgate mock` and its
// subcommands, by name.
var examples = map[string]string{
	"mock": `  hubgate mock                         # on http://` + mockhub.DefaultListen + `
  hubgate mock --state mock.json &     # devices and tokens survive restarts
  hubgate mock --listen 127.0.0.1:0    # any free port (the URL is printed on stdout)`,
	"devices": `  hubgate mock devices
  hubgate mock devices --json`,
	"create-device": `  hubgate mock create-device --name ci   # prints the device id and its device token`,
	"send": `  hubgate mock send --command "notify hi"
  hubgate mock send --device <id> --macro-name Jump
  hubgate mock send --event '{"eventType":"Type","typedPhrase":"water the plants"}' --command type`,
	"profile":         `  hubgate mock profile --file profile.json`,
	"settings":        `  echo '{"isAutoListen": true}' | hubgate mock settings --file -`,
	"start-listening": `  hubgate mock start-listening --device <id>`,
	"stop-listening":  `  hubgate mock stop-listening --device <id>`,
	"disable-token": `  hubgate mock devices                         # the token ids
  hubgate mock disable-token --token-id <token id>`,
	"fault": `  hubgate mock fault --drop              # close every hub connection now
  hubgate mock fault --refuse-for 30s    # 503 to new hub connections for 30 s
  hubgate mock fault --freeze 10s`,
	"events": `  hubgate mock events
  hubgate mock events --follow --json --device <id>`,
	"token": `  hubgate mock token
  hubgate mock token --device <id> --json`,
	"play": `  hubgate mock play ci.yaml    # start it first, then start the client under test`,
	"record": `  hubgate mock record session.yaml              # Ctrl-C to stop
  hubgate mock record session.yaml --for 2m`,
}

// setExamples gives cmd and its subcommands their Examples section.
func setExamples(cmd *cobra.Command) {
	if ex, ok := examples[cmd.Name()]; ok && cmd.Example == "" {
		cmd.Example = ex
	}
	for _, sub := range cmd.Commands() {
		setExamples(sub)
	}
}
