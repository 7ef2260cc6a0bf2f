package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"syscall"
	"testing"

	"github.com/hubgate/hubgate/automate"
)

// TestServeProductWord runs `hubgate automate serve --product acme`: it
// answers as acme's application does, and automate.Discover looking for
// acme finds it past another server answering 401 on a lower port.
func TestServeProductWord(t *testing.T) {
	key := uniqueKey(t)
	// Two loopback ports in order: the lower one gets a server that rejects
	// our key, the higher one is given to serve.
	a, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if a.Addr().(*net.TCPAddr).Port > b.Addr().(*net.TCPAddr).Port {
		a, b = b, a
	}
	servePort := b.Addr().(*net.TCPAddr).Port
	b.Close()
	other := &httptest.Server{Listener: a, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":{"message":"Unauthorized","type":"authentication_error"}}`))
	})}}
	other.Start()
	defer other.Close()

	s := startServe(t, env(t, "HUBGATE_AUTOMATE_KEY="+key), "--product", "acme", "--port", strconv.Itoa(servePort))
	defer s.stop(syscall.SIGTERM)

	var h automate.Health
	if st, body := get(t, s.url+"/health", key); st != 200 || json.Unmarshal(body, &h) != nil || h.Service != "acme-agent" {
		t.Fatalf("health %d %s", st, body)
	}
	st, body := post(t, s.url+"/v1/chat/completions", key, map[string]any{
		"model":    "acme-agent",
		"messages": []any{map[string]any{"role": "user", "content": "#!answer Sum is 7. FINAL ANSWER: 7"}},
		"acme":     map[string]any{"answerContract": "End with FINAL ANSWER: <n>"},
	})
	var reply map[string]json.RawMessage
	if st != 200 || json.Unmarshal(body, &reply) != nil {
		t.Fatalf("chat %d %s", st, body)
	}
	var rec automate.RunRecord
	if json.Unmarshal(reply["acme"], &rec) != nil || rec.SchemaVersion != 1 || rec.FinalAnswer == nil || *rec.FinalAnswer != "7" {
		t.Fatalf("the acme extension or record is missing: %s", body)
	}

	ports := []int{a.Addr().(*net.TCPAddr).Port, servePort}
	d, err := automate.Discover(context.Background(), automate.DiscoverOptions{Key: key, Product: "acme", Ports: ports})
	if err != nil || d.Port != servePort || d.Health.Service != "acme-agent" {
		t.Fatalf("discover acme: %+v %v", d, err)
	}
	// Looking for the spec's word finds nothing there, and says a server
	// rejected the key.
	if _, err := automate.Discover(context.Background(), automate.DiscoverOptions{Key: key, Ports: ports}); err == nil {
		t.Fatal("the default word found acme's server")
	}
}
