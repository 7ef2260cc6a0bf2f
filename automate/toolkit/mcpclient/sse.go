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

	"github.com/hubgate/hubgate/internal/localhttp"
)

// SSE is the HTTP+SSE transport of protocol version 2024-11-05: the server
// speaks on a GET event stream, the client POSTs to the endpoint the
// stream names.
type SSE struct {
	// URL is the server's SSE endpoint. Required.
	URL string
	// HTTPClient makes the requests. Nil: http.DefaultClient.
	HTTPClient *http.Client

	s          *Session
	endpoint   string
	cancel     context.CancelFunc
	readerDone chan struct{}
}

func (t *SSE) client() *http.Client {
	if t.HTTPClient != nil {
		return t.HTTPClient
	}
	return http.DefaultClient
}

func (t *SSE) open(ctx context.Context, s *Session) error {
	t.s = s
	base, err := url.Parse(t.URL)
	if err != nil || base.Host == "" {
		return fmt.Errorf("sse: bad URL")
	}
	// The stream lives until Close; ctx bounds connecting only.
	sctx, cancel := context.WithCancel(s.ctx)
	t.cancel = cancel
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	fail := func(err error) error {
		if ctx.Err() != nil {
			return fmt.Errorf("%w: %w", ctx.Err(), err)
		}
		return err
	}

	req, err := http.NewRequestWithContext(sctx, http.MethodGet, t.URL, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")
	resp, err := do(t.client(), req)
	if err != nil {
		return fail(fmt.Errorf("the event stream: %w", err))
	}
	ok := false
	defer func() {
		if !ok {
			resp.Body.Close()
		}
	}()
	if resp.StatusCode != http.StatusOK {
		return httpStatusError(resp, false)
	}
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct != "text/event-stream" {
		return fmt.Errorf("sse: the server answered with Content-Type %q (want text/event-stream)", resp.Header.Get("Content-Type"))
	}
	er := localhttp.NewEventReader(resp.Body, s.maxMsg)
	for {
		ev, err := er.Next()
		if err != nil {
			return fail(streamError(err, s.maxMsg, "before it named the endpoint"))
		}
		if ev.Name != "endpoint" {
			s.log.Debug("mcpclient: ignored an SSE event before the endpoint", "event", ev.Name)
			continue
		}
		ep, err := base.Parse(string(bytes.TrimSpace(ev.Data)))
		if err != nil {
			return fmt.Errorf("sse: the endpoint event is not a URL: %w", err)
		}
		if ep.Scheme != base.Scheme || ep.Host != base.Host {
			return fmt.Errorf("sse: the endpoint is on another origin (%s://%s, the stream is on %s://%s)", ep.Scheme, ep.Host, base.Scheme, base.Host)
		}
		t.endpoint = ep.String()
		break
	}
	ok = true
	t.readerDone = make(chan struct{})
	go t.read(er, resp.Body)
	return nil
}

func streamError(err error, max int, when string) error {
	switch {
	case errors.Is(err, localhttp.ErrEventTooLarge):
		return fmt.Errorf("%w (%d bytes)", ErrMessageTooLarge, max)
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("the server ended the event stream %s", when)
	}
	return fmt.Errorf("the event stream broke %s: %w", when, err)
}

func (t *SSE) read(er *localhttp.EventReader, body io.ReadCloser) {
	defer close(t.readerDone)
	defer body.Close()
	for {
		ev, err := er.Next()
		if err != nil {
			t.s.fail(streamError(err, t.s.maxMsg, ""))
			return
		}
		switch ev.Name {
		case "", "message":
			t.s.handle(ev.Data, 0)
		default:
			t.s.log.Debug("mcpclient: ignored an SSE event", "event", ev.Name)
		}
	}
}

func (t *SSE) send(ctx context.Context, msg []byte, _ int64) error {
	resp, done, err := post(ctx, t.s, t.client(), t.endpoint, msg, nil)
	if err != nil {
		return err
	}
	defer done()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return httpStatusError(resp, false)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	return nil
}

func (t *SSE) initialized(string) {}

func (t *SSE) close() error {
	if t.cancel != nil {
		t.cancel()
	}
	if t.readerDone != nil {
		<-t.readerDone
	}
	return nil
}
