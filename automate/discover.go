package automate

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DefaultHost is the loopback address discovery probes: the literal IPv4
// address, never "localhost" (which may resolve to IPv6 first and fail).
const DefaultHost = "127.0.0.1"

// DefaultPerPortTimeout bounds one port's probe.
const DefaultPerPortTimeout = 2 * time.Second

// DiscoverOptions configures Discover. Zero values are documented per field.
type DiscoverOptions struct {
	// Key is the bearer access key sent with every probe; required.
	Key string
	// Product is the product word of the server looked for: a port
	// matches when its /health service is "<Product>-agent". Zero:
	// DefaultProduct ("service"). The desktop application uses its
	// product's own name.
	Product string
	// Host is the address probed. Zero: "127.0.0.1".
	Host string
	// Ports are the ports probed. Zero: the contract's window 4317..4328.
	Ports []int
	// HTTPClient sends the probes. Zero: a client with no proxy that
	// follows no redirect.
	HTTPClient *http.Client
	// PerPortTimeout bounds one probe (connect, answer, body). Zero: 2s.
	PerPortTimeout time.Duration
	// Logger receives a debug line per probe. Zero: slog.Default().
	Logger *slog.Logger
}

// Discovery is the Automate server found by Discover.
type Discovery struct {
	// BaseURL is http://<host>:<port>, ready for ClientOptions.BaseURL.
	BaseURL string
	Port    int
	// Health is the server's /health answer.
	Health *Health
}

// probe outcomes.
type probeKind int

const (
	probeOther        probeKind = iota // nothing, or another program
	probeUnauthorized                  // 401: a server listens, the key is wrong
	probeMatch                         // 200 with service == <product>-agent
)

type probeResult struct {
	kind   probeKind
	health *Health
	other  string // the /health service of another product's agent
}

// Discover finds the Automate server: it sends GET /health with the bearer
// key to every port concurrently and answers the LOWEST port whose 200 body
// has service "<product>-agent" (AgentID(opts.Product)). A port answering
// 401 does not stop the sweep: a higher port may hold the server of the
// right product that takes the key. Other listeners (a telemetry collector on
// 4317 answering 404 or something that is not JSON, a port that accepts
// and never answers) are skipped.
//
// Servers of another product word (a 200 with another "-agent" service) are
// skipped too. When no port matches, the error is a *DiscoveryError: if some port
// answered 401, a server listens there but rejected the key (errors.Is
// ErrUnauthorized, message "an Automate server answered on
// 127.0.0.1:<port> but rejected the access key"); otherwise errors.Is
// ErrNoServer and the message names the range probed.
func Discover(ctx context.Context, opts DiscoverOptions) (*Discovery, error) {
	if opts.Key == "" {
		return nil, fmt.Errorf("automate: discover: access key is required")
	}
	host := opts.Host
	if host == "" {
		host = DefaultHost
	}
	ports := slices.Clone(opts.Ports)
	if len(ports) == 0 {
		for p := FirstPort; p <= LastPort; p++ {
			ports = append(ports, p)
		}
	}
	slices.Sort(ports)
	ports = slices.Compact(ports)
	hc := opts.HTTPClient
	if hc == nil {
		hc = defaultHTTPClient()
	}
	timeout := opts.PerPortTimeout
	if timeout <= 0 {
		timeout = DefaultPerPortTimeout
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	product := opts.Product
	if product == "" {
		product = DefaultProduct
	}
	if !ValidProduct(product) {
		return nil, fmt.Errorf("automate: discover: invalid product word %q", product)
	}
	want := AgentID(product)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the probes still running once the answer is known
	results := make([]chan probeResult, len(ports))
	for i, port := range ports {
		results[i] = make(chan probeResult, 1)
		go func() {
			results[i] <- probePort(ctx, hc, log, opts.Key, want, host, port, timeout)
		}()
	}
	derr := &DiscoveryError{Host: host, Ports: ports, Want: want}
	// Results are taken in port order, so a match returns as soon as every
	// lower port has been decided.
	for i, port := range ports {
		var r probeResult
		select {
		case r = <-results[i]:
		case <-ctx.Done():
			return nil, fmt.Errorf("automate: discover on %s: %w", describePorts(host, ports), ctx.Err())
		}
		switch r.kind {
		case probeMatch:
			return &Discovery{BaseURL: "http://" + hostPort(host, port), Port: port, Health: r.health}, nil
		case probeUnauthorized:
			derr.UnauthorizedPorts = append(derr.UnauthorizedPorts, port)
		}
		if r.other != "" {
			derr.OtherAgents = append(derr.OtherAgents, OtherAgent{Port: port, Service: r.other})
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("automate: discover on %s: %w", describePorts(host, ports), err)
	}
	return nil, derr
}

func probePort(ctx context.Context, hc *http.Client, log *slog.Logger, key, want, host string, port int, timeout time.Duration) probeResult {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	addr := hostPort(host, port)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/health", nil)
	if err != nil {
		return probeResult{}
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		log.Debug("automate discovery: no answer", "addr", addr, "err", err)
		return probeResult{}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		log.Debug("automate discovery: server rejected the access key", "addr", addr)
		return probeResult{kind: probeUnauthorized}
	case err != nil:
		log.Debug("automate discovery: answer unreadable", "addr", addr, "status", resp.StatusCode, "err", err)
		return probeResult{}
	case resp.StatusCode != http.StatusOK:
		log.Debug("automate discovery: not an Automate server", "addr", addr, "status", resp.StatusCode)
		return probeResult{}
	}
	var h Health
	if err := json.Unmarshal(body, &h); err != nil || h.Service != want {
		log.Debug("automate discovery: not an Automate server", "addr", addr, "status", resp.StatusCode,
			"service", h.Service)
		if err == nil && strings.HasSuffix(h.Service, "-agent") && ValidProduct(strings.TrimSuffix(h.Service, "-agent")) {
			return probeResult{other: h.Service}
		}
		return probeResult{}
	}
	log.Debug("automate discovery: found", "addr", addr, "appVersion", h.AppVersion)
	return probeResult{kind: probeMatch, health: &h}
}

func hostPort(host string, port int) string { return net.JoinHostPort(host, strconv.Itoa(port)) }

// describePorts names the probed ports: "127.0.0.1:4317-4328" for a
// contiguous run, else "127.0.0.1:4317,4319".
func describePorts(host string, ports []int) string {
	if len(ports) == 0 {
		return host
	}
	h := host
	if strings.Contains(host, ":") {
		h = "[" + host + "]"
	}
	contiguous := true
	for i := 1; i < len(ports); i++ {
		if ports[i] != ports[i-1]+1 {
			contiguous = false
			break
		}
	}
	if len(ports) == 1 {
		return hostPort(host, ports[0])
	}
	if contiguous {
		return fmt.Sprintf("%s:%d-%d", h, ports[0], ports[len(ports)-1])
	}
	parts := make([]string, len(ports))
	for i, p := range ports {
		parts[i] = strconv.Itoa(p)
	}
	return h + ":" + strings.Join(parts, ",")
}
