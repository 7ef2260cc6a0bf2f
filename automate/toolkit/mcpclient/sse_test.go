package mcpclient

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/hubgate/hubgate/internal/localhttp"
	"github.com/hubgate/hubgate/internal/testutil"
)

// fakeSSE is a legacy HTTP+SSE server: GET /sse names endpoint, messages
// POSTed there are answered on the stream by reply.
type fakeSSE struct {
	endpoint string
	reply    func(m wireMsg) string // "" : no answer
	rec      recorder

	mu      sync.Mutex
	stream  chan string // to the GET stream; closed to end it
	streams int
}

func (f *fakeSSE) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		f.rec.record(r)
		f.mu.Lock()
		f.streams++
		ch := f.stream
		f.mu.Unlock()
		es := localhttp.NewEventStream(w)
		es.Comment("hello")
		es.Event("", "endpoint", []byte(f.endpoint))
		for {
			select {
			case msg, ok := <-ch:
				if !ok {
					return
				}
				es.Event("", "message", []byte(msg))
			case <-r.Context().Done():
				return
			}
		}
	}
	m := f.rec.record(r)
	w.WriteHeader(http.StatusAccepted)
	var ans string
	if m.Method == "initialize" {
		ans = initResult(m, "2024-11-05")
	} else if f.reply != nil {
		ans = f.reply(m)
	}
	if ans != "" {
		f.stream <- ans
	}
}

func newFakeSSE(endpoint string, reply func(m wireMsg) string) *fakeSSE {
	return &fakeSSE{endpoint: endpoint, reply: reply, stream: make(chan string, 10)}
}

func TestSSERelativeEndpoint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeSSE("/messages?session=42", func(m wireMsg) string {
			if m.Method == "tools/list" {
				return result(m, `{"tools":[{"name":"echo"}]}`)
			}
			return ""
		})
		hc := testutil.ServePipe(t, f)
		s, err := Connect(context.Background(), &SSE{URL: "http://mcp.test:8080/sse", HTTPClient: hc}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		tools, err := s.ListTools(context.Background())
		if err != nil || len(tools) != 1 || tools[0].Name != "echo" {
			t.Fatalf("%+v %v", tools, err)
		}
		s.Close()
		reqs := f.rec.all()
		if reqs[0].method != http.MethodGet || reqs[0].accept != "text/event-stream" {
			t.Fatalf("stream request %+v", reqs[0])
		}
		var methods []string
		for _, r := range reqs[1:] {
			if r.method != http.MethodPost || r.contentType != "application/json" {
				t.Errorf("message request %+v", r)
			}
			methods = append(methods, r.msg.Method)
		}
		if strings.Join(methods, ",") != "initialize,notifications/initialized,tools/list" {
			t.Fatalf("posted %v", methods)
		}
	})
}

func TestSSEPostsToTheNamedEndpoint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var posted []string
		f := newFakeSSE("http://mcp.test:8080/other/path?s=1", nil)
		hc := testutil.ServePipe(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				mu.Lock()
				posted = append(posted, r.Host+r.URL.RequestURI())
				mu.Unlock()
			}
			f.ServeHTTP(w, r)
		}))
		s, err := Connect(context.Background(), &SSE{URL: "http://mcp.test:8080/sse", HTTPClient: hc}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		mu.Lock()
		defer mu.Unlock()
		if len(posted) != 2 || posted[0] != "mcp.test:8080/other/path?s=1" {
			t.Fatalf("posted to %v", posted)
		}
	})
}

func TestSSERefusesAnotherOrigin(t *testing.T) {
	for _, ep := range []string{"http://evil.test:8080/messages", "https://mcp.test:8080/messages", "http://mcp.test:9090/messages", "//evil.test/messages"} {
		t.Run(ep, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFakeSSE(ep, nil)
				hc := testutil.ServePipe(t, f)
				_, err := Connect(context.Background(), &SSE{URL: "http://mcp.test:8080/sse", HTTPClient: hc}, Options{})
				if err == nil || !strings.Contains(err.Error(), "another origin") {
					t.Fatalf("%v", err)
				}
				if reqs := f.rec.all(); len(reqs) != 1 {
					t.Fatalf("a message went out: %+v", reqs)
				}
			})
		})
	}
}

func TestSSEStreamEndFailsPendingCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var f *fakeSSE
		f = newFakeSSE("/messages", func(m wireMsg) string {
			if m.Method == "tools/call" {
				close(f.stream) // the server goes away instead of answering
			}
			return ""
		})
		hc := testutil.ServePipe(t, f)
		s, err := Connect(context.Background(), &SSE{URL: "http://mcp.test/sse", HTTPClient: hc}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		_, err = s.CallTool(context.Background(), "x", nil)
		if !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "ended the event stream") {
			t.Fatalf("%v", err)
		}
	})
}

func TestSSEConnectBoundedByContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hc := testutil.ServePipe(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			localhttp.NewEventStream(w).Comment("never an endpoint")
			<-r.Context().Done()
		}))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := Connect(ctx, &SSE{URL: "http://mcp.test/sse", HTTPClient: hc}, Options{})
			done <- err
		}()
		synctest.Wait()
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("%v", err)
		}
	})
}
