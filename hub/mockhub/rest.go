package mockhub

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/internal/localhttp"
)

// Problem is an RFC 9457 problem detail, the error body of the REST and
// admin routes.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
}

// The mock's JSON answers and its problem details (RFC 9457).
var (
	mockJSON    = localhttp.JSON{NoStore: true, Newline: true}
	problemJSON = localhttp.JSON{ContentType: "application/problem+json", NoStore: true, Newline: true}
)

func writeProblem(w http.ResponseWriter, status int, detail string) {
	_ = problemJSON.Write(w, status, Problem{Type: "about:blank", Title: http.StatusText(status), Status: status, Detail: detail})
}

func writeJSON(w http.ResponseWriter, status int, v any) { _ = mockJSON.Write(w, status, v) }

// statusWriter remembers the status a handler answered.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// requireUser lets only requests with a valid user access token through,
// and records every REST call (allowed or not) in the event log.
func (s *Server) requireUser(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &capturingWriter{statusWriter: statusWriter{ResponseWriter: w}}
		ev := &Event{Source: SourceREST, Action: r.Method + " " + r.URL.Path}
		if detail, challenge, ok := s.userFromRequest(r); !ok {
			w.Header().Set("WWW-Authenticate", challenge)
			writeProblem(sw, http.StatusUnauthorized, detail)
			ev.Error = detail
		} else {
			next.ServeHTTP(sw, r.WithContext(withEvent(r.Context(), ev)))
		}
		ev.Status = sw.status
		ev.Result = sw.body.payload()
		s.record(*ev)
	})
}

func (s *Server) handleCreateDevice(w http.ResponseWriter, r *http.Request) {
	ev := eventFrom(r.Context())
	typeID := chi.URLParam(r, "deviceTypeId")
	name := r.URL.Query().Get("name")
	ev.Action = "CreateUserDevice"
	ev.Args = map[string]any{"deviceTypeId": typeID, "name": name}
	ev.Payload = payload(ev.Args)
	if name == "" {
		ev.Error = "name is required"
		writeProblem(w, http.StatusBadRequest, "the query parameter name is required")
		return
	}
	dev, err := s.createDevice(typeID, name)
	if err != nil {
		ev.Error = err.Error()
		writeProblem(w, http.StatusNotFound, "unknown device type "+typeID)
		return
	}
	ev.DeviceID = dev.ID
	writeJSON(w, http.StatusOK, dev)
}

func (s *Server) handleCreateToken(w http.ResponseWriter, r *http.Request) {
	ev := eventFrom(r.Context())
	id := chi.URLParam(r, "userDeviceId")
	ev.Action, ev.DeviceID = "CreateDeviceToken", id
	ev.Payload = payload(map[string]any{"userDeviceId": id})
	tok, err := s.createToken(id)
	if err != nil {
		ev.Error = err.Error()
		writeProblem(w, http.StatusNotFound, "unknown user device "+id)
		return
	}
	ev.TokenID = tok.ID
	writeJSON(w, http.StatusOK, tok)
}

func (s *Server) handleGetDevice(w http.ResponseWriter, r *http.Request) {
	ev := eventFrom(r.Context())
	id := chi.URLParam(r, "userDeviceId")
	ev.Action, ev.DeviceID = "GetUserDevice", id
	ev.Payload = payload(map[string]any{"userDeviceId": id})
	dev, ok := s.Device(id)
	if !ok {
		ev.Error = ErrUnknownDevice.Error()
		writeProblem(w, http.StatusNotFound, "unknown user device "+id)
		return
	}
	writeJSON(w, http.StatusOK, dev)
}

// createDevice creates a User Device of the known device type.
func (s *Server) createDevice(typeID, name string) (deviceapi.UserDevice, error) {
	if typeID != s.cfg.DeviceTypeID {
		return deviceapi.UserDevice{}, ErrUnknownDeviceType
	}
	d := &device{dev: deviceapi.UserDevice{ID: uuid.NewString(), NameOverride: name}, typeID: typeID}
	s.mu.Lock()
	s.devices[d.dev.ID] = d
	s.order = append(s.order, d.dev.ID)
	dev := d.dev
	s.mu.Unlock()
	s.saveState()
	return dev, nil
}

// createToken creates a device token for a device.
func (s *Server) createToken(deviceID string) (deviceapi.DeviceToken, error) {
	tok, err := s.addToken(deviceID)
	if err == nil {
		s.saveState()
	}
	return tok, err
}

func (s *Server) addToken(deviceID string) (deviceapi.DeviceToken, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.devices[deviceID]
	if d == nil {
		return deviceapi.DeviceToken{}, ErrUnknownDevice
	}
	tok := deviceapi.DeviceToken{ID: uuid.NewString(), UserDeviceID: deviceID, Token: newSecret()}
	t := &deviceToken{id: tok.ID, deviceID: deviceID}
	s.devTokens[digest(tok.Token)] = t
	s.tokenByID[t.id] = t
	d.tokenIDs = append(d.tokenIDs, t.id)
	return tok, nil
}

// CreateToken mints a new device token for an existing device, as the REST
// route POST /api/Device/userDevices/{id}/tokens does for a signed-in user
// (a re-pairing that reuses the device).
func (s *Server) CreateToken(deviceID string) (deviceapi.DeviceToken, error) {
	return s.createToken(deviceID)
}

// Device returns the current state of a User Device.
func (s *Server) Device(id string) (deviceapi.UserDevice, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.devices[id]
	if d == nil {
		return deviceapi.UserDevice{}, false
	}
	return d.dev, true
}

// CreateDevice creates a User Device and a device token for it, as a
// client would through OAuth and REST. An empty typeID is the configured
// device type; an empty name becomes "Mock device".
func (s *Server) CreateDevice(typeID, name string) (deviceapi.UserDevice, deviceapi.DeviceToken, error) {
	if typeID == "" {
		typeID = s.cfg.DeviceTypeID
	}
	if name == "" {
		name = "Mock device"
	}
	dev, err := s.createDevice(typeID, name)
	if err != nil {
		return dev, deviceapi.DeviceToken{}, err
	}
	tok, err := s.createToken(dev.ID)
	return dev, tok, err
}

type eventKey struct{}

func withEvent(ctx context.Context, ev *Event) context.Context {
	return context.WithValue(ctx, eventKey{}, ev)
}

// eventFrom returns the event a handler fills in (a throwaway one when the
// request is not recorded).
func eventFrom(ctx context.Context) *Event {
	if ev, ok := ctx.Value(eventKey{}).(*Event); ok {
		return ev
	}
	return &Event{}
}
