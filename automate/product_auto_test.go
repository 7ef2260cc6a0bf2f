package automate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// newerAppHandler answers as the desktop application's newer Automate
// server does (the vendor's docs/api-cheatsheet.md at a34cc04, product word
// word): /health shaped as the cheatsheet's example (fewer fields than our
// spec, plus fields this client does not know), /v1/models entries with
// mode, 413 for a body over 1 MiB (body: whatever tooLarge writes), and
// the chat extension object and record under the product word.
func newerAppHandler(word string, tooLarge http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+testKey {
			envelope(w, 401, ErrTypeAuthentication, "Unauthorized")
			return
		}
		body, _ := io.ReadAll(r.Body)
		switch {
		case len(body) > MaxBodyBytes:
			tooLarge(w, r)
		case r.URL.Path == "/health":
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			fmt.Fprintf(w, `{"status":"ok","service":%q,"workflowStatus":"idle","busy":false,
				"awaitingToolResults":false,"modelName":"gemma-4-4b-it-Q4_K_M.gguf","workspace":"C:\\ws","contextSize":16384,
				"backend":{"accelerator":"vulkan","cpuFallback":false},"activeRequestId":null,
				"speech":{"listening":false,"engine":"whisper"},"settingsVersion":3}`, AgentID(word))
		case r.URL.Path == "/v1/models":
			writeJSON(w, 200, map[string]any{"object": "list", "data": []map[string]any{
				{"id": AgentID(word), "object": "model", "owned_by": word, "mode": "assistant"},
				{"id": ModelID(word), "object": "model", "owned_by": word, "mode": "model"},
			}})
		case r.URL.Path == "/v1/chat/completions":
			var req map[string]json.RawMessage
			if json.Unmarshal(body, &req) != nil || len(req[word]) == 0 {
				envelope(w, 400, ErrTypeInvalidRequest, "the extension object is missing under "+word)
				return
			}
			comp := completion("automate-run-newer", FinishStop, "newer answer")
			rec := comp.Service
			comp.Service = nil
			b, _ := json.Marshal(comp)
			var out map[string]any
			json.Unmarshal(b, &out)
			out[word] = rec
			writeJSON(w, 200, out)
		default:
			envelope(w, 404, ErrTypeNotFound, "Not found")
		}
	}
}

// bigRequest is a run request whose body is over the contract's 1 MiB.
func bigRequest() RunRequest {
	return RunRequest{Prompt: strings.Repeat("x", MaxBodyBytes+1)}
}

// TestTooLargeIsInvalidRequest: the newer server's 413 is the spec's 400
// for a body over 1 MiB, whatever its body says.
func TestTooLargeIsInvalidRequest(t *testing.T) {
	for _, tc := range []struct {
		name, msg string
		write     http.HandlerFunc
	}{
		{"envelope of the spec's type", "Request body exceeds 1 MiB", func(w http.ResponseWriter, _ *http.Request) {
			envelope(w, 413, ErrTypeInvalidRequest, "Request body exceeds 1 MiB")
		}},
		{"envelope of another type", "too large", func(w http.ResponseWriter, _ *http.Request) {
			envelope(w, 413, "payload_too_large", "too large")
		}},
		{"error as a string", "request body too large", func(w http.ResponseWriter, _ *http.Request) {
			writeJSON(w, 413, map[string]any{"error": "PayloadTooLargeError: request entity too large"})
		}},
		{"plain text", "request body too large", func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "Payload Too Large", 413)
		}},
		{"empty", "request body too large", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(413)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, map[string]http.HandlerFunc{
				"POST /v1/runs":             newerAppHandler("cephable", tc.write),
				"POST /v1/chat/completions": newerAppHandler("cephable", tc.write),
			})
			c := f.client(ClientOptions{Product: "cephable"})
			rec, err := c.Run(context.Background(), bigRequest())
			big := NewChatRequest(strings.Repeat("y", MaxBodyBytes+1))
			big.Service = &ChatService{ThinkingLevel: "low"}
			comp, chatErr := c.Chat(context.Background(), big)
			for route, err := range map[string]error{"run": err, "chat": chatErr} {
				var ae *APIError
				if !errors.As(err, &ae) || ae.HTTPStatus != 413 || !strings.Contains(ae.Message, tc.msg) {
					t.Fatalf("%s: want *APIError 413 saying %q, got %T %v", route, tc.msg, err, err)
				}
				if !errors.Is(err, ErrInvalidRequest) {
					t.Errorf("%s: %v does not match ErrInvalidRequest", route, err)
				}
				for _, not := range []error{ErrRunTimedOut, ErrRunFailed, ErrBusy, ErrUnauthorized} {
					if errors.Is(err, not) {
						t.Errorf("%s: %v matches %v", route, err, not)
					}
				}
			}
			if rec != nil || comp != nil {
				t.Fatalf("a refused request returned %v %v", rec, comp)
			}
			if f.count("POST /v1/automate/cancel") != 0 || f.count("GET /health") != 0 {
				t.Fatal("a refused request must not trigger a cancel")
			}
		})
	}
	// Our spec's 400 for the same body is the same sentinel.
	f := newFake(t, map[string]http.HandlerFunc{"POST /v1/runs": func(w http.ResponseWriter, _ *http.Request) {
		envelope(w, 400, ErrTypeInvalidRequest, "Request body exceeds 1 MiB")
	}})
	if _, err := f.client(ClientOptions{}).Run(context.Background(), bigRequest()); !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("400: %v", err)
	}
}

// TestNewerAppModelsAndChat: the client reads /v1/models with mode entries
// and speaks the chat extension under the word discovery found.
func TestNewerAppModelsAndChat(t *testing.T) {
	ports := listenRoles(t, newerAgent)
	d, err := Discover(context.Background(), DiscoverOptions{Key: testKey, Product: ProductAuto, Ports: ports})
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewClient(ClientOptions{BaseURL: d.BaseURL, Key: testKey, Product: d.Product})
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.Models(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []ModelEntry{{ID: "cephable-agent", Object: "model", OwnedBy: "cephable", Mode: "assistant"},
		{ID: "cephable-model", Object: "model", OwnedBy: "cephable", Mode: "model"}}
	if !slices.Equal(m.Data, want) {
		t.Fatalf("models %+v", m.Data)
	}
	req := NewChatRequest("hello")
	req.Service = &ChatService{ThinkingLevel: "low"}
	comp, err := c.Chat(context.Background(), req)
	if err != nil || comp.Text() != "newer answer" || comp.Service == nil || comp.Service.RequestID != "automate-run-newer" {
		t.Fatalf("chat %+v %v", comp, err)
	}
	h, err := c.Health(context.Background())
	if err != nil || h.Service != "cephable-agent" || !h.Ready() {
		t.Fatalf("health %+v %v", h, err)
	}
}

// TestDiscoverAuto: with ProductAuto, the lowest port whose /health has the
// contract's shape wins, whatever its word; telemetry collectors (404,
// non-JSON 200), JSON that only says "-agent", and a server rejecting the
// key are swept past.
func TestDiscoverAuto(t *testing.T) {
	ports := listenRoles(t, otelCollector, telemetry200, otherKey, otherJSON, agentNoShape, garbage, closedPort, newerAgent, automateLike)
	logger, logs := logBuffer()
	d, err := Discover(context.Background(), DiscoverOptions{Key: testKey, Product: ProductAuto, Ports: ports, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	if d.Port != ports[7] || d.Product != "cephable" || d.Health.Service != "cephable-agent" || d.Health.ContextSize == nil {
		t.Fatalf("found %+v (health %+v), want port %d of cephable; ports %v", d, d.Health, ports[7], ports)
	}
	if strings.Contains(logs.String(), testKey) {
		t.Fatal("key in discovery logs")
	}
	// Our own server's shape is taken too, and reports the spec's word.
	d, err = Discover(context.Background(), DiscoverOptions{Key: testKey, Product: ProductAuto, Ports: slices.Delete(slices.Clone(ports), 7, 8)})
	if err != nil || d.Port != ports[8] || d.Product != DefaultProduct {
		t.Fatalf("our server: %+v %v", d, err)
	}
	// An explicit word is as before: only that word, no shape required.
	d, err = Discover(context.Background(), DiscoverOptions{Key: testKey, Product: "foo", Ports: ports})
	if err != nil || d.Port != ports[4] || d.Product != "foo" {
		t.Fatalf("explicit foo: %+v %v", d, err)
	}
	d, err = Discover(context.Background(), DiscoverOptions{Key: testKey, Ports: ports})
	if err != nil || d.Port != ports[8] || d.Product != DefaultProduct {
		t.Fatalf("default word: %+v %v", d, err)
	}
}

// TestDiscoverAutoRejectedKey: with ProductAuto and no server taking the
// key, the error names every port that answered 401.
func TestDiscoverAutoRejectedKey(t *testing.T) {
	all := listenRoles(t, telemetry200, otherKey, otelCollector, otherKey, closedPort, newerAgent)
	ports := all[:5]
	_, err := Discover(context.Background(), DiscoverOptions{Key: testKey, Product: ProductAuto, Ports: ports})
	var de *DiscoveryError
	if !errors.Is(err, ErrUnauthorized) || errors.Is(err, ErrNoServer) || !errors.As(err, &de) ||
		!slices.Equal(de.UnauthorizedPorts, []int{ports[1], ports[3]}) {
		t.Fatalf("want ErrUnauthorized on %d and %d, got %v", ports[1], ports[3], err)
	}
	want := fmt.Sprintf("automate: Automate servers answered on 127.0.0.1:%d,%d but rejected the access key; no server on %s took it",
		ports[1], ports[3], DescribePorts(DefaultHost, ports))
	if !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), testKey) {
		t.Fatalf("message %q, want it to start %q", err, want)
	}
	// A server that takes the key above the 401s is found.
	d, err := Discover(context.Background(), DiscoverOptions{Key: testKey, Product: ProductAuto, Ports: all})
	if err != nil || d.Port != all[5] || d.Product != "cephable" {
		t.Fatalf("past the 401s: %+v %v", d, err)
	}
}

// TestDiscoverAutoNoShape: a 200 that names "<word>-agent" without the
// contract's fields is not taken; the error says how to take it anyway.
func TestDiscoverAutoNoShape(t *testing.T) {
	ports := listenRoles(t, otelCollector, agentNoShape)
	_, err := Discover(context.Background(), DiscoverOptions{Key: testKey, Product: ProductAuto, Ports: ports})
	if !errors.Is(err, ErrNoServer) || !strings.Contains(err.Error(), fmt.Sprintf("127.0.0.1:%d answers as foo-agent but its /health lacks the contract's fields (set the product word to \"foo\"", ports[1])) {
		t.Fatalf("got %v", err)
	}
}

func TestHealthShape(t *testing.T) {
	for body, want := range map[string]bool{
		`{"status":"ok","service":"service-agent","busy":false,"workflowStatus":"idle"}`:                 true,
		`{"status":"ok","service":"cephable-agent","busy":true,"workflowStatus":"executing","x":[1,{}]}`: true,
		`{"status":"ok","service":"cephable-agent","busy":false}`:                                        false,
		`{"status":"ok","service":"cephable-agent","workflowStatus":"idle"}`:                             false,
		`{"status":"ok","service":"cephable-agent","busy":"false","workflowStatus":"idle"}`:              false,
		`{"status":"ok","service":"cephable-agent","busy":null,"workflowStatus":"idle"}`:                 false,
		`{"status":"degraded","service":"cephable-agent","busy":false,"workflowStatus":"idle"}`:          false,
		`{"status":"ok","service":"otel-collector","busy":false,"workflowStatus":"idle"}`:                false,
		`{"status":"ok","service":"Bad Word-agent","busy":false,"workflowStatus":"idle"}`:                false,
		`{"status":"ok","service":"-agent","busy":false,"workflowStatus":"idle"}`:                        false,
		`[1,2]`:       false,
		`not json`:    false,
		``:            false,
		`{"ok":true}`: false,
	} {
		if got := HealthShape([]byte(body)); got != want {
			t.Errorf("HealthShape(%s) = %v, want %v", body, got, want)
		}
	}
}

// TestDiscoverToleratesMistypedField: a /health field of another type than
// ours does not hide the server.
func TestDiscoverToleratesMistypedField(t *testing.T) {
	ports := listenRoles(t, mistypedAgent)
	for _, product := range []string{ProductAuto, "cephable"} {
		d, err := Discover(context.Background(), DiscoverOptions{Key: testKey, Product: product, Ports: ports})
		if err != nil || d.Product != "cephable" || d.Health.WorkflowStatus != WorkflowIdle {
			t.Fatalf("%s: %+v %v", product, d, err)
		}
	}
}

func TestClientRefusesAuto(t *testing.T) {
	_, err := NewClient(ClientOptions{BaseURL: "http://127.0.0.1:4317", Key: testKey, Product: ProductAuto})
	if err == nil || !strings.Contains(err.Error(), "Discovery.Product") {
		t.Fatalf("NewClient with auto: %v", err)
	}
	if ServedProduct(ProductAuto) != DefaultProduct || ServedProduct("") != DefaultProduct || ServedProduct("acme") != "acme" {
		t.Fatal("ServedProduct")
	}
}
