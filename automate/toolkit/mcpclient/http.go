package mcpclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/hubgate/hubgate/internal/localhttp"
)

// closeTimeout bounds the DELETE that ends a streamable HTTP session.
const closeTimeout = 5 * time.Second

// StreamableHTTP is the streamable HTTP transport: every message is a POST
// to URL.
type StreamableHTTP struct {
	// URL is the server's MCP endpoint. Required.
	URL string
	// HTTPClient makes the requests. Nil: http.DefaultClient.
	HTTPClient *http.Client

	s         *Session
	mu        sync.Mutex
	sessionID string
	version   string
}

func (t *StreamableHTTP) client() *http.Client {
	if t.HTTPClient != nil {
		return t.HTTPClient
	}
	return http.DefaultClient
}

func (t *StreamableHTTP) open(_ context.Context, s *Session) error {
	if t.URL == "" {
		return errors.New("streamable HTTP: URL is required")
	}
	t.s = s
	return nil
}

func (t *StreamableHTTP) initialized(version string) {
	t.mu.Lock()
	t.version = version
	t.mu.Unlock()
}

// setHeaders adds the session's headers to req.
func (t *StreamableHTTP) setHeaders(req *http.Request) (sessionID string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sessionID != "" {
		req.Header.Set("Mcp-Session-Id", t.sessionID)
	}
	if t.version != "" {
		req.Header.Set("MCP-Protocol-Version", t.version)
	}
	return t.sessionID
}

func (t *StreamableHTTP) send(ctx context.Context, msg []byte, id int64) error {
	var hadSession bool
	resp, done, err := post(ctx, t.s, t.client(), t.URL, msg, func(req *http.Request) {
		req.Header.Set("Accept", "application/json, text/event-stream")
		hadSession = t.setHeaders(req) != ""
	})
	if err != nil {
		return err
	}
	defer done()
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		t.mu.Lock()
		if t.sessionID == "" {
			t.sessionID = sid
		}
		t.mu.Unlock()
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return httpStatusError(resp, hadSession)
	}
	if id == 0 {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4096)) // let the connection be reused
		return nil
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent:
		return fmt.Errorf("the server accepted the request without answering it (HTTP %d)", resp.StatusCode)
	case ct == "application/json":
		body, err := io.ReadAll(io.LimitReader(resp.Body, int64(t.s.maxMsg)+1))
		if err != nil {
			return fmt.Errorf("read the answer: %w", err)
		}
		if len(body) > t.s.maxMsg {
			return fmt.Errorf("%w (%d bytes)", ErrMessageTooLarge, t.s.maxMsg)
		}
		if !t.s.handle(body, id) {
			return errors.New("the server's JSON answer holds no response to the request")
		}
		return nil
	case ct == "text/event-stream":
		er := localhttp.NewEventReader(resp.Body, t.s.maxMsg)
		for {
			ev, err := er.Next()
			switch {
			case errors.Is(err, localhttp.ErrEventTooLarge):
				return fmt.Errorf("%w (%d bytes)", ErrMessageTooLarge, t.s.maxMsg)
			case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
				return errors.New("the server ended its event stream before answering the request")
			case err != nil:
				return fmt.Errorf("read the answer's event stream: %w", err)
			}
			if ev.Name != "" && ev.Name != "message" {
				continue
			}
			if t.s.handle(ev.Data, id) {
				return nil
			}
		}
	default:
		return fmt.Errorf("the server answered with Content-Type %q (want application/json or text/event-stream)", resp.Header.Get("Content-Type"))
	}
}

// post POSTs one message to url; the exchange ends with ctx or when the
// session closes. header adds the transport's headers. Unless it fails,
// the caller reads the answer and then calls done.
func post(ctx context.Context, s *Session, hc *http.Client, url string, msg []byte, header func(*http.Request)) (resp *http.Response, done func(), err error) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.ctx, cancel)
	done = func() {
		if resp != nil {
			resp.Body.Close()
		}
		stop()
		cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(msg))
	if err != nil {
		done()
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if header != nil {
		header(req)
	}
	resp, err = do(hc, req)
	if err != nil {
		done()
		return nil, nil, err
	}
	return resp, done, nil
}

// do sends req. Its error names the method, not the URL: a server's URL
// may carry a key in its query, and the error reaches run records and
// logs.
func do(hc *http.Client, req *http.Request) (*http.Response, error) {
	resp, err := hc.Do(req)
	var ue *url.Error
	if errors.As(err, &ue) {
		err = fmt.Errorf("%s: %w", req.Method, ue.Err)
	}
	return resp, err
}

// httpStatusError describes a refused exchange with the start of its body
// (a server's body, never our headers).
func httpStatusError(resp *http.Response, hadSession bool) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
	msg := fmt.Sprintf("HTTP %s", resp.Status)
	if s := strings.TrimSpace(string(b)); s != "" {
		msg += ": " + strings.ToValidUTF8(s, "?")
	}
	if resp.StatusCode == http.StatusNotFound && hadSession {
		msg += " (the server no longer knows this session)"
	}
	return errors.New(msg)
}

func (t *StreamableHTTP) close() error {
	t.mu.Lock()
	sid := t.sessionID
	t.mu.Unlock()
	if sid == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, t.URL, nil)
	if err != nil {
		return nil
	}
	t.setHeaders(req)
	resp, err := do(t.client(), req)
	if err != nil {
		t.s.log.Debug("mcpclient: DELETE of the session failed", "err", err)
		return nil
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	return nil // 405: the server does not let clients end sessions
}
