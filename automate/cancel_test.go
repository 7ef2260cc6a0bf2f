package automate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"testing"
)

func TestCancelIfActive(t *testing.T) {
	parkedHealth := func(active string) Health {
		h := health(true, active)
		h.AwaitingToolResults = true
		return h
	}
	for _, tc := range []struct {
		name       string
		requestID  string
		health     Health
		wantActive bool
	}{
		{"any run: one runs", "", health(true, "automate-run-1"), true},
		{"any run: one parked", "", parkedHealth("automate-run-1"), true},
		{"any run: idle", "", health(false, ""), false},
		{"own run: running", "automate-run-1", health(true, "automate-run-1"), true},
		{"own run: parked", "automate-run-1", parkedHealth("automate-run-1"), true},
		{"own run: another one runs", "automate-run-1", health(true, "automate-run-2"), false},
		{"own run: idle", "automate-run-1", health(false, ""), false},
	} {
		for _, force := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/force=%v", tc.name, force), func(t *testing.T) {
				f := newFake(t, map[string]http.HandlerFunc{
					"GET /health": func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, tc.health) },
					"POST /v1/automate/cancel": func(w http.ResponseWriter, r *http.Request) {
						writeJSON(w, 200, CancelResponse{Stopped: true, Mode: CancelModeCancel,
							RequestID: tc.health.ActiveRequestID, WorkflowStatus: tc.health.WorkflowStatus})
					},
				})
				res, err := f.client(ClientOptions{}).CancelIfActive(context.Background(), tc.requestID, force)
				if err != nil {
					t.Fatal(err)
				}
				if res.Health == nil || res.Health.Busy != tc.health.Busy || res.Active != tc.wantActive {
					t.Fatalf("result %+v, want active %v", res, tc.wantActive)
				}
				if f.count("GET /health") != 1 {
					t.Fatalf("%d health checks", f.count("GET /health"))
				}
				if !tc.wantActive {
					if res.Response != nil || f.count("POST /v1/automate/cancel") != 0 {
						t.Fatalf("cancel sent for an inactive run: %+v", res)
					}
					return
				}
				if res.Response == nil || !res.Response.Stopped || f.count("POST /v1/automate/cancel") != 1 {
					t.Fatalf("no cancel for an active run: %+v", res)
				}
				var body CancelRequest
				if err := json.Unmarshal(f.body("POST /v1/automate/cancel", 0), &body); err != nil || body.Force != force {
					t.Fatalf("cancel body %s (force %v)", f.body("POST /v1/automate/cancel", 0), force)
				}
			})
		}
	}
}

func TestCancelIfActiveHealthFailsSendsNothing(t *testing.T) {
	f := newFake(t, map[string]http.HandlerFunc{
		"GET /health": func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(502) },
	})
	res, err := f.client(ClientOptions{}).CancelIfActive(context.Background(), "", false)
	var re *ResponseError
	if !errors.As(err, &re) || re.HTTPStatus != 502 || res.Active || res.Health != nil {
		t.Fatalf("want the health check's error and nothing active, got %+v %v", res, err)
	}
	if f.count("POST /v1/automate/cancel") != 0 {
		t.Fatal("cancel sent without knowing what runs")
	}
}

func TestCancelIfActiveCancelFails(t *testing.T) {
	f := newFake(t, map[string]http.HandlerFunc{
		"GET /health":              func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, health(true, "automate-run-1")) },
		"POST /v1/automate/cancel": func(w http.ResponseWriter, r *http.Request) { envelope(w, 401, ErrTypeAuthentication, "Unauthorized") },
	})
	res, err := f.client(ClientOptions{}).CancelIfActive(context.Background(), "automate-run-1", true)
	if !errors.Is(err, ErrUnauthorized) || !res.Active || res.Response != nil {
		t.Fatalf("want an active run whose cancel failed, got %+v %v", res, err)
	}
	if f.count("POST /v1/automate/cancel") != 1 {
		t.Fatalf("%d cancels", f.count("POST /v1/automate/cancel"))
	}
}
