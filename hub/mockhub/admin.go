package mockhub

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/internal/localhttp"
)

// Wire types of the admin API.
type (
	// CreateDeviceRequest is the body of POST /mock/devices.
	CreateDeviceRequest struct {
		DeviceTypeID string `json:"deviceTypeId,omitempty"`
		Name         string `json:"name,omitempty"`
	}
	// CreatedDevice answers POST /mock/devices.
	CreatedDevice struct {
		Device deviceapi.UserDevice  `json:"device"`
		Token  deviceapi.DeviceToken `json:"token"`
	}
	// DeviceInfo is one device of GET /mock/devices.
	DeviceInfo struct {
		Device       deviceapi.UserDevice `json:"device"`
		DeviceTypeID string               `json:"deviceTypeId"`
		Connected    bool                 `json:"connected"`   // a hub connection is up
		Connections  int                  `json:"connections"` // how many
		// HubConnections are the device's hub connections, oldest first.
		HubConnections []ConnectionInfo `json:"hubConnections"`
		Tokens         []TokenInfo      `json:"tokens"`
	}
	// ConnectionInfo is one hub connection of a device.
	ConnectionInfo struct {
		ID        string    `json:"id"`
		Transport string    `json:"transport"` // websockets, sse
		TokenID   string    `json:"tokenId"`
		Since     time.Time `json:"since"` // on Config.Now
	}
	// TokenInfo describes a device token without its secret.
	TokenInfo struct {
		ID           string `json:"id"`
		UserDeviceID string `json:"userDeviceId"`
		IsDisabled   bool   `json:"isDisabled"`
	}
	// CommandRequest is the body of POST /mock/devices/{id}/command. With
	// MacroName the macro is the one of that name in the device's current
	// profile (as the real app sends it); with Macro, that macro; with
	// NoMacro, none (DeviceCommand(command, null), as the real service may
	// send a voice phrase or a macro named by its name: the device finds
	// the macro in its profile); with none of them, one made from the
	// command. An empty command is the macro's name (what the real app
	// sends), else its first command.
	CommandRequest struct {
		Command   string           `json:"command,omitempty"`
		Macro     *deviceapi.Macro `json:"macro,omitempty"`
		MacroName string           `json:"macroName,omitempty"`
		NoMacro   bool             `json:"noMacro,omitempty"`
	}
	// PushResult answers a push.
	PushResult struct {
		Delivered int `json:"delivered"` // connections the push was queued on
	}
	// ProfileResult answers POST /mock/devices/{id}/profile.
	ProfileResult struct {
		Device    deviceapi.UserDevice `json:"device"`
		Delivered int                  `json:"delivered"`
	}
	// DisableResult answers POST /mock/tokens/{tokenId}/disable.
	DisableResult struct {
		Token   TokenInfo `json:"token"`
		Dropped int       `json:"dropped"` // hub connections closed
	}
	// EventsPage answers GET /mock/journal (and /mock/events).
	EventsPage struct {
		Events []Event `json:"events"`
		Last   int64   `json:"last"` // the last sequence number so far
		// Missed counts the entries after the asked sequence number that
		// the journal's ring has already dropped.
		Missed int64 `json:"missed,omitempty"`
	}
	// AdminRoute is one route of the admin API (GET /mock lists them).
	AdminRoute struct {
		Method  string `json:"method"`
		Path    string `json:"path"`
		Name    string `json:"name"` // the journal's action for its calls
		Summary string `json:"summary"`
	}
	// AdminIndex answers GET /mock.
	AdminIndex struct {
		Routes []AdminRoute `json:"routes"`
	}
)

// Duration is a time.Duration written as a Go duration string in JSON.
type Duration time.Duration

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration is a string like \"5s\"")
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	if v < 0 {
		return fmt.Errorf("duration %q is negative", s)
	}
	*d = Duration(v)
	return nil
}

// Faults is a fault injection request; nil fields change nothing.
type Faults struct {
	Drop      bool      `json:"drop,omitempty"`      // close every hub connection now (see DropConnections)
	RefuseFor *Duration `json:"refuseFor,omitempty"` // refuse new hub connections for this long (0: stop)
	Freeze    *Duration `json:"freeze,omitempty"`    // freeze every hub connection for this long (0: thaw)
	// ExpireServiceTokens makes every access token of a negotiate redirect
	// issued so far expire now (connections already open stay open).
	ExpireServiceTokens bool `json:"expireServiceTokens,omitempty"`
	// ServiceErrorFor makes the SignalR service's negotiate answer
	// {"error": ...} for this long (0: stop).
	ServiceErrorFor *Duration `json:"serviceErrorFor,omitempty"`
}

// FaultState is the fault state after a request.
type FaultState struct {
	Dropped       int        `json:"dropped"` // hub connections closed by this request
	RefusingUntil *time.Time `json:"refusingUntil,omitempty"`
	FrozenUntil   *time.Time `json:"frozenUntil,omitempty"`
	// Held counts the hub requests, connection reads and writes the
	// freeze holds now (each waits for the thaw): the freeze's effect,
	// seen from the mock.
	Held int `json:"held,omitempty"`
	// ExpiredServiceTokens counts the redirect access tokens this request
	// expired.
	ExpiredServiceTokens int        `json:"expiredServiceTokens,omitempty"`
	ServiceErrorUntil    *time.Time `json:"serviceErrorUntil,omitempty"`
}

// Faults applies a fault request: drop first, then the refusal, the
// freeze and the SignalR service's faults.
func (s *Server) Faults(f Faults) FaultState {
	var st FaultState
	if f.Drop {
		st.Dropped = s.DropConnections()
	}
	if f.RefuseFor != nil {
		s.RefuseFor(time.Duration(*f.RefuseFor))
	}
	if f.Freeze != nil {
		s.Freeze(time.Duration(*f.Freeze))
	}
	if f.ExpireServiceTokens {
		st.ExpiredServiceTokens = s.ExpireServiceTokens()
	}
	if f.ServiceErrorFor != nil {
		s.FailServiceNegotiateFor(time.Duration(*f.ServiceErrorFor))
	}
	st.ServiceErrorUntil = s.serviceFailingUntil()
	s.refuseMu.Lock()
	if until := s.refuseUntil; time.Now().Before(until) {
		st.RefusingUntil = &until
	}
	s.refuseMu.Unlock()
	if until := s.freeze.frozenUntil(); !until.IsZero() {
		st.FrozenUntil = &until
	}
	st.Held = int(s.freeze.held.Load())
	return st
}

// flushBeforeDrop bounds how long a drop waits for each connection's
// client to take the pushes queued before it.
const flushBeforeDrop = time.Second

// DropConnections closes every hub connection abruptly and returns how
// many there were. The pushes already queued on a connection are written
// first, as the admin requests came ("push, then drop" reaches the device
// in that order: the push was accepted before the drop was asked). A
// client that does not read them within flushBeforeDrop loses them (each
// journaled "not delivered"), and a frozen hub drops at once (its writes
// wait for the thaw).
func (s *Server) DropConnections() int {
	s.mu.Lock()
	conns := make([]*hubConn, 0, len(s.conns))
	for _, c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	if s.freeze.frozenUntil().IsZero() && len(conns) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), flushBeforeDrop)
		var wg sync.WaitGroup
		for _, c := range conns {
			wg.Go(func() { c.flush(ctx.Done()) })
		}
		wg.Wait()
		cancel()
	}
	// Taken after the flush: a connection opened meanwhile is dropped too.
	s.mu.Lock()
	n := len(s.conns)
	live := make([]*transport, 0, len(s.live))
	for tr := range s.live {
		live = append(live, tr)
	}
	s.mu.Unlock()
	for _, tr := range live {
		tr.drop()
	}
	return n
}

// RefuseFor answers 503 to new hub connections for d (0 stops refusing).
func (s *Server) RefuseFor(d time.Duration) {
	s.refuseMu.Lock()
	defer s.refuseMu.Unlock()
	s.refuseUntil = time.Now().Add(d)
}

// Freeze stops all hub traffic for d without closing anything (0 thaws).
func (s *Server) Freeze(d time.Duration) { s.freeze.freeze(d) }

// Devices lists every device in creation order.
func (s *Server) Devices() []DeviceInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]DeviceInfo, 0, len(s.order))
	for _, id := range s.order {
		d := s.devices[id]
		info := DeviceInfo{Device: d.dev, DeviceTypeID: d.typeID, Tokens: []TokenInfo{}, HubConnections: []ConnectionInfo{}}
		for _, c := range s.conns {
			if c.tr.deviceID == id {
				info.Connections++
				info.HubConnections = append(info.HubConnections, ConnectionInfo{ID: c.id, Transport: c.tr.kind, TokenID: c.tr.tokenID, Since: c.since})
			}
		}
		slices.SortFunc(info.HubConnections, func(a, b ConnectionInfo) int { return a.Since.Compare(b.Since) })
		info.Connected = info.Connections > 0
		for _, tid := range d.tokenIDs {
			t := s.tokenByID[tid]
			info.Tokens = append(info.Tokens, TokenInfo{ID: t.id, UserDeviceID: t.deviceID, IsDisabled: t.disabled})
		}
		out = append(out, info)
	}
	return out
}

// PushCommand pushes DeviceCommand(command, macro) to the device's hub
// connections; a nil macro is synthesised from the command.
func (s *Server) PushCommand(deviceID, command string, macro *deviceapi.Macro) error {
	_, err := s.pushCommand(deviceID, command, macro)
	return err
}

func (s *Server) pushCommand(deviceID, command string, macro *deviceapi.Macro) (int, error) {
	return s.commandTo(deviceID, "", CommandRequest{Command: command, Macro: macro})
}

// PushMacro pushes DeviceCommand with the macro of that name in the
// device's current profile, the command being the macro's name, as the
// real app sends it.
func (s *Server) PushMacro(deviceID, name string) error {
	_, err := s.commandTo(deviceID, "", CommandRequest{MacroName: name})
	return err
}

// commandTo pushes the DeviceCommand a CommandRequest describes to one
// connection of the device (all when connID is empty).
func (s *Server) commandTo(deviceID, connID string, req CommandRequest) (int, error) {
	macro := req.Macro
	if req.MacroName != "" {
		if macro != nil {
			return 0, errors.New("give macro or macroName, not both")
		}
		m, err := s.profileMacro(deviceID, req.MacroName)
		if err != nil {
			return 0, err
		}
		macro = &m
	}
	command := req.Command
	if command == "" && macro != nil {
		command = macro.Name
		if command == "" && len(macro.Commands) > 0 {
			command = macro.Commands[0]
		}
	}
	if command == "" {
		return 0, errors.New("command is required (or a macro with a name or a command)")
	}
	if req.NoMacro {
		if macro != nil {
			return 0, errors.New("give noMacro, or macro or macroName, not both")
		}
		return s.pushTo(deviceID, connID, "DeviceCommand", command, nil)
	}
	if macro == nil {
		macro = &deviceapi.Macro{ID: uuid.NewString(), Name: command, Commands: []string{command}, Events: []deviceapi.MacroEvent{}}
	}
	return s.pushTo(deviceID, connID, "DeviceCommand", command, *macro)
}

// profileMacro finds a macro of the device's current profile by name:
// the exact name, else the one name equal without case.
func (s *Server) profileMacro(deviceID, name string) (deviceapi.Macro, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.devices[deviceID]
	if d == nil {
		return deviceapi.Macro{}, ErrUnknownDevice
	}
	p := d.dev.CurrentProfile
	if p == nil {
		return deviceapi.Macro{}, fmt.Errorf("%w: the device has no current profile (push one first)", ErrUnknownMacro)
	}
	var folded []deviceapi.Macro
	var names []string
	for _, m := range p.Configuration.Macros {
		if m.Name == name {
			return m, nil
		}
		if strings.EqualFold(m.Name, name) {
			folded = append(folded, m)
		}
		names = append(names, strconv.Quote(m.Name))
	}
	if len(folded) == 1 {
		return folded[0], nil
	}
	if len(names) == 0 {
		return deviceapi.Macro{}, fmt.Errorf("%w: the profile %q has no macros", ErrUnknownMacro, p.Name)
	}
	return deviceapi.Macro{}, fmt.Errorf("%w %q; the profile %q has %s", ErrUnknownMacro, name, p.Name, strings.Join(names, ", "))
}

// PushProfile makes p the device's current profile and pushes
// DeviceProfileUpdate(device). A device without a hub connection keeps
// the profile; that is not an error.
func (s *Server) PushProfile(deviceID string, p deviceapi.Profile) (deviceapi.UserDevice, error) {
	dev, _, err := s.pushProfile(deviceID, p)
	return dev, err
}

func (s *Server) pushProfile(deviceID string, p deviceapi.Profile) (deviceapi.UserDevice, int, error) {
	return s.pushProfileTo(deviceID, "", p)
}

func (s *Server) pushProfileTo(deviceID, connID string, p deviceapi.Profile) (deviceapi.UserDevice, int, error) {
	s.mu.Lock()
	d := s.devices[deviceID]
	if d == nil {
		s.mu.Unlock()
		return deviceapi.UserDevice{}, 0, ErrUnknownDevice
	}
	d.dev.CurrentProfile = &p
	dev := d.dev
	s.mu.Unlock()
	s.saveState()
	n, err := s.pushTo(deviceID, connID, "DeviceProfileUpdate", dev)
	if errors.Is(err, ErrNoConnection) && connID == "" {
		err = nil
	}
	return dev, n, err
}

// StartListening pushes StartListening() to the device.
func (s *Server) StartListening(deviceID string) error {
	_, err := s.push(deviceID, "StartListening")
	return err
}

// StopListening pushes StopListening() to the device.
func (s *Server) StopListening(deviceID string) error {
	_, err := s.push(deviceID, "StopListening")
	return err
}

// PushSettings pushes DeviceSettingsUpdate(settings) to the device.
func (s *Server) PushSettings(deviceID string, settings any) error {
	_, err := s.push(deviceID, "DeviceSettingsUpdate", settings)
	return err
}

// Push sends any hub-to-client call to the device's connections, in order
// with every other push.
func (s *Server) Push(deviceID, target string, args ...any) error {
	_, err := s.push(deviceID, target, args...)
	return err
}

// DisableToken disables a device token and drops the hub connections
// that used it; it returns how many it dropped.
func (s *Server) DisableToken(tokenID string) (int, error) {
	s.mu.Lock()
	t := s.tokenByID[tokenID]
	if t == nil {
		s.mu.Unlock()
		return 0, ErrUnknownToken
	}
	t.disabled = true
	n := 0
	for _, c := range s.conns {
		if c.tr.tokenID == tokenID {
			n++
		}
	}
	var drop []*transport
	for tr := range s.live {
		if tr.tokenID == tokenID {
			drop = append(drop, tr)
		}
	}
	s.mu.Unlock()
	s.saveState()
	for _, tr := range drop {
		tr.drop()
	}
	return n, nil
}

// ---- HTTP ------------------------------------------------------------------

// AdminRoutes lists the admin API's routes, as GET /mock does: the admin
// group of the route table (api.go), so the index, the router and the
// OpenAPI document cannot disagree.
func (s *Server) AdminRoutes() []AdminRoute {
	var out []AdminRoute
	for _, rt := range s.apiRoutes() {
		if rt.group == groupAdmin {
			out = append(out, AdminRoute{Method: rt.method, Path: rt.path, Name: rt.op.id, Summary: rt.op.summary})
		}
	}
	return out
}

func (s *Server) adminRoutes(r chi.Router) {
	r.Use(loopbackOnly, loopbackHostOnly, s.ownerOnly, sameOriginOnly, s.adminBodyDeadline)
	s.mountGroup(r, groupAdmin, adminPrefix, func(rt apiRoute, h http.Handler) http.Handler {
		if rt.method == http.MethodGet { // reads are not journaled: reading the journal would fill it
			return h
		}
		return s.journalAdmin(rt.op.id, h)
	})
}

func (s *Server) adminDevices(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.Devices())
}

// adminListening pushes StartListening() or StopListening() to the device
// (?connection=ID: to that hub connection only).
func (s *Server) adminListening(target string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		n, err := s.pushTo(chi.URLParam(r, "id"), r.URL.Query().Get("connection"), target)
		writePush(w, n, err)
	}
}

// loopbackOnly refuses peers that are not on a loopback address.
func loopbackOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
			localhttp.Refuse(w, r)
			writeProblem(w, http.StatusForbidden, "the admin API answers loopback peers only")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// loopbackHostOnly refuses a Host header that does not name the loopback:
// a DNS rebinding page reaches a loopback peer under its own name.
func loopbackHostOnly(next http.Handler) http.Handler {
	return localhttp.RequireLoopbackHost(func(w http.ResponseWriter, r *http.Request) {
		writeProblem(w, http.StatusForbidden, "the admin API answers only a Host header naming the loopback (127.0.0.1, [::1] or localhost)")
	}, next)
}

// sameOriginOnly refuses a cross-origin browser request that changes
// state: any web page can POST to a loopback address.
func sameOriginOnly(next http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		localhttp.Refuse(w, r)
		writeProblem(w, http.StatusForbidden, "the admin API refuses cross-origin browser requests")
	}))
	return cop.Handler(next)
}

// adminBodyDeadline bounds reading an admin request's body.
func (s *Server) adminBodyDeadline(next http.Handler) http.Handler {
	return localhttp.BodyDeadline(s.cfg.AdminBodyTimeout, next)
}

// maxAdminBody bounds an admin request's body: above the hub client's
// default receive limit (16 MiB, package hub), so that a test can push a
// profile or command of any size a real one reaches, and one over the
// limit.
const maxAdminBody = 64 << 20

// readBody reads a request body; empty is allowed when allowEmpty.
func readBody(r *http.Request, allowEmpty bool) ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxAdminBody))
	if err != nil {
		return nil, fmt.Errorf("unreadable body: %w", err)
	}
	if len(bytes.TrimSpace(b)) == 0 && !allowEmpty {
		return nil, errors.New("a JSON body is required")
	}
	return b, nil
}

// decodeStrict decodes one JSON object into v, refusing unknown members.
func decodeStrict(b []byte, v any) error {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("bad JSON body: %w", err)
	}
	if dec.More() {
		return errors.New("bad JSON body: trailing data")
	}
	return nil
}

func writeErr(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, ErrUnknownDevice), errors.Is(err, ErrUnknownToken), errors.Is(err, ErrUnknownDeviceType), errors.Is(err, ErrUnknownMacro):
		writeProblem(w, http.StatusNotFound, err.Error())
	case errors.Is(err, ErrNoConnection):
		writeProblem(w, http.StatusConflict, err.Error())
	default:
		writeProblem(w, http.StatusBadRequest, err.Error())
	}
}

func writePush(w http.ResponseWriter, n int, err error) {
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, PushResult{Delivered: n})
}

func (s *Server) adminCreateDevice(w http.ResponseWriter, r *http.Request) {
	var req CreateDeviceRequest
	b, err := readBody(r, true)
	if err == nil {
		err = decodeStrict(b, &req)
	}
	if err != nil {
		writeErr(w, err)
		return
	}
	dev, tok, err := s.CreateDevice(req.DeviceTypeID, req.Name)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, CreatedDevice{Device: dev, Token: tok})
}

func (s *Server) adminCommand(w http.ResponseWriter, r *http.Request) {
	var req CommandRequest
	b, err := readBody(r, false)
	if err == nil {
		err = decodeStrict(b, &req)
	}
	if err != nil {
		writeErr(w, err)
		return
	}
	n, err := s.commandTo(chi.URLParam(r, "id"), r.URL.Query().Get("connection"), req)
	writePush(w, n, err)
}

func (s *Server) adminProfile(w http.ResponseWriter, r *http.Request) {
	var p deviceapi.Profile
	b, err := readBody(r, false)
	if err == nil {
		if bytes.TrimSpace(b)[0] != '{' {
			err = errors.New("the body must be a Profile object")
		} else if jerr := json.Unmarshal(b, &p); jerr != nil {
			err = fmt.Errorf("bad Profile: %w", jerr)
		}
	}
	if err != nil {
		writeErr(w, err)
		return
	}
	dev, n, err := s.pushProfileTo(chi.URLParam(r, "id"), r.URL.Query().Get("connection"), p)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, ProfileResult{Device: dev, Delivered: n})
}

func (s *Server) adminSettings(w http.ResponseWriter, r *http.Request) {
	b, err := readBody(r, false)
	if err == nil && !json.Valid(b) {
		err = errors.New("the body must be JSON")
	}
	if err != nil {
		writeErr(w, err)
		return
	}
	n, err := s.pushTo(chi.URLParam(r, "id"), r.URL.Query().Get("connection"), "DeviceSettingsUpdate", json.RawMessage(bytes.TrimSpace(b)))
	writePush(w, n, err)
}

func (s *Server) adminDisable(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "tokenId")
	n, err := s.DisableToken(id)
	if err != nil {
		writeErr(w, err)
		return
	}
	s.mu.Lock()
	t := s.tokenByID[id]
	info := TokenInfo{ID: t.id, UserDeviceID: t.deviceID, IsDisabled: t.disabled}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, DisableResult{Token: info, Dropped: n})
}

func (s *Server) adminFaults(w http.ResponseWriter, r *http.Request) {
	var f Faults
	b, err := readBody(r, true)
	if err == nil {
		err = decodeStrict(b, &f)
	}
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, s.Faults(f))
}
