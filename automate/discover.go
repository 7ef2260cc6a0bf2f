package automate

import (
	"context"
	"encoding/json"
	"errors"
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
	// product's own name. ProductAuto ("auto") matches a server of any
	// word whose /health has the contract's shape (see Discover);
	// Discovery.Product then says which word.
	Product string
	// Host is the address probed. Zero: "127.0.0.1".
	Host string
	// Ports is the port window probed, in any order (duplicates are
	// dropped). Zero: the contract's window FirstPort..LastPort
	// (4317..4328). Tests set it to ports the OS chose, so none depends on
	// the window being free.
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
	// Product is the server's product word: the one asked for, or with
	// ProductAuto the word its /health service named.
	Product string
}

// probe outcomes.
type probeKind int

const (
	probeOther        probeKind = iota // nothing, or another program
	probeUnauthorized                  // 401: a server listens, the key is wrong
	probeMatch                         // 200 with service == <product>-agent
)

type probeResult struct {
	kind    probeKind
	health  *Health
	product string // the matching server's product word
	other   string // the /health service of another product's agent
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
// 127.0.0.1:<port> but rejected the access key", naming every such port);
// otherwise errors.Is ErrNoServer and the message names the range probed.
//
// With ProductAuto, a port matches when its 200 /health has the contract's
// shape (HealthShape): status "ok", service "<word>-agent" for a valid
// word, busy a boolean and workflowStatus a string. Those four are the
// fields that the spec's Health, the newer desktop application's /health
// (the vendor's api-cheatsheet.md, whose example shows only some of the
// spec's fields) and the vendor's own stand-in server all carry, and the
// ones a client reads to know the server is ready; requiring more would
// refuse the newer application, requiring less would take any JSON that
// says "-agent". Extra fields are ignored. A 401 goes on being swept past,
// as with an explicit word: with our key, a 401 means the key is wrong for
// that server or the server is someone else's, and a server that takes the
// key may listen on a higher port (the vendor's clients stop at the first
// 401; with auto that would stop at a stranger's server).
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
		ports = PortWindow()
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
	if product == ProductAuto {
		want = "" // any <word>-agent of the contract's shape
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the probes still running once the answer is known
	results := make([]chan probeResult, len(ports))
	for i, port := range ports {
		results[i] = make(chan probeResult, 1)
		go func() {
			results[i] <- probePort(ctx, hc, log, opts.Key, want, host, port, timeout)
		}()
	}
	derr := &DiscoveryError{Host: host, Ports: ports, Want: want, Auto: want == ""}
	// Results are taken in port order, so a match returns as soon as every
	// lower port has been decided.
	for i, port := range ports {
		var r probeResult
		select {
		case r = <-results[i]:
		case <-ctx.Done():
			return nil, fmt.Errorf("automate: discover on %s: %w", DescribePorts(host, ports), ctx.Err())
		}
		switch r.kind {
		case probeMatch:
			return &Discovery{BaseURL: "http://" + hostPort(host, port), Port: port, Health: r.health, Product: r.product}, nil
		case probeUnauthorized:
			derr.UnauthorizedPorts = append(derr.UnauthorizedPorts, port)
		}
		if r.other != "" {
			derr.OtherAgents = append(derr.OtherAgents, OtherAgent{Port: port, Service: r.other})
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("automate: discover on %s: %w", DescribePorts(host, ports), err)
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
	err = json.Unmarshal(body, &h)
	if _, mistyped := errors.AsType[*json.UnmarshalTypeError](err); mistyped {
		// A field of another type than ours (a newer server's) does not
		// hide the server; the other fields are decoded.
		log.Debug("automate discovery: a /health field has an unexpected type", "addr", addr, "err", err)
		err = nil
	}
	word, agent := strings.CutSuffix(h.Service, "-agent")
	agent = agent && err == nil && ValidProduct(word)
	switch {
	case agent && want == "" && word != ProductAuto && HealthShape(body):
		log.Debug("automate discovery: found", "addr", addr, "service", h.Service, "appVersion", h.AppVersion)
		return probeResult{kind: probeMatch, health: &h, product: word}
	case agent && h.Service == want:
		log.Debug("automate discovery: found", "addr", addr, "appVersion", h.AppVersion)
		return probeResult{kind: probeMatch, health: &h, product: word}
	}
	log.Debug("automate discovery: not an Automate server", "addr", addr, "status", resp.StatusCode,
		"service", h.Service)
	if agent {
		return probeResult{other: h.Service}
	}
	return probeResult{}
}

// HealthShape reports whether a /health body has the contract's shape as
// discovery with ProductAuto requires it: a JSON object with status "ok",
// service "<word>-agent" for a valid product word, busy a boolean and
// workflowStatus a string. Other fields, present or not, do not matter.
func HealthShape(body []byte) bool {
	var f struct {
		Status         *string `json:"status"`
		Service        *string `json:"service"`
		Busy           *bool   `json:"busy"`
		WorkflowStatus *string `json:"workflowStatus"`
	}
	if json.Unmarshal(body, &f) != nil || f.Status == nil || f.Service == nil || f.Busy == nil || f.WorkflowStatus == nil {
		return false
	}
	word, ok := strings.CutSuffix(*f.Service, "-agent")
	return ok && *f.Status == "ok" && ValidProduct(word)
}

func hostPort(host string, port int) string { return net.JoinHostPort(host, strconv.Itoa(port)) }

// DescribePorts names ports of host: "127.0.0.1:4317-4328" for a
// contiguous run, else "127.0.0.1:4317,4319".
func DescribePorts(host string, ports []int) string {
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
