package mockhub

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/hubgate/hubgate/internal/localhttp"
)

// journalKeepAlive is how often an idle journal stream sends a comment.
const journalKeepAlive = 15 * time.Second

// journalAdmin journals a state-changing admin call: its JSON body, its
// answer, its status and the device it names.
func (s *Server) journalAdmin(name string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := &capBuffer{}
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = struct {
				io.Reader
				io.Closer
			}{io.TeeReader(r.Body, body), r.Body}
		}
		cw := &capturingWriter{statusWriter: statusWriter{ResponseWriter: w}}
		began := s.events.last()
		next.ServeHTTP(cw, r)
		ev := Event{Source: SourceAdmin, Action: name, DeviceID: chi.URLParam(r, "id"), Status: cw.status,
			Payload: body.payload(), Result: cw.body.payload(), Began: began}
		if q := r.URL.Query(); len(q) > 0 {
			ev.Args = map[string]any{}
			for k := range q {
				ev.Args[k] = q.Get(k)
			}
		}
		if t := chi.URLParam(r, "tokenId"); t != "" {
			ev.TokenID = t
		}
		if ev.DeviceID == "" && cw.status < 300 { // a new device (CreateDevice), a token's device (DisableToken)
			var named struct {
				Device struct{ ID string } `json:"device"`
				Token  struct {
					ID           string `json:"id"`
					UserDeviceID string `json:"userDeviceId"`
				} `json:"token"`
			}
			if json.Unmarshal(cw.body.Bytes(), &named) == nil {
				ev.DeviceID = cmp.Or(named.Device.ID, named.Token.UserDeviceID)
				ev.TokenID = cmp.Or(ev.TokenID, named.Token.ID)
			}
		}
		if cw.status >= 400 {
			var p Problem
			if json.Unmarshal(cw.body.Bytes(), &p) == nil {
				ev.Error = p.Detail
			}
		}
		s.record(ev)
	})
}

// capBuffer keeps the first MaxPayloadBytes bytes written to it and
// counts them all.
type capBuffer struct {
	bytes.Buffer
	total int
}

func (b *capBuffer) Write(p []byte) (int, error) {
	b.total += len(p)
	if room := MaxPayloadBytes - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// payload is what was written as journal JSON (see rawPayload).
func (b *capBuffer) payload() json.RawMessage {
	if b.total > MaxPayloadBytes {
		return truncatedPayload(b.total)
	}
	return rawPayload(b.Bytes())
}

// capturingWriter remembers an answer's status and its first bytes.
type capturingWriter struct {
	statusWriter
	body capBuffer
}

func (w *capturingWriter) Write(b []byte) (int, error) {
	w.body.Write(b)
	return w.statusWriter.Write(b)
}

// adminJournal answers GET /mock/journal (and /mock/events): a page of
// entries after a sequence number, of one device or all, waiting for one
// when asked; or, for Accept: text/event-stream, a stream that follows the
// journal live.
func (s *Server) adminJournal(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var after int64
	for _, name := range []string{"after", "since"} {
		if v := q.Get(name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				writeProblem(w, http.StatusBadRequest, name+" must be a sequence number >= 0")
				return
			}
			after = n
		}
	}
	device := q.Get("device")
	if strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		if v := r.Header.Get("Last-Event-ID"); v != "" { // an EventSource resuming
			if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
				after = n
			}
		}
		s.followJournal(w, r, after, device)
		return
	}
	if v := q.Get("wait"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || d > time.Minute {
			writeProblem(w, http.StatusBadRequest, "wait must be a duration between 0s and 1m")
			return
		}
		timer := time.NewTimer(d)
		defer timer.Stop()
	wait:
		for {
			evs, _, _, next := s.events.since(after, device)
			if len(evs) > 0 {
				break
			}
			select {
			case <-next:
			case <-timer.C:
				break wait
			case <-r.Context().Done(): // Close does not answer a long poll: the server's shutdown cuts it
				return
			}
		}
	}
	evs, last, missed, _ := s.events.since(after, device)
	if evs == nil {
		evs = []Event{}
	}
	writeJSON(w, http.StatusOK, EventsPage{Events: evs, Last: last, Missed: missed})
}

// followJournal streams the journal's entries after `after` as server-sent
// events (id: the sequence number; data: the entry's JSON), then each new
// one as it is entered, until the client leaves or the mock closes. When
// the ring dropped entries the client has not seen, a "gap" event says how
// many ({"missed": N}). An `after` beyond the journal's end follows from
// now: from the last entry when the stream opened, which its first line
// (the comment "mock journal") marks, so that every entry entered once a
// client has read that line reaches it.
func (s *Server) followJournal(w http.ResponseWriter, r *http.Request, after int64, device string) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	if last := s.events.last(); after > last {
		after = last
	}
	st := localhttp.NewEventStream(w)
	if err := st.Comment("mock journal"); err != nil {
		return
	}
	tick := time.NewTicker(journalKeepAlive)
	defer tick.Stop()
	for {
		evs, last, missed, next := s.events.since(after, device)
		if missed > 0 {
			if st.Event("", "gap", fmt.Appendf(nil, `{"missed":%d}`, missed)) != nil {
				return
			}
		}
		for _, e := range evs {
			b, _ := json.Marshal(e)
			if st.Event(strconv.FormatInt(e.Seq, 10), "", b) != nil {
				return
			}
		}
		after = last
		select {
		case <-next:
		case <-tick.C:
			if st.Comment("keep-alive") != nil {
				return
			}
		case <-r.Context().Done():
			return
		case <-s.hubCtx.Done():
			return
		}
	}
}

// adminIndex answers GET /mock: the admin API's routes, as JSON, or as a
// page for a browser (Accept: text/html).
func (s *Server) adminIndex(w http.ResponseWriter, r *http.Request) {
	routes := s.AdminRoutes()
	if !strings.Contains(r.Header.Get("Accept"), "text/html") {
		writeJSON(w, http.StatusOK, AdminIndex{Routes: routes})
		return
	}
	var b strings.Builder
	b.WriteString(`<!doctype html><html lang="en"><meta charset="utf-8"><title>hubgate mock: admin API</title>` +
		`<style>body{font:14px system-ui,sans-serif;margin:2em;max-width:70em}td{padding:.2em .8em;vertical-align:top}code{font-size:13px}</style>` +
		`<h1>hubgate mock: admin API</h1><p>Loopback peers only. <a href="/mock/console">Hub console</a> · <a href="/swagger">API explorer</a></p><table>`)
	for _, rt := range routes {
		path := html.EscapeString(rt.Path)
		if rt.Method == http.MethodGet && !strings.Contains(rt.Path, "{") {
			path = `<a href="` + path + `">` + path + `</a>`
		}
		fmt.Fprintf(&b, "<tr><td><code>%s</code></td><td><code>%s</code></td><td>%s</td></tr>", rt.Method, path, html.EscapeString(rt.Summary))
	}
	b.WriteString("</table></html>\n")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	io.WriteString(w, b.String())
}

var errNoAsset = errors.New("no such console file")
