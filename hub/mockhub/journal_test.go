package mockhub_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/hub/mockhub/mockhubtest"
)

// TestJournalHasEveryCallInOrderWithRedactedPayloads: OAuth, REST, admin
// and hub calls in both directions, in order, with payloads; every secret
// the test minted is absent from the journal, and the payloads show where
// they were.
func TestJournalHasEveryCallInOrderWithRedactedPayloads(t *testing.T) {
	start := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	now := start
	m, ts := newMock(t, mockhub.Config{Now: func() time.Time { return now }})
	admin := &mockhub.AdminClient{BaseURL: ts.URL}
	ctx := context.Background()

	p := newPKCE()
	c := code(t, ts.URL, p)
	a := token(t, ts.URL, codeForm(c, p), false, mockhub.DefaultClientSecret)
	var dev deviceapi.UserDevice
	call(t, "POST", ts.URL+"/api/Device/userDevices/new/mock-controller?name=Journal", a.AccessToken, nil, &dev)
	var tok deviceapi.DeviceToken
	call(t, "POST", ts.URL+"/api/Device/userDevices/"+dev.ID+"/tokens", a.AccessToken, nil, &tok)
	created, err := admin.CreateDevice(ctx, mockhub.CreateDeviceRequest{Name: "other"})
	if err != nil {
		t.Fatal(err)
	}
	neg, err := negotiate(ts.URL, hubHeaders(tok.Token))
	if err != nil {
		t.Fatal(err)
	}
	hc, err := rawDial(t, ts.URL, hubHeaders(tok.Token))
	if err != nil {
		t.Fatal(err)
	}
	hc.invoke("1", "VerifySelf")
	hc.next(wait)
	hc.invoke("2", "NoSuchMethod", 1)
	hc.next(wait)
	now = now.Add(time.Second)
	if _, err := admin.Command(ctx, dev.ID, "water", nil); err != nil {
		t.Fatal(err)
	}
	hc.next(wait) // the push arrived
	// The push is journaled before it is written; wait for the entry
	// rather than assume the order of two goroutines.
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if _, err := m.WaitEvent(wctx, 0, func(e mockhub.Event) bool {
		return e.Direction == mockhub.DirectionOut && e.Action == "DeviceCommand"
	}); err != nil {
		t.Fatalf("the push is not in the journal: %v", err)
	}
	secrets := []string{c, p.verifier, p.challenge, a.AccessToken, a.RefreshToken, tok.Token, created.Token.Token,
		neg.accessToken, mockhub.DefaultClientSecret}

	page, err := admin.Journal(ctx, 0, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(page)
	for _, sec := range secrets {
		if sec != "" && strings.Contains(string(raw), sec) {
			t.Errorf("the journal holds a secret (%d chars)", len(sec))
		}
	}
	var got []string
	for i, e := range page.Events {
		if e.Seq != int64(i+1) || e.Time.IsZero() || (e.Time.Before(start) || e.Time.After(now)) {
			t.Errorf("entry %d: seq %d at %v", i, e.Seq, e.Time)
		}
		got = append(got, e.Source+" "+e.Direction+" "+e.Action)
	}
	want := []string{
		"oauth in authorize", "oauth in token",
		"rest in CreateUserDevice", "rest in CreateDeviceToken",
		"admin in CreateDevice",
		"hub in negotiate-redirect", "hub in service-negotiate", // the test's own negotiate
		"hub in negotiate-redirect", "hub in service-negotiate", "hub in connected", "hub in VerifySelf", "hub in NoSuchMethod",
		"hub out DeviceCommand", "admin in PushCommand",
	}
	// The push goes out while the admin call answers: either order.
	if n := len(got); n == len(want) && got[n-2] == want[n-1] {
		got[n-2], got[n-1] = got[n-1], got[n-2]
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("journal:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	byAction := map[string]mockhub.Event{}
	for _, e := range page.Events {
		byAction[e.Source+" "+e.Direction+" "+e.Action] = e
	}
	// The payloads are there, the secrets redacted in place.
	check := func(key, field, wantIn string) {
		t.Helper()
		e := byAction[key]
		v := string(e.Payload)
		if field == "result" {
			v = string(e.Result)
		}
		if !strings.Contains(v, wantIn) {
			t.Errorf("%s %s = %s, want it to contain %s", key, field, v, wantIn)
		}
	}
	check("oauth in authorize", "payload", `"code_challenge":"[redacted]"`)
	check("oauth in authorize", "result", `"code":"[redacted]"`)
	check("oauth in token", "payload", `"code_verifier":"[redacted]"`)
	check("oauth in token", "payload", `"client_secret":"[redacted]"`)
	check("oauth in token", "result", `"access_token":"[redacted]"`)
	check("rest in CreateUserDevice", "payload", `"name":"Journal"`)
	check("rest in CreateDeviceToken", "result", `"token":"[redacted]"`)
	check("admin in CreateDevice", "payload", `"name":"other"`)
	check("admin in CreateDevice", "result", `"token":"[redacted]"`)
	check("hub in VerifySelf", "result", `"id":"`+dev.ID+`"`)
	check("hub out DeviceCommand", "payload", `["water",{"id":`)
	check("admin in PushCommand", "payload", `{"command":"water"}`)
	check("admin in PushCommand", "result", `{"delivered":1}`)
	if e := byAction["hub in NoSuchMethod"]; e.Error != "Unknown method NoSuchMethod" || e.DeviceID != dev.ID {
		t.Errorf("an unknown method: %+v", e)
	}
	if e := byAction["hub out DeviceCommand"]; e.DeviceID != dev.ID || e.ConnectionID == "" || !e.Time.Equal(now) {
		t.Errorf("the push: %+v", e)
	}

	// One device's entries.
	devPage, _ := admin.Journal(ctx, 0, created.Device.ID, 0)
	if len(devPage.Events) != 1 || devPage.Events[0].Action != "CreateDevice" || devPage.Last != page.Last {
		t.Errorf("the other device's journal: %+v", devPage)
	}
	// Reads of the journal are not journaled.
	if again, _ := admin.Journal(ctx, 0, "", 0); again.Last != page.Last {
		t.Errorf("reading the journal added entries: %d -> %d", page.Last, again.Last)
	}
}

// TestJournalIsABoundedRing: the oldest entries go first, by count and by
// payload bytes; the order and sequence numbers stay; a reader behind the
// ring learns how many it missed.
func TestJournalIsABoundedRing(t *testing.T) {
	s, ts := newMock(t, mockhub.Config{MaxEvents: 5})
	for range 23 { // wraps the ring several times
		call(t, "GET", ts.URL+"/api/Device/userDevices/x", "", nil, nil)
	}
	evs := s.Events(0)
	if len(evs) != 5 {
		t.Fatalf("kept %d entries, want 5", len(evs))
	}
	for i, e := range evs {
		if e.Seq != int64(19+i) {
			t.Errorf("entry %d has seq %d, want %d", i, e.Seq, 19+i)
		}
	}
	admin := &mockhub.AdminClient{BaseURL: ts.URL}
	page, _ := admin.Journal(context.Background(), 10, "", 0)
	if page.Missed != 8 || len(page.Events) != 5 || page.Last != 23 {
		t.Errorf("after 10: missed %d, %d entries, last %d; want 8, 5, 23", page.Missed, len(page.Events), page.Last)
	}

	// The byte bound: big payloads push the old entries out.
	s, ts = newMock(t, mockhub.Config{MaxJournalBytes: 300 << 10})
	dev, _, _ := s.CreateDevice("", "")
	big := strings.Repeat("x", 60<<10)
	for range 10 {
		call(t, "POST", ts.URL+"/mock/devices/"+dev.ID+"/settings", "", map[string]string{"blob": big}, nil)
	}
	evs = s.Events(0)
	if len(evs) < 3 || len(evs) > 5 || evs[len(evs)-1].Seq != 10 {
		t.Errorf("kept %d entries (last %d) under a 300 KiB bound of 60 KiB payloads", len(evs), evs[len(evs)-1].Seq)
	}
	// A payload beyond the cap is kept as its size.
	call(t, "POST", ts.URL+"/mock/devices/"+dev.ID+"/settings", "", map[string]string{"blob": strings.Repeat("y", mockhub.MaxPayloadBytes)}, nil)
	last := s.Events(0)
	if p := string(last[len(last)-1].Payload); p != fmt.Sprintf(`{"truncated":true,"bytes":%d}`, mockhub.MaxPayloadBytes+len(`{"blob":""}`)) {
		t.Errorf("an oversized payload is kept as %.80s", p)
	}
}

// TestJournalStream: the event stream sends the entries after `after`
// (of one device), then new ones live, each with its sequence number as
// id.
func TestJournalStream(t *testing.T) {
	s, ts := newMock(t, mockhub.Config{})
	a, _, _ := s.CreateDevice("", "a")
	b, _, _ := s.CreateDevice("", "b")
	for _, id := range []string{a.ID, b.ID, a.ID} {
		call(t, "POST", ts.URL+"/mock/devices/"+id+"/settings", "", map[string]int{"v": 1}, nil)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+"/mock/journal?"+url.Values{"device": {a.ID}}.Encode(), nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	var ids []string
	next := func() mockhub.Event {
		t.Helper()
		var id string
		for sc.Scan() {
			line := sc.Text()
			if v, ok := strings.CutPrefix(line, "id: "); ok {
				id = v
			}
			if v, ok := strings.CutPrefix(line, "data: "); ok {
				var e mockhub.Event
				if err := json.Unmarshal([]byte(v), &e); err != nil {
					t.Fatal(err)
				}
				ids = append(ids, id)
				return e
			}
		}
		t.Fatalf("the stream ended: %v", sc.Err())
		return mockhub.Event{}
	}
	if e1, e2 := next(), next(); e1.Seq != 1 || e2.Seq != 3 || e1.DeviceID != a.ID || e2.DeviceID != a.ID {
		t.Errorf("the backlog: %d %d", e1.Seq, e2.Seq)
	}
	call(t, "POST", ts.URL+"/mock/devices/"+b.ID+"/settings", "", 1, nil)
	call(t, "POST", ts.URL+"/mock/devices/"+a.ID+"/settings", "", 2, nil)
	if e := next(); e.Seq != 5 || string(e.Payload) != "2" {
		t.Errorf("the live entry: %+v", e)
	}
	if strings.Join(ids, ",") != "1,3,5" {
		t.Errorf("ids %v", ids)
	}
	// An `after` beyond the end follows from the stream's opening (its
	// first line): the next live entry comes, none before it.
	req, _ = http.NewRequestWithContext(ctx, "GET", ts.URL+"/mock/journal?after=1000000", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp2.Body.Close()
	sc = bufio.NewScanner(resp2.Body)
	if !sc.Scan() || sc.Text() != ": mock journal" {
		t.Fatalf("the stream's first line: %q (%v)", sc.Text(), sc.Err())
	}
	call(t, "POST", ts.URL+"/mock/devices/"+a.ID+"/settings", "", 3, nil)
	if e := next(); e.Seq != 6 || string(e.Payload) != "3" {
		t.Errorf("after=1000000 (beyond the end, 5): the first entry shown is %+v, want the live one (6)", e)
	}

	// The client library reads the same stream.
	fctx, fcancel := context.WithCancel(context.Background())
	defer fcancel()
	var seen []int64
	err = (&mockhub.AdminClient{BaseURL: ts.URL}).FollowJournal(fctx, 2, "", func(e mockhub.Event) error {
		seen = append(seen, e.Seq)
		if e.Seq == 5 {
			fcancel()
		}
		return nil
	}, nil)
	if len(seen) != 3 || seen[0] != 3 || seen[2] != 5 {
		t.Errorf("FollowJournal saw %v (%v)", seen, err)
	}
}

// TestAdminIndex: GET /mock lists every admin route, as JSON or as a page.
func TestAdminIndex(t *testing.T) {
	s, ts := newMock(t, mockhub.Config{})
	var idx mockhub.AdminIndex
	if st, _, body := call(t, "GET", ts.URL+"/mock", "", nil, &idx); st != 200 || len(idx.Routes) != len(s.AdminRoutes()) {
		t.Fatalf("GET /mock: %d %s", st, body)
	}
	names := map[string]bool{}
	for _, r := range idx.Routes {
		names[r.Method+" "+r.Path] = true
	}
	for _, want := range []string{"POST /mock/devices/{id}/command", "GET /mock/journal", "GET /mock/console", "POST /mock/faults"} {
		if !names[want] {
			t.Errorf("the index lacks %s", want)
		}
	}
	req, _ := http.NewRequest("GET", ts.URL+"/mock", nil)
	req.Header.Set("Accept", "text/html,application/xhtml+xml")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	bufio.NewReader(resp.Body).WriteTo(&b)
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(b.String(), "/mock/devices/{id}/command") {
		t.Errorf("the HTML index: %s %.200s", resp.Header.Get("Content-Type"), b.String())
	}
	// The index, the console and the journal answer the loopback only, by
	// Host too (DNS rebinding).
	for _, path := range []string{"/mock", "/mock/console", "/mock/console/console.js", "/mock/journal"} {
		req, _ := http.NewRequest("GET", ts.URL+path, nil)
		req.Host = "rebind.example"
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s under a foreign Host: %d", path, resp.StatusCode)
		}
	}
	if st, h, _ := call(t, "GET", ts.URL+"/mock/console/console.js", "", nil, nil); st != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/javascript") {
		t.Errorf("console.js: %d %s", st, h.Get("Content-Type"))
	}
	if st, _, _ := call(t, "GET", ts.URL+"/mock/console/secret.txt", "", nil, nil); st != 404 {
		t.Errorf("an unknown console file: %d", st)
	}
}

// TestAdminEntryTellsWhereTheCallBegan: an admin call is entered once it
// answered, after the push it made; its Began is the journal's end when
// it began, before the push's entry, so a recorder can put the cause
// first.
func TestAdminEntryTellsWhereTheCallBegan(t *testing.T) {
	s, ts := newMock(t, mockhub.Config{})
	dev, tok, _ := s.CreateDevice("", "")
	if _, err := rawDial(t, ts.URL, hubHeaders(tok.Token)); err != nil {
		t.Fatal(err)
	}
	mockhubtest.WaitEvent(t, s, 0, "the connection", action("connected", dev.ID))
	before := lastSeq(s)
	if _, err := (&mockhub.AdminClient{BaseURL: ts.URL}).Send(context.Background(), dev.ID, mockhub.CommandRequest{Command: "jump"}); err != nil {
		t.Fatal(err)
	}
	out := mockhubtest.WaitEvent(t, s, before, "the push", func(e mockhub.Event) bool {
		return e.Direction == mockhub.DirectionOut && e.Action == "DeviceCommand"
	})
	call := mockhubtest.WaitEvent(t, s, before, "the admin entry", func(e mockhub.Event) bool {
		return e.Source == mockhub.SourceAdmin && e.Action == "PushCommand"
	})
	if call.Began != before || call.Began >= out.Seq {
		t.Errorf("the admin entry (seq %d) began at %d; want %d, before the push's entry (seq %d)", call.Seq, call.Began, before, out.Seq)
	}
}
