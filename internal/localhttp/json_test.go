package localhttp

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

func TestJSONWrite(t *testing.T) {
	type answer struct {
		Text string `json:"text"`
	}
	unencodable := map[string]any{"f": func() {}}
	for _, c := range []struct {
		name        string
		j           JSON
		status      int
		v           any
		wantStatus  int
		wantType    string
		wantCache   string
		wantBody    string
		wantEncFail bool
	}{
		{name: "zero value", status: 200, v: answer{"a<b"},
			wantStatus: 200, wantType: "application/json; charset=utf-8", wantBody: `{"text":"a\u003cb"}`},
		{name: "no-store and newline", j: JSON{NoStore: true, Newline: true}, status: 201, v: answer{"x"},
			wantStatus: 201, wantType: "application/json; charset=utf-8", wantCache: "no-store", wantBody: "{\"text\":\"x\"}\n"},
		{name: "own content type", j: JSON{ContentType: "application/problem+json"}, status: 404, v: map[string]int{"status": 404},
			wantStatus: 404, wantType: "application/problem+json", wantBody: `{"status":404}`},
		{name: "unencodable: default fallback", j: JSON{Newline: true}, status: 200, v: unencodable,
			wantStatus: 500, wantType: "application/json; charset=utf-8", wantBody: "{\"error\":\"encoding the answer failed\"}\n", wantEncFail: true},
		{name: "unencodable: own fallback", j: JSON{NoStore: true, Fallback: []byte(`{"e":1}`)}, status: 200, v: unencodable,
			wantStatus: 500, wantType: "application/json; charset=utf-8", wantCache: "no-store", wantBody: `{"e":1}`, wantEncFail: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			err := c.j.Write(rec, c.status, c.v)
			if (err != nil) != c.wantEncFail {
				t.Errorf("error %v, want an encoding error: %v", err, c.wantEncFail)
			}
			if rec.Code != c.wantStatus || rec.Body.String() != c.wantBody {
				t.Errorf("answered %d %q, want %d %q", rec.Code, rec.Body.String(), c.wantStatus, c.wantBody)
			}
			if got := rec.Header().Get("Content-Type"); got != c.wantType {
				t.Errorf("Content-Type %q, want %q", got, c.wantType)
			}
			if got := rec.Header().Values("Cache-Control"); len(got) > 1 || rec.Header().Get("Cache-Control") != c.wantCache {
				t.Errorf("Cache-Control %q, want %q", got, c.wantCache)
			}
		})
	}
}

// TestJSONFallbackIsNotShared: answering the fallback with a newline,
// from many goroutines, leaves the shared fallback as it was (run with
// -race).
func TestJSONFallbackIsNotShared(t *testing.T) {
	fallback := make([]byte, 0, 64) // room to append into
	fallback = append(fallback, `{"e":1}`...)
	j := JSON{Newline: true, Fallback: fallback}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			rec := httptest.NewRecorder()
			if err := j.Write(rec, 200, func() {}); err == nil || rec.Body.String() != "{\"e\":1}\n" {
				t.Errorf("answered %v %q", err, rec.Body.String())
			}
		})
	}
	wg.Wait()
	if string(j.Fallback) != `{"e":1}` {
		t.Errorf("the fallback became %q", j.Fallback)
	}
}

func TestJSONWriteEncoded(t *testing.T) {
	rec := httptest.NewRecorder()
	JSON{NoStore: true}.WriteEncoded(rec, http.StatusAccepted, []byte(`{"ok":true}`))
	if rec.Code != 202 || rec.Body.String() != `{"ok":true}` ||
		rec.Header().Get("Content-Type") != DefaultJSONContentType || rec.Header().Get("Cache-Control") != "no-store" {
		t.Errorf("answered %d %q %v", rec.Code, rec.Body.String(), rec.Header())
	}
}
