package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hubgate/hubgate/bridge"
	"github.com/hubgate/hubgate/bridge/journal"
	"github.com/hubgate/hubgate/internal/localhttp"
)

// Config configures Listen and Serve.
type Config struct {
	// Path is the socket path (required). Relative paths are made absolute.
	Path string
	// Handler answers the requests (required).
	Handler Backend
	// Logger receives structured logs. Nil: discard.
	Logger *slog.Logger
	// Lock is the instance lock taken by Lock for this socket. Zero: Listen
	// takes it itself and the server releases it at Close; given, the caller
	// keeps it and releases it.
	Lock *InstanceLock
	// ShutdownTimeout bounds how long Serve waits for requests in progress
	// when its context ends. Zero: 5 s.
	ShutdownTimeout time.Duration
}

// Server is a listening control endpoint.
type Server struct {
	path    string
	ln      net.Listener
	lock    *InstanceLock
	srv     *http.Server
	log     *slog.Logger
	timeout time.Duration

	closeOnce sync.Once
	closeErr  error
	stopping  chan struct{} // closed when the server shuts down (ends watch streams)
	stopOnce  sync.Once
}

func (s *Server) stopStreams() { s.stopOnce.Do(func() { close(s.stopping) }) }

// Listen checks the socket's directory, takes the daemon lock, removes a
// stale socket and binds; the server accepts connections once Serve runs.
func Listen(cfg Config) (*Server, error) {
	if cfg.Path == "" {
		return nil, errors.New("control: empty socket path")
	}
	if cfg.Handler == nil {
		return nil, errors.New("control: nil Handler")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = 5 * time.Second
	}
	path, err := filepath.Abs(cfg.Path)
	if err != nil {
		return nil, fmt.Errorf("control: %w", err)
	}
	ln, lock, err := listen(path, cfg.Lock, cfg.Logger)
	if err != nil {
		return nil, err
	}
	s := &Server{path: path, ln: ln, lock: lock, log: cfg.Logger, timeout: cfg.ShutdownTimeout, stopping: make(chan struct{})}
	s.srv = &http.Server{
		Handler:           newMux(cfg.Handler, cfg.Logger, s.stopping),
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    maxBody,
		ErrorLog:          slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelDebug),
	}
	// Watch streams never end by themselves: a shutdown ends them.
	s.srv.RegisterOnShutdown(s.stopStreams)
	cfg.Logger.Debug("control: listening", "socket", path)
	return s, nil
}

// Serve answers requests until ctx ends, then shuts down gracefully
// (Config.ShutdownTimeout), removes the socket and releases the lock. It
// returns nil after a shutdown by ctx.
func (s *Server) Serve(ctx context.Context) error {
	serving := localhttp.Serve(s.srv, s.ln)
	select {
	case <-serving.Done():
		s.Close()
		if err := serving.Err(); err != nil {
			return fmt.Errorf("control: serving: %w", err)
		}
		return nil
	case <-ctx.Done():
	}
	if err := serving.Stop(context.Background(), s.timeout); err != nil {
		s.log.Warn("control: shutdown did not finish in time", "err", err)
	}
	return s.Close()
}

// Close stops the server at once, removes the socket and releases the
// lock. It is safe to call more than once.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.stopStreams()
		s.srv.Close()
		// Closing a listener made by net.Listen unlinks the socket file.
		if err := s.ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			s.closeErr = fmt.Errorf("control: closing: %w", err)
		}
		s.lock.Release() // nil when the caller owns it; the file stays (see docs/control.md)
		s.log.Debug("control: closed", "socket", s.path)
	})
	return s.closeErr
}

func newMux(b Backend, log *slog.Logger, stopping <-chan struct{}) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/watch", func(w http.ResponseWriter, r *http.Request) {
		serveWatch(w, r, b, stopping)
	})
	mux.HandleFunc("GET /v1/statuspage", func(w http.ResponseWriter, r *http.Request) {
		serveStatusPage(w, r, b, false)
	})
	mux.HandleFunc("POST /v1/statuspage/login", func(w http.ResponseWriter, r *http.Request) {
		serveStatusPage(w, r, b, true)
	})
	mux.HandleFunc("POST /v1/statuspage/login/revoke", func(w http.ResponseWriter, r *http.Request) {
		serveRevokeLogin(w, r, b)
	})
	mux.HandleFunc("GET /v1/status", func(w http.ResponseWriter, r *http.Request) {
		st, err := b.Status(r.Context())
		if err != nil {
			backendError(w, log, "status", err)
			return
		}
		if st.PID == 0 {
			st.PID = os.Getpid()
		}
		if st.Queue == nil {
			st.Queue = []bridge.QueuedCommand{}
		}
		writeJSON(w, http.StatusOK, st)
	})
	mux.HandleFunc("GET /v1/history", func(w http.ResponseWriter, r *http.Request) {
		limit := DefaultHistoryLimit
		if v := r.URL.Query().Get("limit"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > journal.MaxHistoryLimit {
				writeError(w, http.StatusBadRequest, fmt.Sprintf("limit must be an integer from 1 to %d", journal.MaxHistoryLimit))
				return
			}
			limit = n
		}
		entries, err := b.History(r.Context(), limit)
		if err != nil {
			backendError(w, log, "history", err)
			return
		}
		if entries == nil {
			entries = []journal.Entry{}
		}
		writeJSON(w, http.StatusOK, historyBody{Entries: entries})
	})
	mux.HandleFunc("POST /v1/cancel", func(w http.ResponseWriter, r *http.Request) {
		var req cancelBody
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			writeError(w, http.StatusBadRequest, "reading the body: "+err.Error())
			return
		}
		if len(body) > 0 {
			if err := json.Unmarshal(body, &req); err != nil {
				writeError(w, http.StatusBadRequest, "the body must be {\"force\": true|false}: "+err.Error())
				return
			}
		}
		res, err := b.Cancel(r.Context(), req.Force)
		if err != nil {
			backendError(w, log, "cancel", err)
			return
		}
		writeJSON(w, http.StatusOK, res)
	})
	mux.HandleFunc("POST /v1/answer", func(w http.ResponseWriter, r *http.Request) {
		a, ok := b.(Answerer)
		if !ok {
			writeError(w, http.StatusNotImplemented, "this daemon takes no answers")
			return
		}
		var req answerBody
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err == nil {
			err = json.Unmarshal(body, &req)
		}
		if err != nil || strings.TrimSpace(req.Text) == "" {
			writeError(w, http.StatusBadRequest, "the body must be {\"text\": \"the answer\"} with some text")
			return
		}
		res, err := a.Answer(r.Context(), strings.TrimSpace(req.Text), "hubgate answer")
		if err != nil {
			backendError(w, log, "answer", err)
			return
		}
		writeJSON(w, http.StatusOK, res)
	})
	mux.HandleFunc("POST /v1/reconnect", func(w http.ResponseWriter, r *http.Request) {
		rc, ok := b.(Reconnecter)
		if !ok {
			writeError(w, http.StatusNotImplemented, "this daemon cannot reconnect on request")
			return
		}
		res, err := rc.Reconnect(r.Context())
		if err != nil {
			backendError(w, log, "reconnect", err)
			return
		}
		if res.PID == 0 {
			res.PID = os.Getpid()
		}
		writeJSON(w, http.StatusOK, res)
	})
	return jsonMuxErrors(mux)
}

type historyBody struct {
	Entries []journal.Entry `json:"entries"`
}

type cancelBody struct {
	Force bool `json:"force"`
}

type answerBody struct {
	Text string `json:"text"`
}

type errorBody struct {
	Error string `json:"error"`
}

func backendError(w http.ResponseWriter, log *slog.Logger, op string, err error) {
	log.Warn("control: request failed", "op", op, "err", err)
	writeError(w, http.StatusInternalServerError, err.Error())
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, errorBody{Error: msg})
}

// controlJSON is how the control socket answers.
var controlJSON = localhttp.JSON{ContentType: "application/json", NoStore: true, Newline: true}

func writeJSON(w http.ResponseWriter, code int, v any) { _ = controlJSON.Write(w, code, v) }

// jsonMuxErrors turns the mux's plain-text 404 and 405 into the JSON error
// shape (keeping the Allow header of a 405).
func jsonMuxErrors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(&jsonErrorWriter{ResponseWriter: w, method: r.Method, path: r.URL.Path}, r)
	})
}

type jsonErrorWriter struct {
	http.ResponseWriter
	method, path string
	swallow      bool
}

func (w *jsonErrorWriter) WriteHeader(code int) {
	if (code == http.StatusMethodNotAllowed || code == http.StatusNotFound) && w.Header().Get("Content-Type") != "application/json" {
		w.swallow = true
		msg := "no such route: " + w.method + " " + w.path
		if code == http.StatusMethodNotAllowed {
			msg = "method " + w.method + " not allowed on " + w.path
		}
		b, _ := json.Marshal(errorBody{Error: msg})
		w.Header().Set("Content-Type", "application/json")
		w.Header().Del("X-Content-Type-Options")
		w.ResponseWriter.WriteHeader(code)
		w.ResponseWriter.Write(append(b, '\n'))
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection (Flush).
func (w *jsonErrorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *jsonErrorWriter) Write(b []byte) (int, error) {
	if w.swallow {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}
