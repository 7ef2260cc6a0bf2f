package control

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/journal"
)

// DefaultClientTimeout bounds a client call whose context has no deadline.
const DefaultClientTimeout = 30 * time.Second

// Client talks to a daemon's control socket. It connects per request, so
// Dial never fails: a daemon that is not running shows up as ErrNotRunning
// from the first call.
type Client struct {
	path string
	hc   *http.Client
}

// Dial returns a client of the control socket at path.
func Dial(path string) *Client {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		},
		MaxIdleConns:       1,
		IdleConnTimeout:    10 * time.Second,
		DisableCompression: true,
	}
	return &Client{path: path, hc: &http.Client{Transport: tr}}
}

// Close releases idle connections.
func (c *Client) Close() { c.hc.CloseIdleConnections() }

// ServerError is an error answer of the daemon.
type ServerError struct {
	StatusCode int
	Message    string
}

func (e *ServerError) Error() string {
	return fmt.Sprintf("control: the daemon answered %d: %s", e.StatusCode, e.Message)
}

// Status returns the daemon's status.
func (c *Client) Status(ctx context.Context) (bridge.Status, error) {
	var st bridge.Status
	err := c.do(ctx, http.MethodGet, "/v1/status", nil, &st)
	return st, err
}

// History returns up to limit journal entries, newest first (limit 0: the
// server's default).
func (c *Client) History(ctx context.Context, limit int) ([]journal.Entry, error) {
	p := "/v1/history"
	if limit != 0 {
		p += "?" + url.Values{"limit": {strconv.Itoa(limit)}}.Encode()
	}
	var body historyBody
	if err := c.do(ctx, http.MethodGet, p, nil, &body); err != nil {
		return nil, err
	}
	return body.Entries, nil
}

// Cancel asks the daemon to cancel the current run.
func (c *Client) Cancel(ctx context.Context, force bool) (bridge.CancelResult, error) {
	var res bridge.CancelResult
	err := c.do(ctx, http.MethodPost, "/v1/cancel", cancelBody{Force: force}, &res)
	return res, err
}

// Answer answers the question the daemon's run in flight asked the person
// (ask_person); the result says whether one was waiting.
func (c *Client) Answer(ctx context.Context, text string) (bridge.AnswerResult, error) {
	var res bridge.AnswerResult
	err := c.do(ctx, http.MethodPost, "/v1/answer", answerBody{Text: text}, &res)
	return res, err
}

// Reconnect asks the daemon to reconnect its hub now with the paired
// device, read again (after `hubgate pair` or `unpair`).
func (c *Client) Reconnect(ctx context.Context) (ReconnectResult, error) {
	var res ReconnectResult
	err := c.do(ctx, http.MethodPost, "/v1/reconnect", nil, &res)
	return res, err
}

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultClientTimeout)
		defer cancel()
	}
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("control: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://hubgate"+path, body)
	if err != nil {
		return fmt.Errorf("control: %w", err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return c.dialError(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("control: reading the answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var e errorBody
		if json.Unmarshal(b, &e) != nil || e.Error == "" {
			e.Error = http.StatusText(resp.StatusCode)
		}
		return &ServerError{StatusCode: resp.StatusCode, Message: e.Error}
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("control: decoding the answer: %w", err)
	}
	return nil
}

// dialError maps "nothing listens" to ErrNotRunning.
func (c *Client) dialError(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		switch {
		case errors.Is(err, syscall.ENOENT), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("%w (no daemon answers on %s)", ErrNotRunning, c.path)
		case errors.Is(err, fs.ErrPermission):
			return fmt.Errorf("control: %s: permission denied (a daemon of another user?): %w", c.path, err)
		}
	}
	// net/http reports a connection closed before any answer as
	// "server closed idle connection" (an unexported error) or EOF; when
	// the daemon closes it before the request is written, the write fails
	// with EPIPE (or ECONNRESET).
	if errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		strings.Contains(err.Error(), "server closed idle connection") {
		return fmt.Errorf("control: the daemon closed the connection without answering (another user's daemon?): %w", err)
	}
	return fmt.Errorf("control: %w", err)
}
