package localhttp

import (
	"encoding/json"
	"net/http"
)

// DefaultJSONContentType is JSON.ContentType's zero value.
const DefaultJSONContentType = "application/json; charset=utf-8"

// JSON is how one server writes its JSON answers: encoding/json's
// encoding (HTML characters escaped) under the headers and framing that
// server has always sent. A value is fixed per server (a package-level
// var), so that every answer of that server has the same bytes around
// its body. Safe for concurrent use.
type JSON struct {
	// ContentType of every answer. Zero: "application/json; charset=utf-8".
	ContentType string
	// NoStore adds `Cache-Control: no-store` to every answer.
	NoStore bool
	// Newline ends every body with "\n", as json.Encoder does.
	Newline bool
	// Fallback is the body of the 500 answered when a value cannot be
	// encoded. Zero: {"error":"encoding the answer failed"}.
	Fallback []byte
}

var defaultJSONFallback = []byte(`{"error":"encoding the answer failed"}`)

// Write answers status with v as JSON. A value that cannot be encoded is
// answered 500 with Fallback instead, never half-written, and its error is
// returned (for the caller to log); an error writing to w is not: the
// caller has gone and nothing else can be told.
func (j JSON) Write(w http.ResponseWriter, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		fallback := j.Fallback
		if fallback == nil {
			fallback = defaultJSONFallback
		}
		// A copy: appending the newline must not write into the shared one.
		status, b = http.StatusInternalServerError, append([]byte(nil), fallback...)
	}
	if j.Newline {
		b = append(b, '\n')
	}
	j.WriteEncoded(w, status, b)
	return err
}

// WriteEncoded answers status with b, JSON already encoded (and ending
// with the newline if Newline is set), under the headers Write sends.
func (j JSON) WriteEncoded(w http.ResponseWriter, status int, b []byte) {
	h := w.Header()
	ct := j.ContentType
	if ct == "" {
		ct = DefaultJSONContentType
	}
	h.Set("Content-Type", ct)
	if j.NoStore {
		h.Set("Cache-Control", "no-store")
	}
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
