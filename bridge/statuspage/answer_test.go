package statuspage_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/statuspage"
)

// pageEvents reads the page's event stream (/api/events) as a browser of
// the session does, and hands each bridge event on.
func pageEvents(t *testing.T, page *statuspage.Server, cookie string) <-chan bridge.Event {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", "http://"+page.Addr().String()+"/api/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Cookie", cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/api/events: %s", resp.Status)
	}
	out := make(chan bridge.Event, 100)
	go func() {
		defer resp.Body.Close()
		defer close(out)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var e bridge.Event
			if json.Unmarshal([]byte(data), &e) == nil {
				out <- e
			}
		}
	}()
	return out
}

// post sends a JSON body to the page.
func post(t *testing.T, page *statuspage.Server, path, body string, header http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequest("POST", "http://"+page.Addr().String()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The agent's question reaches the page's event stream and its state; the
// answer box (POST /api/answer, with the session's CSRF token) answers it
// and the run's answer carries the reply.
func TestTheAnswerBoxAnswersTheAgentsQuestion(t *testing.T) {
	b, fh, _ := startBridge(t)
	page := servePage(t, b)
	cookie, csrf := newSession(t, page)
	origin := "http://" + page.Addr().String()
	events := pageEvents(t, page, cookie)

	if code, body := post(t, page, "/api/answer", `{"text":"blue"}`, http.Header{"Cookie": {cookie}, "X-Hubgate-CSRF": {csrf}, "Origin": {origin}}); code != http.StatusConflict ||
		!strings.Contains(body, "no question is waiting") {
		t.Errorf("an answer without a question: %d %s", code, body)
	}
	fh.command("pick")
	var q bridge.Event
	for e := range events {
		if e.Kind == bridge.EventQuestion {
			q = e
			break
		}
	}
	if q.Question != "Which colour?" || strings.Join(q.Choices, "|") != "red|blue" || q.Deadline == nil {
		t.Fatalf("question on the page's stream: %+v", q)
	}
	_, state := request(t, page, "GET", "/api/state", "", http.Header{"Cookie": {cookie}})
	if !strings.Contains(state, `"question":{"question":"Which colour?","choices":["red","blue"]`) {
		t.Errorf("/api/state does not show the pending question: %s", state)
	}
	if code, body := post(t, page, "/api/answer", `{"text":"blue"}`, http.Header{"Cookie": {cookie}, "Origin": {origin}}); code != http.StatusForbidden {
		t.Errorf("an answer without the CSRF token: %d %s, want 403", code, body)
	}
	if code, body := post(t, page, "/api/answer", `{"text":"  "}`, http.Header{"Cookie": {cookie}, "X-Hubgate-CSRF": {csrf}, "Origin": {origin}}); code != http.StatusBadRequest {
		t.Errorf("a blank answer: %d %s, want 400", code, body)
	}
	code, body := post(t, page, "/api/answer", `{"text":"blue"}`, http.Header{"Cookie": {cookie}, "X-Hubgate-CSRF": {csrf}, "Origin": {origin}})
	if code != http.StatusOK || !strings.Contains(body, `"answered":true`) {
		t.Fatalf("answer: %d %s", code, body)
	}
	var answered bool
	for e := range events {
		switch e.Kind {
		case bridge.EventAnswered:
			answered = e.Reply == "blue" && e.Note == "status page"
		case bridge.EventFinished:
			if !answered || e.Answer != "you chose blue" {
				t.Fatalf("finished %+v (answered event seen: %v)", e, answered)
			}
			return
		}
	}
	t.Fatal("the event stream ended before the run finished")
}
