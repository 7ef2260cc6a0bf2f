package rules

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/deviceapi"
)

// Explanation is a routing decision as `hubgate rules test` and the
// status page's rules test show it (Set.Explain): its JSON is `rules test
// --json`, WriteText its text.
type Explanation struct {
	Command string `json:"command"`
	// Action is the routing decision (Action): "run" (a rule or the
	// unmatched action would start a run), "ignore" (nothing handles it),
	// "cancel" (a StopOutputs macro cancels the current run), "refuse"
	// (a custom action for another device type) or "error" (the rule's
	// template failed).
	Action  string `json:"action"`
	Rule    string `json:"rule,omitempty"`
	Matched bool   `json:"matched"` // a rule matched (not the unmatched action)
	// Macro is the command's macro as the daemon would see it: as given
	// (--macro, --event), or found in --profile; Found says how
	// (Found: delivered, id, command, name).
	Macro    *deviceapi.Macro `json:"macro,omitempty"`
	Found    string           `json:"found,omitempty"`
	Busy     string           `json:"busy,omitempty"`
	QueueMax int              `json:"queueLimit,omitempty"`
	MaxAge   string           `json:"maxAge,omitempty"`
	// Notify is the notify policy that applies (the rule's, else
	// bridge.notify's; rules.NotifyPolicies) and NotifyFrom where it comes
	// from ("rule" or "bridge.notify"); Speak whether the rule's answers
	// are spoken.
	Notify     string               `json:"notify,omitempty"`
	NotifyFrom string               `json:"notifyFrom,omitempty"`
	Speak      bool                 `json:"speak"`
	Request    *automate.RunRequest `json:"request,omitempty"`
	// Confined is the request's restrictToWorkspace, said also when false
	// (the rule opted out): the run's file tools stay in the workspace.
	Confined *bool `json:"confined,omitempty"`
	// Reason says why the command would not run (ignore, refuse, error);
	// Error is the render error of "error" alone, without the rule's
	// name (Rule has it): "run.prompt: template: ...".
	Reason string `json:"reason,omitempty"`
	Error  string `json:"error,omitempty"`
	// DeviceType is the device type custom actions are checked against
	// (--device-type, else the paired device's); "" when unchecked.
	DeviceType string `json:"deviceType,omitempty"`
	ConfigSrc  string `json:"config"`
	// busyText is the busy policy in words (Rule.DescribeBusy), for
	// the text output.
	busyText string
}

// Defaults are the bridge section's settings for the rules that do not
// say, as Explain applies them.
type Defaults struct {
	Notify string // bridge.notify; zero: NotifyAnswers
	Ask    bool   // bridge.ask: ask_person offered
}

// Explain is the bridge's routing decision (Decide) of cmd with what
// `rules test` shows of it: the request is the one the bridge sends
// (Rule.WithAskTool over the rendering), with every client tool.
func (set *Set) Explain(cmd Command, def Defaults) Explanation {
	d := set.Decide(cmd)
	res := Explanation{Command: cmd.Text, Action: string(d.Action), Macro: d.Command.Macro, Found: string(d.Found),
		Reason: d.Reason(), DeviceType: set.DeviceType()}
	defaultNotify := def.Notify
	if defaultNotify == "" {
		defaultNotify = NotifyAnswers
	}
	res.Notify, res.NotifyFrom = defaultNotify, "bridge.notify"
	if d.Action == ActionError {
		// Rule names the rule: the error does not repeat it.
		res.Error = d.Err.Error()
		var re *RenderError
		if errors.As(d.Err, &re) {
			res.Error = re.Detail()
		}
	}
	rule := d.Rule
	if rule == nil {
		return res
	}
	res.Rule, res.Matched, res.Speak = rule.Name(), d.Matched, rule.Speak()
	if p := rule.Notify(); p != "" {
		res.Notify, res.NotifyFrom = p, "rule"
	}
	res.Busy, res.busyText = string(rule.Busy()), rule.DescribeBusy()
	if rule.Busy() == BusyQueue {
		res.QueueMax = rule.QueueLimit()
		res.MaxAge = rule.MaxAge().String()
	}
	if d.Action == ActionRun {
		req, _ := rule.WithAskTool(d.Request, def.Ask)
		res.Request = &req
		res.Confined = &req.RestrictToWorkspace
	}
	return res
}

// WriteText writes r as `hubgate rules test` prints it.
func (r Explanation) WriteText(w io.Writer) {
	fmt.Fprintf(w, "command  %q\n", r.Command)
	if m := r.Macro; m != nil {
		how := map[string]string{string(FoundDelivered): "as given", string(FoundByID): "found in the profile by its id",
			string(FoundByCommand): "found in the profile by its commands", string(FoundByName): "found in the profile by its name"}[r.Found]
		fmt.Fprintf(w, "macro    %q (id %s, %d events), %s\n", m.Name, m.ID, len(m.Events), how)
	}
	notify := fmt.Sprintf("notify   %s (%s)", r.Notify, r.NotifyFrom)
	switch Action(r.Action) {
	case ActionCancel:
		fmt.Fprintln(w, "action   cancel: the macro has a StopOutputs event, so it cancels the current run (not routed)")
		return
	case ActionIgnore:
		fmt.Fprintln(w, "action   ignored: no rule matches and bridge.unmatched.action is ignore")
		return
	case ActionRefuse:
		fmt.Fprintf(w, "action   refused: %s\n", r.Reason)
		if r.Notify != NotifyNone {
			notify += ": the person is told it was not run"
		}
		fmt.Fprintln(w, notify)
		return
	}
	if r.Matched {
		fmt.Fprintf(w, "rule     %s\n", r.Rule)
	} else {
		fmt.Fprintln(w, "rule     none matched: the unmatched action runs it")
	}
	fmt.Fprintf(w, "busy     %s\n", r.busyText)
	fmt.Fprintln(w, notify)
	speak := "no"
	if r.Speak {
		speak = "yes: the answer is spoken"
	}
	fmt.Fprintf(w, "speak    %s\n", speak)
	if r.Action == string(ActionError) {
		told := ""
		if r.Notify != NotifyNone {
			told = "; the person is told"
		}
		fmt.Fprintf(w, "error    %s (the command fails%s)\n", r.Error, told)
		return
	}
	if r.Confined != nil && *r.Confined {
		fmt.Fprintln(w, "files    confined to the Automate server's workspace (restrictToWorkspace)")
	} else if r.Confined != nil {
		fmt.Fprintln(w, "files    NOT confined: the rule sets restrict_to_workspace: false, so its file tools reach every file you can")
	}
	b, _ := json.MarshalIndent(r.Request, "         ", "  ")
	fmt.Fprintf(w, "request  POST /v1/runs (not sent)\n         %s\n", strings.TrimSpace(string(b)))
}
