package mockhub_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/hub/mockhub"
)

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestDeviceRoutes(t *testing.T) {
	_, ts := newMock(t, mockhub.Config{})
	at := signIn(t, ts.URL).AccessToken
	api := ts.URL + "/api/Device/userDevices"

	// Create: every flag false, currentProfile null, exact JSON names.
	st, _, body := call(t, "POST", api+"/new/mock-controller?name=Desk%20pad", at, nil, nil)
	if st != 200 {
		t.Fatalf("create: %d %s", st, body)
	}
	var raw map[string]json.RawMessage
	json.Unmarshal([]byte(body), &raw)
	for _, k := range []string{"isVerified", "isConnected", "isListening", "isAutoListen", "isOptimisticModel"} {
		if string(raw[k]) != "false" {
			t.Errorf("%s = %s", k, raw[k])
		}
	}
	if string(raw["currentProfile"]) != "null" || string(raw["nameOverride"]) != `"Desk pad"` {
		t.Errorf("created %s", body)
	}
	var dev deviceapi.UserDevice
	json.Unmarshal([]byte(body), &dev)
	if !uuidRE.MatchString(dev.ID) {
		t.Errorf("device id %q is not a UUID", dev.ID)
	}

	// Token.
	var tok deviceapi.DeviceToken
	if st, _, body := call(t, "POST", api+"/"+dev.ID+"/tokens", at, nil, &tok); st != 200 {
		t.Fatalf("token: %d %s", st, body)
	}
	if !uuidRE.MatchString(tok.ID) || tok.UserDeviceID != dev.ID || len(tok.Token) != 43 || tok.IsDisabled {
		t.Errorf("token %+v (len %d)", tok, len(tok.Token))
	}
	var tok2 deviceapi.DeviceToken
	call(t, "POST", api+"/"+dev.ID+"/tokens", at, nil, &tok2)
	if tok2.Token == tok.Token || tok2.ID == tok.ID {
		t.Error("a second token repeats the first")
	}

	// Get.
	var got deviceapi.UserDevice
	if st, _, body := call(t, "GET", api+"/"+dev.ID, at, nil, &got); st != 200 || got.ID != dev.ID || got.NameOverride != "Desk pad" {
		t.Errorf("get: %d %s", st, body)
	}

	// Errors are problem details.
	for _, tc := range []struct {
		method, url string
		status      int
	}{
		{"POST", api + "/new/other-type?name=x", 404},
		{"POST", api + "/new/mock-controller", 400},
		{"POST", api + "/new/mock-controller?name=", 400},
		{"POST", api + "/no-such-device/tokens", 404},
		{"GET", api + "/no-such-device", 404},
		{"DELETE", api + "/" + dev.ID, 405},
	} {
		st, h, body := call(t, tc.method, tc.url, at, nil, nil)
		var p mockhub.Problem
		json.Unmarshal([]byte(body), &p)
		if st != tc.status || h.Get("Content-Type") != "application/problem+json" || p.Status != tc.status || p.Title == "" {
			t.Errorf("%s %s: %d %q %s", tc.method, tc.url, st, h.Get("Content-Type"), body)
		}
	}
}

func TestDeviceRoutesNeedTheUserBearer(t *testing.T) {
	s, ts := newMock(t, mockhub.Config{})
	dev, _, _ := s.CreateDevice("", "")
	api := ts.URL + "/api/Device/userDevices"
	routes := [][2]string{
		{"POST", api + "/new/mock-controller?name=x"},
		{"POST", api + "/" + dev.ID + "/tokens"},
		{"GET", api + "/" + dev.ID},
	}
	for _, r := range routes {
		for name, auth := range map[string]string{
			"none":         "",
			"wrong scheme": "Basic bW9jay1jbGllbnQ6bW9jay1zZWNyZXQ=",
			"unknown":      "Bearer not-a-token",
			"empty bearer": "Bearer ",
		} {
			req, _ := http.NewRequest(r[0], r[1], nil)
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 401 || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("%s %s with %s: %d %v", r[0], r[1], name, resp.StatusCode, resp.Header)
			}
		}
	}
	// A device token is not a user token.
	_, tok, _ := s.CreateDevice("", "")
	if st, _, _ := call(t, "GET", api+"/"+dev.ID, tok.Token, nil, nil); st != 401 {
		t.Errorf("device token accepted on REST: %d", st)
	}
	if len(s.Devices()) != 2 {
		t.Errorf("a refused request created a device: %d", len(s.Devices()))
	}
}

func TestSwagger(t *testing.T) {
	_, ts := newMock(t, mockhub.Config{})
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	st, h, body := call(t, "GET", ts.URL+"/swagger/v1/swagger.json", "", nil, &doc)
	if st != 200 || !strings.HasPrefix(h.Get("Content-Type"), "application/json") || !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("document: %d %s", st, body[:min(len(body), 200)])
	}
	want := map[string]string{
		"/api/Device/userDevices/new/{deviceTypeId}":    "post",
		"/api/Device/userDevices/{userDeviceId}/tokens": "post",
		"/api/Device/userDevices/{userDeviceId}":        "get",
		"/signin/token":                                 "post",
		"/signin":                                       "get",
	}
	for p, m := range want {
		if _, ok := doc.Paths[p][m]; !ok {
			t.Errorf("document lacks %s %s", m, p)
		}
	}
	// Every documented operation exists on the router (no 404/405).
	for p, ops := range doc.Paths {
		for m := range ops {
			u := ts.URL + strings.NewReplacer("{deviceTypeId}", "mock-controller", "{userDeviceId}", "x").Replace(p)
			st, _, body := call(t, strings.ToUpper(m), u, "", nil, nil)
			if st == 404 && strings.Contains(body, "no route") || st == 405 {
				t.Errorf("documented %s %s is not routed: %d", m, p, st)
			}
		}
	}
	for _, path := range []string{"/swagger", "/swagger/", "/swagger/index.html"} {
		st, h, page := call(t, "GET", ts.URL+path, "", nil, nil)
		if st != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
			t.Fatalf("%s: %d", path, st)
		}
		if !strings.Contains(page, "/swagger/v1/swagger.json") || !strings.Contains(page, "Authorization") || !strings.Contains(page, "fetch(") {
			t.Errorf("%s does not load the document or send a bearer", path)
		}
		// Offline: no external assets.
		if regexp.MustCompile(`(src|href)="(https?:)?//`).MatchString(page) {
			t.Errorf("%s references an external asset", path)
		}
	}
}
