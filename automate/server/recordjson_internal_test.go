package server

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/hubgate/hubgate/automate"
)

// TestEncodeRecordIsMarshal: the record written block by block is the same
// JSON value as json.Marshal's, for included, empty and omitted blocks.
func TestEncodeRecordIsMarshal(t *testing.T) {
	full := &automate.RunRecord{SchemaVersion: 1, RequestID: "automate-run-x", Status: automate.StatusCompleted,
		Answer: "done \u2028 <b>", StartedAt: automate.Timestamp{Time: time.Unix(1, 0)},
		Steps:  []automate.Step{{ID: "step-1", Index: 1, Title: "t", Status: automate.StepSuccess, ToolArgs: json.RawMessage(`{"ms":0}`)}},
		Trace:  []json.RawMessage{json.RawMessage(`{"role":"user","content":"hi"}`)},
		Events: []automate.Event{{Seq: 1, Channel: automate.ChannelSteps, Payload: json.RawMessage(`{"index":1}`)}}}
	empty := &automate.RunRecord{SchemaVersion: 1, Status: automate.StatusFailed, Steps: []automate.Step{}, Trace: []json.RawMessage{}, Events: []automate.Event{}}
	omitted := &automate.RunRecord{SchemaVersion: 1, Status: automate.StatusCompleted}
	for name, rec := range map[string]*automate.RunRecord{"full": full, "empty": empty, "omitted": omitted} {
		want, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		head, err := recordHead(rec)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := encodeRecord(&buf, head, rec); err != nil {
			t.Fatal(err)
		}
		var got, exp any
		if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
			t.Fatalf("%s: not JSON: %v: %s", name, err, buf.Bytes())
		}
		json.Unmarshal(want, &exp)
		if !reflect.DeepEqual(got, exp) {
			t.Errorf("%s:\n got %s\nwant %s", name, buf.Bytes(), want)
		}
		if bytes.ContainsAny(buf.Bytes(), "\r\n") {
			t.Errorf("%s: a line break in %s", name, buf.Bytes())
		}
	}
}
