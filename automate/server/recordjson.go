package server

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/internal/localhttp"
)

// A long run's record is mostly its steps, trace and events. Encoding it
// with one json.Marshal holds the whole answer in one growing buffer on
// top of the record (13 MB for 10,000 steps); encodeRecord writes the
// blocks element by element instead, so the answer costs the record and
// a small buffer. The bytes are json.Marshal's for the same record, save
// that steps, trace and events come last.

// recordHead is rec's JSON without steps, trace and events and without its
// closing brace.
func recordHead(rec *automate.RunRecord) ([]byte, error) {
	head := *rec
	head.Steps, head.Trace, head.Events = nil, nil, nil
	b, err := json.Marshal(&head)
	if err != nil {
		return nil, err
	}
	return b[:len(b)-1], nil
}

// encodeRecord writes rec's JSON (head from recordHead) to w.
func encodeRecord(w io.Writer, head []byte, rec *automate.RunRecord) error {
	bw := bufio.NewWriterSize(w, 32<<10)
	bw.Write(head)
	if err := writeBlock(bw, "steps", rec.Steps); err != nil {
		return err
	}
	if err := writeBlock(bw, "trace", rec.Trace); err != nil {
		return err
	}
	if err := writeBlock(bw, "events", rec.Events); err != nil {
		return err
	}
	bw.WriteByte('}')
	return bw.Flush()
}

// writeBlock writes `,"key":[...]`; nothing for a nil block (omitted, as
// the record's omitzero tags say).
func writeBlock[T any](w *bufio.Writer, key string, items []T) error {
	if items == nil {
		return nil
	}
	w.WriteString(`,"` + key + `":[`)
	for i := range items {
		if i > 0 {
			w.WriteByte(',')
		}
		b, err := json.Marshal(&items[i])
		if err != nil {
			return err
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return w.WriteByte(']')
}

// writeRecord answers rec with status, as writeJSON would. A record that
// cannot be encoded at all gets writeJSON's fallback; one that fails once
// the answer has started aborts the connection, so that the caller never
// takes a cut body for a record.
func (s *Server) writeRecord(w http.ResponseWriter, status int, rec *automate.RunRecord) {
	head, err := recordHead(rec)
	if err != nil {
		writeJSON(w, s.log, status, rec)
		return
	}
	h := w.Header()
	h.Set("Content-Type", localhttp.DefaultJSONContentType)
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if err := encodeRecord(w, head, rec); err != nil {
		s.log.Error("encode record", "request_id", rec.RequestID, "err", err)
		panic(http.ErrAbortHandler)
	}
}

// sendRecord sends rec as the streamed answer's event name.
func sendRecord(es *localhttp.EventStream, name string, rec *automate.RunRecord) error {
	head, err := recordHead(rec)
	if err != nil {
		return err
	}
	return es.EventFrom(name, func(w io.Writer) error { return encodeRecord(w, head, rec) })
}
