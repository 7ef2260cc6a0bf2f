package automate

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// listener roles in discovery tests.
type role int

const (
	automateLike  role = iota // 200 service-agent with the right key, 401 otherwise
	otherKey                  // an Automate server that has another key: 401
	otelCollector             // a non-Automate HTTP program: 404 text
	otherJSON                 // 200 JSON that is not this server
	garbage                   // TCP listener answering bytes that are not HTTP
	silent                    // accepts and never answers
	closedPort                // nothing listens
	telemetry200              // an HTTP program answering 200 with a body that is not JSON
	agentNoShape              // 200 {"status":"ok","service":"foo-agent"} and nothing else
	newerAgent                // the desktop application's newer server, word cephable (newerAppHandler)
	mistypedAgent             // cephable-agent whose /health has a field of an unexpected type
)

// startRole serves a role on ln (already bound on 127.0.0.1).
func startRole(t *testing.T, ln net.Listener, r role) {
	t.Helper()
	switch r {
	case garbage, silent:
		var mu sync.Mutex
		var held []net.Conn
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				if r == garbage {
					c.Write([]byte("\x00\x00\x18\x04\x00\x00\x00\x00\x00 not http at all\r\n\r\n"))
					c.Close()
					continue
				}
				mu.Lock()
				held = append(held, c)
				mu.Unlock()
			}
		}()
		t.Cleanup(func() {
			ln.Close()
			mu.Lock()
			defer mu.Unlock()
			for _, c := range held {
				c.Close()
			}
		})
		return
	case closedPort:
		ln.Close()
		return
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch r {
		case automateLike:
			if req.Header.Get("Authorization") != "Bearer "+testKey {
				envelope(w, 401, ErrTypeAuthentication, "Unauthorized")
				return
			}
			if req.URL.Path != "/health" {
				envelope(w, 404, ErrTypeNotFound, "Not found")
				return
			}
			h := health(false, "")
			h.Workspace = ln.Addr().String() // tells the listeners apart
			writeJSON(w, 200, h)
		case otherKey:
			envelope(w, 401, ErrTypeAuthentication, "Unauthorized")
		case otelCollector:
			http.Error(w, "404 page not found", 404)
		case otherJSON:
			writeJSON(w, 200, map[string]any{"status": "ok", "service": "otel-collector"})
		case telemetry200:
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte("OTLP collector ready"))
		case agentNoShape:
			writeJSON(w, 200, map[string]any{"status": "ok", "service": "foo-agent"})
		case newerAgent:
			newerAppHandler("cephable", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(413) })(w, req)
		case mistypedAgent:
			w.Write([]byte(`{"status":"ok","service":"cephable-agent","busy":false,"workflowStatus":"idle","logicalCpuCount":"16","contextSize":"16k"}`))
		}
	})}}
	srv.Start()
	t.Cleanup(srv.Close)
}

// listenRoles binds one OS-chosen loopback port per role and assigns the
// roles in ascending port order. It returns the ports, ascending.
func listenRoles(t *testing.T, roles ...role) []int {
	t.Helper()
	lns := make([]net.Listener, len(roles))
	for i := range roles {
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns[i] = ln
	}
	slices.SortFunc(lns, func(a, b net.Listener) int {
		return a.Addr().(*net.TCPAddr).Port - b.Addr().(*net.TCPAddr).Port
	})
	ports := make([]int, len(lns))
	for i, ln := range lns {
		ports[i] = ln.Addr().(*net.TCPAddr).Port
		startRole(t, ln, roles[i])
	}
	return ports
}

func TestDiscoverLowestMatchingPort(t *testing.T) {
	ports := listenRoles(t, otelCollector, garbage, otherJSON, otherKey, closedPort, automateLike, automateLike)
	logger, logs := logBuffer()
	d, err := Discover(context.Background(), DiscoverOptions{Key: testKey, Ports: ports, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	if d.Port != ports[5] || d.BaseURL != fmt.Sprintf("http://127.0.0.1:%d", ports[5]) {
		t.Fatalf("found %d (%s), want %d; ports %v", d.Port, d.BaseURL, ports[5], ports)
	}
	if d.Health == nil || d.Health.Service != ServiceID || d.Health.Workspace != fmt.Sprintf("127.0.0.1:%d", ports[5]) {
		t.Fatalf("health %+v", d.Health)
	}
	if strings.Contains(logs.String(), testKey) {
		t.Fatal("key in discovery logs")
	}
	// The discovered base URL works for a client.
	c, err := NewClient(ClientOptions{BaseURL: d.BaseURL, Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Health(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestDiscoverSkipsSilentListener(t *testing.T) {
	ports := listenRoles(t, silent, automateLike)
	d, err := Discover(context.Background(), DiscoverOptions{Key: testKey, Ports: ports, PerPortTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if d.Port != ports[1] {
		t.Fatalf("found %d, want %d", d.Port, ports[1])
	}
}

func TestDiscoverWrongKey(t *testing.T) {
	ports := listenRoles(t, otelCollector, automateLike, otherKey)
	_, err := Discover(context.Background(), DiscoverOptions{Key: "not-the-" + testKey, Ports: ports})
	if !errors.Is(err, ErrUnauthorized) || errors.Is(err, ErrNoServer) {
		t.Fatalf("want ErrUnauthorized, got %v", err)
	}
	want := fmt.Sprintf("automate: Automate servers answered on 127.0.0.1:%d,%d but rejected the access key", ports[1], ports[2])
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("message %q lacks %q", err, want)
	}
	if strings.Contains(err.Error(), testKey) {
		t.Fatal("key in error")
	}
	var de *DiscoveryError
	if !errors.As(err, &de) || !slices.Equal(de.UnauthorizedPorts, ports[1:]) {
		t.Fatalf("discovery error %+v", de)
	}
}

func TestDiscoverNothing(t *testing.T) {
	ports := listenRoles(t, otelCollector, closedPort, otherJSON, garbage)
	_, err := Discover(context.Background(), DiscoverOptions{Key: testKey, Ports: ports})
	if !errors.Is(err, ErrNoServer) || errors.Is(err, ErrUnauthorized) {
		t.Fatalf("want ErrNoServer, got %v", err)
	}
	for _, p := range ports {
		if !strings.Contains(err.Error(), fmt.Sprint(p)) {
			t.Fatalf("message %q does not name port %d", err, p)
		}
	}
}

func TestDescribePorts(t *testing.T) {
	var window []int
	for p := FirstPort; p <= LastPort; p++ {
		window = append(window, p)
	}
	for _, tc := range []struct {
		host  string
		ports []int
		want  string
	}{
		{"127.0.0.1", window, "127.0.0.1:4317-4328"},
		{"127.0.0.1", []int{4317, 4319}, "127.0.0.1:4317,4319"},
		{"127.0.0.1", []int{5000}, "127.0.0.1:5000"},
		{"::1", []int{4317, 4318}, "[::1]:4317-4318"},
	} {
		if got := DescribePorts(tc.host, tc.ports); got != tc.want {
			t.Errorf("DescribePorts(%s, %v) = %q, want %q", tc.host, tc.ports, got, tc.want)
		}
	}
	err := &DiscoveryError{Host: DefaultHost, Ports: window}
	if err.Error() != "automate: no Automate server found on 127.0.0.1:4317-4328" {
		t.Fatalf("message %q", err)
	}
}

func TestDiscoverCanceled(t *testing.T) {
	ports := listenRoles(t, silent, automateLike)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Discover(ctx, DiscoverOptions{Key: testKey, Ports: ports})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
}

// TestDiscoverInContractWindow: zero Ports sweeps the contract's window
// 4317..4328. Nothing is bound, so the test does not depend on the window
// being free: a product word no server has answers with the error that
// lists the ports probed, whatever listens there.
func TestDiscoverInContractWindow(t *testing.T) {
	_, err := Discover(context.Background(), DiscoverOptions{Key: testKey, Product: "zz-no-such-product", PerPortTimeout: 500 * time.Millisecond})
	var de *DiscoveryError
	if !errors.As(err, &de) {
		t.Fatalf("want a *DiscoveryError, got %v", err)
	}
	var window []int
	for p := FirstPort; p <= LastPort; p++ {
		window = append(window, p)
	}
	if !slices.Equal(de.Ports, window) {
		t.Fatalf("ports probed %v, want %v", de.Ports, window)
	}
}

// TestDiscoverProductWord looks for "acme-agent": a server answering 401 on
// a lower port and a server of the default word do not stop the sweep, and
// the 401 is not reported once the right server answered.
func TestDiscoverProductWord(t *testing.T) {
	ports := listenRoles(t, otherKey, automateLike, closedPort)
	acme, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	acmeSrv := &httptest.Server{Listener: acme, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Header.Get("Authorization") != "Bearer "+testKey {
			envelope(w, 401, ErrTypeAuthentication, "Unauthorized")
			return
		}
		h := health(false, "")
		h.Service = AgentID("acme")
		writeJSON(w, 200, h)
	})}}
	acmeSrv.Start()
	t.Cleanup(acmeSrv.Close)
	acmePort := acme.Addr().(*net.TCPAddr).Port
	all := append(slices.Clone(ports), acmePort)

	d, err := Discover(context.Background(), DiscoverOptions{Key: testKey, Product: "acme", Ports: all})
	if err != nil {
		t.Fatalf("discover acme: %v", err)
	}
	if d.Port != acmePort || d.Health.Service != "acme-agent" {
		t.Fatalf("found %d (%s), want %d", d.Port, d.Health.Service, acmePort)
	}
	// Without the acme server, the 401 is what is reported; the default
	// word's server is not taken for it.
	_, err = Discover(context.Background(), DiscoverOptions{Key: testKey, Product: "acme", Ports: ports})
	if !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("want ErrUnauthorized naming port %d, got %v", ports[0], err)
	}
	// Only the default word's server took the key: the error says so.
	_, err = Discover(context.Background(), DiscoverOptions{Key: testKey, Product: "acme", Ports: ports[1:]})
	var de *DiscoveryError
	if !errors.Is(err, ErrNoServer) || !errors.As(err, &de) || len(de.OtherAgents) != 1 || de.OtherAgents[0].Service != ServiceID ||
		!strings.Contains(err.Error(), `no acme-agent server found`) || !strings.Contains(err.Error(), `set the product word to "service"`) {
		t.Fatalf("want a hint at the other product, got %v", err)
	}
	// The default word still finds the default server.
	d, err = Discover(context.Background(), DiscoverOptions{Key: testKey, Ports: all})
	if err != nil || d.Port != ports[1] {
		t.Fatalf("default word: %+v, %v", d, err)
	}
	if _, err := Discover(context.Background(), DiscoverOptions{Key: testKey, Product: "Bad Word"}); err == nil {
		t.Fatal("an invalid product word was accepted")
	}
}

func TestValidProduct(t *testing.T) {
	for word, want := range map[string]bool{
		"service": true, "cephable": true, "acme-2": true, "a": true,
		"": false, "Acme": false, "-acme": false, "acme-": false, "2acme": false, "ac me": false, "ac_me": false,
		strings.Repeat("a", 32): true, strings.Repeat("a", 33): false,
	} {
		if got := ValidProduct(word); got != want {
			t.Errorf("ValidProduct(%q) = %v, want %v", word, got, want)
		}
	}
	if AgentID("") != ServiceID || ModelID("acme") != "acme-model" {
		t.Fatal("ids")
	}
}
