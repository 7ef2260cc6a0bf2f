package mockhub

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/internal/localhttp"
)

// AdminClient speaks the admin API of a running mock (`hubgate mock` and
// its subcommands use it).
type AdminClient struct {
	BaseURL    string       // e.g. http://127.0.0.1:43123
	HTTPClient *http.Client // nil: a client with a 90 s timeout
}

// AdminError is a non-2xx answer of the admin API.
type AdminError struct {
	Status  int
	Problem Problem
}

func (e *AdminError) Error() string {
	if e.Problem.Detail != "" {
		return fmt.Sprintf("mock admin API: %d %s: %s", e.Status, http.StatusText(e.Status), e.Problem.Detail)
	}
	return fmt.Sprintf("mock admin API: %d %s", e.Status, http.StatusText(e.Status))
}

func (c *AdminClient) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case json.RawMessage:
		rd = bytes.NewReader(b)
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(enc)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.BaseURL, "/")+path, rd)
	if err != nil {
		return err
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := c.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 90 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("mock admin API: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("mock admin API: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		e := &AdminError{Status: resp.StatusCode}
		_ = json.Unmarshal(b, &e.Problem)
		return e
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("mock admin API: bad answer to %s %s: %w", method, path, err)
	}
	return nil
}

func devPath(id, action string) string { return "/mock/devices/" + url.PathEscape(id) + "/" + action }

// CreateDevice creates a device and its token.
func (c *AdminClient) CreateDevice(ctx context.Context, req CreateDeviceRequest) (CreatedDevice, error) {
	var out CreatedDevice
	return out, c.do(ctx, http.MethodPost, "/mock/devices", req, &out)
}

// Devices lists the devices.
func (c *AdminClient) Devices(ctx context.Context) ([]DeviceInfo, error) {
	var out []DeviceInfo
	return out, c.do(ctx, http.MethodGet, "/mock/devices", nil, &out)
}

// Command pushes DeviceCommand; macro may be nil.
func (c *AdminClient) Command(ctx context.Context, deviceID, command string, macro *deviceapi.Macro) (PushResult, error) {
	return c.Send(ctx, deviceID, CommandRequest{Command: command, Macro: macro})
}

// Send pushes the DeviceCommand a CommandRequest describes (a macro of
// the device's profile by name, among others).
func (c *AdminClient) Send(ctx context.Context, deviceID string, req CommandRequest) (PushResult, error) {
	var out PushResult
	return out, c.do(ctx, http.MethodPost, devPath(deviceID, "command"), req, &out)
}

// Profile sets the current profile (raw JSON of a Profile) and pushes it.
func (c *AdminClient) Profile(ctx context.Context, deviceID string, profile json.RawMessage) (ProfileResult, error) {
	var out ProfileResult
	return out, c.do(ctx, http.MethodPost, devPath(deviceID, "profile"), profile, &out)
}

// StartListening pushes StartListening.
func (c *AdminClient) StartListening(ctx context.Context, deviceID string) (PushResult, error) {
	var out PushResult
	return out, c.do(ctx, http.MethodPost, devPath(deviceID, "start-listening"), nil, &out)
}

// StopListening pushes StopListening.
func (c *AdminClient) StopListening(ctx context.Context, deviceID string) (PushResult, error) {
	var out PushResult
	return out, c.do(ctx, http.MethodPost, devPath(deviceID, "stop-listening"), nil, &out)
}

// Settings pushes DeviceSettingsUpdate with any JSON value.
func (c *AdminClient) Settings(ctx context.Context, deviceID string, settings json.RawMessage) (PushResult, error) {
	var out PushResult
	return out, c.do(ctx, http.MethodPost, devPath(deviceID, "settings"), settings, &out)
}

// DisableToken disables a device token and drops its connections.
func (c *AdminClient) DisableToken(ctx context.Context, tokenID string) (DisableResult, error) {
	var out DisableResult
	return out, c.do(ctx, http.MethodPost, "/mock/tokens/"+url.PathEscape(tokenID)+"/disable", nil, &out)
}

// Faults injects faults.
func (c *AdminClient) Faults(ctx context.Context, f Faults) (FaultState, error) {
	var out FaultState
	return out, c.do(ctx, http.MethodPost, "/mock/faults", f, &out)
}

// Events returns the events after since; wait > 0 waits (at most 1 min)
// for at least one.
func (c *AdminClient) Events(ctx context.Context, since int64, wait time.Duration) (EventsPage, error) {
	q := url.Values{"since": {strconv.FormatInt(since, 10)}}
	if wait > 0 {
		q.Set("wait", wait.String())
	}
	var out EventsPage
	return out, c.do(ctx, http.MethodGet, "/mock/events?"+q.Encode(), nil, &out)
}

// Journal returns the journal's entries after `after`, of one device when
// device is not empty; wait > 0 waits (at most 1 min) for at least one.
func (c *AdminClient) Journal(ctx context.Context, after int64, device string, wait time.Duration) (EventsPage, error) {
	q := url.Values{"after": {strconv.FormatInt(after, 10)}}
	if device != "" {
		q.Set("device", device)
	}
	if wait > 0 {
		q.Set("wait", wait.String())
	}
	var out EventsPage
	return out, c.do(ctx, http.MethodGet, "/mock/journal?"+q.Encode(), nil, &out)
}

// FollowJournal follows the journal's event stream from `after` (of one
// device when device is not empty) and hands each entry to fn, until ctx
// ends, fn fails or the mock closes the stream. gap, when not nil, hears
// how many entries the journal's ring dropped before they were read.
func (c *AdminClient) FollowJournal(ctx context.Context, after int64, device string, fn func(Event) error, gap func(missed int64)) error {
	q := url.Values{"after": {strconv.FormatInt(after, 10)}}
	if device != "" {
		q.Set("device", device)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(c.BaseURL, "/")+"/mock/journal?"+q.Encode(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	hc := &http.Client{} // a stream has no overall timeout
	if c.HTTPClient != nil {
		hc = &http.Client{Transport: c.HTTPClient.Transport}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("mock admin API: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		e := &AdminError{Status: resp.StatusCode}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		_ = json.Unmarshal(b, &e.Problem)
		return e
	}
	er := localhttp.NewEventReader(resp.Body, 4<<20)
	for {
		ev, err := er.Next()
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			return nil // the mock closed the stream
		case err != nil:
			return fmt.Errorf("mock admin API: the journal stream: %w", err)
		}
		if err := dispatchJournal(ev.Name, ev.Data, fn, gap); err != nil {
			return err
		}
	}
}

func dispatchJournal(name string, data []byte, fn func(Event) error, gap func(int64)) error {
	if name == "gap" {
		var g struct{ Missed int64 }
		if json.Unmarshal(data, &g) == nil && gap != nil {
			gap(g.Missed)
		}
		return nil
	}
	var e Event
	if err := json.Unmarshal(data, &e); err != nil {
		return fmt.Errorf("mock admin API: a bad journal entry: %w", err)
	}
	return fn(e)
}
