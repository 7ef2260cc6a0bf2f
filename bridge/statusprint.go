package bridge

import (
	"fmt"
	"io"
	"time"
)

// WriteText writes the status as `hubgate status` shows it: one labelled
// line per part, times local.
func (st Status) WriteText(w io.Writer) {
	hub := st.Hub.Status
	if st.Hub.Reason != "" {
		hub += " (" + st.Hub.Reason + ")"
	}
	if st.Hub.NeedsRepair {
		hub += "; " + RepairHint
	}
	automateLine := st.Automate.Mode + " " + st.Automate.Endpoint
	if st.Automate.Product != "" {
		automateLine += " (product " + st.Automate.Product + ")"
	}
	fmt.Fprintf(w, "device     %s\nhub        %s\nlistening  %s\nautomate   %s\nuptime     %s\n",
		st.DeviceID, hub, listeningLine(st), automateLine, (time.Duration(st.UptimeMs) * time.Millisecond).Round(time.Second))
	if st.Current != nil {
		fmt.Fprintf(w, "current    #%d %q (rule %s) %s since %s\n", st.Current.CommandID, st.Current.Command, st.Current.Rule,
			st.Current.Status, st.Current.StartedAt.Local().Format(time.TimeOnly))
		if q := st.Current.Question; q != nil {
			fmt.Fprintf(w, "question   %q: answer by %s (hubgate answer TEXT, or your next command)\n", q.Question,
				q.Deadline.Local().Format(time.TimeOnly))
		}
	} else {
		fmt.Fprintln(w, "current    none")
	}
	if st.WaitingForServer {
		fmt.Fprintln(w, "waiting    a run hubgate did not start holds the Automate server")
	}
	fmt.Fprintf(w, "queue      %d waiting\n", len(st.Queue))
	for _, q := range st.Queue {
		fmt.Fprintf(w, "           #%d %q (rule %s) since %s\n", q.CommandID, q.Command, q.Rule, q.QueuedAt.Local().Format(time.TimeOnly))
	}
	c := st.Counters
	fmt.Fprintf(w, "counts     received %d, started %d, completed %d, failed %d, queued %d, answers %d, refused %d, duplicates %d, dropped %d, ignored %d, abandoned %d, canceled %d, unrecorded %d\n",
		c.Received, c.Started, c.Completed, c.Failed, c.Queued, c.Answers, c.Refused, c.Duplicates, c.Dropped, c.Ignored, c.Abandoned, c.Canceled, c.Unrecorded)
	first := true
	for _, name := range []string{"started", "queued", "answer", "refused", "duplicates", "failed", "dropped", "ignored", "abandoned", "unrecorded"} {
		r, ok := c.Last[name]
		if !ok {
			continue
		}
		label := ""
		if first {
			label, first = "last", false
		}
		cmd := fmt.Sprintf("%q", r.Command)
		if r.CommandID != 0 {
			cmd = fmt.Sprintf("#%d %s", r.CommandID, cmd)
		}
		reason := r.Reason
		if reason == "" {
			reason = "(no reason recorded)"
		}
		fmt.Fprintf(w, "%-10s %-10s %s %s: %s\n", label, name, r.At.Local().Format(time.TimeOnly), cmd, reason)
	}
	for _, n := range st.Notifications {
		fmt.Fprintf(w, "notify     %s [%s] %s\n", n.At.Local().Format(time.TimeOnly), n.Level, n.Message)
	}
}

// listeningLine says whether commands are acted on, and what the hub
// asked (which is not the connection's state).
func listeningLine(st Status) string {
	out := "yes: commands are acted on"
	if !st.Listening {
		out = "no: commands are refused"
	}
	if a := st.HubAsked; a != nil {
		asked := "to start listening"
		if !a.Listen {
			asked = "to stop listening"
		}
		out += fmt.Sprintf("; the hub asked %s at %s", asked, a.At.Local().Format(time.TimeOnly))
	}
	if st.ListeningPolicy != "" {
		out += " (bridge.listening: " + st.ListeningPolicy + ")"
	}
	return out
}
