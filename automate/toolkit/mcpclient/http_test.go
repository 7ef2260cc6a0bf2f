package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/hubgate/hubgate/internal/localhttp"
	"github.com/hubgate/hubgate/internal/testutil"
)

// seenRequest is what a fake HTTP server recorded of one request.
type seenRequest struct {
	method, session, version, accept, contentType string
	msg                                           wireMsg
}

type recorder struct {
	mu   sync.Mutex
	reqs []seenRequest
}

func (r *recorder) record(req *http.Request) wireMsg {
	var m wireMsg
	if req.Body != nil {
		b, _ := io.ReadAll(req.Body)
		json.Unmarshal(b, &m)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, seenRequest{req.Method, req.Header.Get("Mcp-Session-Id"), req.Header.Get("MCP-Protocol-Version"), req.Header.Get("Accept"), req.Header.Get("Content-Type"), m})
	return m
}

func (r *recorder) all() []seenRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]seenRequest(nil), r.reqs...)
}

func initResult(m wireMsg, version string) string {
	return result(m, `{"protocolVersion":"`+version+`","capabilities":{},"serverInfo":{"name":"fake","version":"1"}}`)
}

func TestStreamableHTTPSessionHeadersAndEventStreamAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		hc := testutil.ServePipe(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			m := rec.record(r)
			switch {
			case r.Method == http.MethodDelete:
				w.WriteHeader(http.StatusMethodNotAllowed)
			case m.Method == "initialize":
				w.Header().Set("Mcp-Session-Id", "sess-1")
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, initResult(m, "2025-06-18"))
			case len(m.ID) == 0 || m.Method == "": // notifications and our answers
				w.WriteHeader(http.StatusAccepted)
			case m.Method == "tools/call":
				// The answer stream carries a notification and a request of
				// the server's before the response.
				es := localhttp.NewEventStream(w)
				es.Data([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`))
				es.Event("", "message", []byte(`{"jsonrpc":"2.0","id":"srv-1","method":"roots/list"}`))
				es.Event("", "message", []byte(result(m, `{"content":[{"type":"text","text":"done"}]}`)))
			}
		}))
		tr := &StreamableHTTP{URL: "http://mcp.test/mcp", HTTPClient: hc}
		s, err := Connect(context.Background(), tr, Options{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.CallTool(context.Background(), "t", nil)
		if err != nil || res.Content[0].Text != "done" {
			t.Fatalf("%+v %v", res, err)
		}
		synctest.Wait() // the answer to roots/list
		s.Close()
		reqs := rec.all()
		if len(reqs) != 5 {
			t.Fatalf("%d requests: %+v", len(reqs), reqs)
		}
		first := reqs[0]
		if first.msg.Method != "initialize" || first.session != "" || first.version != "" ||
			first.accept != "application/json, text/event-stream" || first.contentType != "application/json" {
			t.Fatalf("initialize request %+v", first)
		}
		var answer *seenRequest
		for i, r := range reqs[1:] {
			if r.session != "sess-1" || r.version != "2025-06-18" {
				t.Errorf("request %d without the session's headers: %+v", i+1, r)
			}
			if string(r.msg.ID) == `"srv-1"` {
				answer = &reqs[i+1]
			}
		}
		if reqs[1].msg.Method != "notifications/initialized" || reqs[2].msg.Method != "tools/call" {
			t.Errorf("order: %+v", reqs)
		}
		if answer == nil || answer.msg.Error == nil || answer.msg.Error.Code != CodeMethodNotFound {
			t.Errorf("roots/list answered %+v", answer)
		}
		if last := reqs[4]; last.method != http.MethodDelete || last.session != "sess-1" {
			t.Errorf("close did not DELETE the session: %+v", last)
		}
	})
}

func TestStreamableHTTPFailures(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		answer     func(w http.ResponseWriter, m wireMsg)
		max        int
		is         error
	}{
		{name: "stream ends before the response", want: "ended its event stream before answering", answer: func(w http.ResponseWriter, m wireMsg) {
			localhttp.NewEventStream(w).Data([]byte(`{"jsonrpc":"2.0","method":"notifications/progress"}`))
		}},
		{name: "oversize JSON answer", max: 300, is: ErrMessageTooLarge, answer: func(w http.ResponseWriter, m wireMsg) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, result(m, `{"tools":[{"name":"`+strings.Repeat("x", 400)+`"}]}`))
		}},
		{name: "oversize event", max: 300, is: ErrMessageTooLarge, answer: func(w http.ResponseWriter, m wireMsg) {
			localhttp.NewEventStream(w).Data([]byte(result(m, `{"tools":[{"name":"`+strings.Repeat("x", 400)+`"}]}`)))
		}},
		{name: "expired session", want: "no longer knows this session", answer: func(w http.ResponseWriter, m wireMsg) {
			http.Error(w, "session not found", http.StatusNotFound)
		}},
		{name: "accepted without an answer", want: "without answering", answer: func(w http.ResponseWriter, m wireMsg) {
			w.WriteHeader(http.StatusAccepted)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				hc := testutil.ServePipe(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					m := (&recorder{}).record(r)
					switch {
					case m.Method == "initialize":
						w.Header().Set("Mcp-Session-Id", "s")
						w.Header().Set("Content-Type", "application/json")
						io.WriteString(w, initResult(m, "2024-11-05"))
					case m.Method == "tools/list":
						tc.answer(w, m)
					default:
						w.WriteHeader(http.StatusAccepted)
					}
				}))
				s, err := Connect(context.Background(), &StreamableHTTP{URL: "http://mcp.test/mcp", HTTPClient: hc}, Options{MaxMessageSize: tc.max})
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				_, err = s.ListTools(context.Background())
				if err == nil || (tc.is != nil && !errors.Is(err, tc.is)) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("%v", err)
				}
				if s.Err() != nil {
					t.Fatalf("one failed exchange ended the session: %v", s.Err())
				}
			})
		})
	}
}

// TestTransportErrorsLeaveTheURLOut: a server's URL may carry a key in its
// query; an error of the HTTP client does not repeat it.
func TestTransportErrorsLeaveTheURLOut(t *testing.T) {
	refuse := &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
		return nil, errors.New("connection refused")
	})}
	const u = "http://mcp.invalid/mcp?api_key=sekrit-123"
	for _, tr := range []Transport{&StreamableHTTP{URL: u, HTTPClient: refuse}, &SSE{URL: u, HTTPClient: refuse}} {
		_, err := Connect(context.Background(), tr, Options{})
		if err == nil || !strings.Contains(err.Error(), "connection refused") || strings.Contains(err.Error(), "sekrit") {
			t.Errorf("%T: %v", tr, err)
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestStreamableHTTPCancelledCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		release := make(chan struct{})
		hc := testutil.ServePipe(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			m := rec.record(r)
			switch m.Method {
			case "initialize":
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, initResult(m, "2025-06-18"))
			case "tools/call":
				es := localhttp.NewEventStream(w)
				es.Comment("working")
				select { // answers only once the test lets it
				case <-release:
				case <-r.Context().Done():
				}
			default:
				w.WriteHeader(http.StatusAccepted)
			}
		}))
		s, err := Connect(context.Background(), &StreamableHTTP{URL: "http://mcp.test/mcp", HTTPClient: hc}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer close(release)
		defer s.Close()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := s.CallTool(ctx, "slow", nil)
			done <- err
		}()
		synctest.Wait()
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("%v", err)
		}
		synctest.Wait()
		reqs := rec.all()
		last := reqs[len(reqs)-1].msg
		var p struct{ RequestID json.RawMessage }
		json.Unmarshal(last.Params, &p)
		if last.Method != "notifications/cancelled" || string(p.RequestID) != string(reqs[2].msg.ID) {
			t.Fatalf("last request %+v (call %s)", last, reqs[2].msg.ID)
		}
	})
}
