package mockhub_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/go-chi/chi/v5"

	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/internal/testenv"
)

// undocumented are the router's patterns the document leaves out on
// purpose: the SignalR hub (a transport, described in docs/mockhub.md)
// and the explorer itself.
func undocumented(pattern string) bool {
	return pattern == mockhub.HubPath || strings.HasPrefix(pattern, mockhub.HubPath+"/") || strings.HasPrefix(pattern, "/swagger")
}

// loadDoc loads the mock's document with kin-openapi, an implementation
// independent of the generator's, and validates it.
func loadDoc(t *testing.T, s *mockhub.Server) (*openapi3.T, routers.Router) {
	t.Helper()
	b, err := s.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("the document is not valid OpenAPI 3: %v", err)
	}
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return doc, router
}

// TestOpenAPIDocumentsEveryRoute: every route of the router is in the
// document and every documented operation is routed.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	s, _ := newMock(t, mockhub.Config{})
	doc, _ := loadDoc(t, s)
	var routed, documented []string
	err := chi.Walk(mockhub.RouterOf(s), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		route = strings.TrimSuffix(strings.ReplaceAll(route, "/*/", "/"), "/*")
		if route != "/" && strings.HasSuffix(route, "/") {
			route = strings.TrimSuffix(route, "/")
		}
		if !undocumented(route) {
			routed = append(routed, method+" "+route)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented = append(documented, method+" "+path)
		}
	}
	sort.Strings(routed)
	sort.Strings(documented)
	routed = slices.Compact(routed)
	for _, r := range routed {
		if !slices.Contains(documented, r) {
			t.Errorf("routed but not documented: %s", r)
		}
	}
	for _, d := range documented {
		if !slices.Contains(routed, d) {
			t.Errorf("documented but not routed: %s", d)
		}
	}
	if len(documented) < 18 {
		t.Errorf("only %d operations documented: %v", len(documented), documented)
	}
}

// TestOpenAPIContract checks the mock's real answers against the document
// for every documented route and status: the request (when it is one the
// document allows) and the answer (status, headers, body schema), with
// kin-openapi's openapi3filter.
func TestOpenAPIContract(t *testing.T) {
	s, ts := newMock(t, mockhub.Config{})
	doc, router := loadDoc(t, s)
	openapi3filter.RegisterBodyDecoder("application/problem+json", openapi3filter.JSONBodyDecoder)
	plain := []string{"text/html", "text/javascript", "text/css", "text/event-stream"}
	for _, ct := range plain {
		openapi3filter.RegisterBodyDecoder(ct, openapi3filter.PlainBodyDecoder)
	}
	t.Cleanup(func() {
		openapi3filter.UnregisterBodyDecoder("application/problem+json")
		for _, ct := range plain {
			openapi3filter.UnregisterBodyDecoder(ct)
		}
	})
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	covered := map[string]bool{}

	type req struct {
		method, path, body string
		bearer, host       string
		accept             string
		form               bool // body is a form
		valid              bool // the request is one the document allows
	}
	// do sends r, checks the answer against the document and returns it.
	do := func(r req, want int) (int, []byte, http.Header) {
		t.Helper()
		var body io.Reader
		if r.body != "" {
			body = strings.NewReader(r.body)
		}
		hr, err := http.NewRequest(r.method, ts.URL+r.path, body)
		if err != nil {
			t.Fatal(err)
		}
		if r.body != "" {
			hr.Header.Set("Content-Type", "application/json")
			if r.form {
				hr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
		}
		if r.bearer != "" {
			hr.Header.Set("Authorization", "Bearer "+r.bearer)
		}
		if r.host != "" {
			hr.Host = r.host
		}
		if r.accept != "" {
			hr.Header.Set("Accept", r.accept)
		}
		resp, err := client.Do(hr)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		name := fmt.Sprintf("%s %s", r.method, r.path)
		if resp.StatusCode != want {
			t.Errorf("%s: %d, want %d: %s", name, resp.StatusCode, want, b)
		}
		// Route the request as the document sees it (on the document's
		// own server URL).
		vr, _ := http.NewRequest(r.method, "http://127.0.0.1"+r.path, strings.NewReader(r.body))
		vr.Header = hr.Header.Clone()
		route, params, err := router.FindRoute(vr)
		if err != nil {
			t.Errorf("%s: not in the document: %v", name, err)
			return resp.StatusCode, b, resp.Header
		}
		covered[fmt.Sprintf("%s %s %d", r.method, route.Path, resp.StatusCode)] = true
		in := &openapi3filter.RequestValidationInput{Request: vr, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
		if r.valid {
			if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
				t.Errorf("%s: the request does not match the document: %v", name, err)
			}
		}
		out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header,
			Options: &openapi3filter.Options{IncludeResponseStatus: true}}
		out.SetBodyBytes(b)
		if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
			t.Errorf("%s: the answer %d does not match the document: %v\n%s", name, resp.StatusCode, err, b)
		}
		return resp.StatusCode, b, resp.Header
	}
	const rebind = "rebind.example"

	// Sign-in.
	redirect := "http://127.0.0.1:1/callback"
	signin := url.Values{"client_id": {mockhub.DefaultClientID}, "redirect_uri": {redirect}, "response_type": {"code"}, "state": {"s"}}
	var code string
	for _, p := range []string{"/signin", "/signin/authorize"} {
		_, _, h := do(req{method: "GET", path: p + "?" + signin.Encode(), valid: true}, 302)
		loc, _ := url.Parse(h.Get("Location"))
		code = loc.Query().Get("code")
		do(req{method: "GET", path: p + "?client_id=nope&redirect_uri=" + url.QueryEscape(redirect), valid: true}, 400)
	}
	tokQ := url.Values{"grant_type": {"code"}, "code": {code}, "client_id": {mockhub.DefaultClientID}, "redirect_uri": {redirect}}
	_, b, _ := do(req{method: "POST", path: "/signin/token?" + tokQ.Encode(), valid: true}, 200)
	var tokens mockhub.TokenResponse
	json.Unmarshal(b, &tokens)
	refresh := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tokens.RefreshToken}, "client_id": {mockhub.DefaultClientID}}
	do(req{method: "POST", path: "/signin/token", body: refresh.Encode(), form: true, valid: true}, 200)
	do(req{method: "POST", path: "/signin/token?" + tokQ.Encode(), valid: true}, 400) // the code again
	do(req{method: "POST", path: "/signin/token?grant_type=code&code=x", valid: true}, 401)
	at := s.SignIn().AccessToken

	// Device REST.
	_, b, _ = do(req{method: "POST", path: "/api/Device/userDevices/new/" + mockhub.DefaultDeviceTypeID + "?name=Contract", bearer: at, valid: true}, 200)
	var dev struct{ ID string }
	json.Unmarshal(b, &dev)
	do(req{method: "POST", path: "/api/Device/userDevices/new/" + mockhub.DefaultDeviceTypeID, bearer: at}, 400)
	do(req{method: "POST", path: "/api/Device/userDevices/new/" + mockhub.DefaultDeviceTypeID + "?name=x"}, 401)
	do(req{method: "POST", path: "/api/Device/userDevices/new/nope?name=x", bearer: at, valid: true}, 404)
	for _, p := range []struct{ method, suffix string }{{"POST", "/tokens"}, {"GET", ""}} {
		do(req{method: p.method, path: "/api/Device/userDevices/" + dev.ID + p.suffix, bearer: at, valid: true}, 200)
		do(req{method: p.method, path: "/api/Device/userDevices/" + dev.ID + p.suffix}, 401)
		do(req{method: p.method, path: "/api/Device/userDevices/nope" + p.suffix, bearer: at, valid: true}, 404)
	}

	// Admin API.
	dp := "/mock/devices/" + dev.ID
	profile, _ := json.Marshal(examplesOf(t, doc, "/mock/devices/{id}/profile"))
	command, _ := json.Marshal(examplesOf(t, doc, "/mock/devices/{id}/command"))
	do(req{method: "POST", path: "/mock/signin", valid: true}, 200)
	do(req{method: "POST", path: "/mock/devices", body: `{"name":"Admin"}`, valid: true}, 201)
	do(req{method: "POST", path: "/mock/devices", body: `{"name":`}, 400)
	do(req{method: "POST", path: "/mock/devices", body: `{"deviceTypeId":"nope"}`, valid: true}, 404)
	do(req{method: "GET", path: "/mock/devices", valid: true}, 200)
	_, b, _ = do(req{method: "POST", path: dp + "/tokens", valid: true}, 201)
	var devTok struct{ ID, Token string }
	json.Unmarshal(b, &devTok)
	do(req{method: "POST", path: "/mock/devices/nope/tokens", valid: true}, 404)
	pushes := []struct{ action, body, bad string }{
		{"command", string(command), `{}`}, {"settings", `{"isAutoListen":true}`, `not json`},
		{"start-listening", "", ""}, {"stop-listening", "", ""},
	}
	for _, p := range pushes {
		do(req{method: "POST", path: dp + "/" + p.action, body: p.body, valid: true}, 409) // no hub connection yet
		do(req{method: "POST", path: "/mock/devices/nope/" + p.action, body: p.body, valid: true}, 404)
		if p.bad != "" {
			do(req{method: "POST", path: dp + "/" + p.action, body: p.bad}, 400)
		}
	}
	do(req{method: "POST", path: dp + "/profile", body: string(profile), valid: true}, 200)
	do(req{method: "POST", path: dp + "/profile", body: `[]`}, 400)
	do(req{method: "POST", path: "/mock/devices/nope/profile", body: string(profile), valid: true}, 404)

	conn, err := rawDial(t, ts.URL, hubHeaders(devTok.Token))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.close()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if _, err := s.WaitEvent(ctx, 0, func(e mockhub.Event) bool { return e.Action == "connected" && e.DeviceID == dev.ID }); err != nil {
		t.Fatal(err)
	}
	for _, p := range pushes {
		do(req{method: "POST", path: dp + "/" + p.action, body: p.body, valid: true}, 200)
	}
	do(req{method: "POST", path: "/mock/faults", body: `{"refuseFor":"0s","freeze":"0s"}`, valid: true}, 200)
	do(req{method: "POST", path: "/mock/faults", body: `{"refuseFor":5}`}, 400)
	do(req{method: "POST", path: dp + "/start-listening?connection=nope", valid: true}, 409)
	do(req{method: "POST", path: dp + "/profile?connection=nope", body: string(profile), valid: true}, 409)
	do(req{method: "POST", path: dp + "/command", body: `{"macroName":"Nope"}`, valid: true}, 404)
	do(req{method: "POST", path: dp + "/command", body: `{"macroName":"space"}`, valid: true}, 200)
	do(req{method: "POST", path: dp + "/command", body: `{"macroName":"Space"}`, valid: true}, 200)
	for _, p := range []string{"/mock/journal?after=0&device=" + dev.ID, "/mock/journal?after=0&wait=0s", "/mock/events?since=0"} {
		_, b, _ := do(req{method: "GET", path: p, valid: true}, 200)
		var page mockhub.EventsPage
		if json.Unmarshal(b, &page); len(page.Events) == 0 {
			t.Errorf("%s: no entries: %s", p, b)
		}
	}
	do(req{method: "GET", path: "/mock/journal?after=-1"}, 400)
	do(req{method: "GET", path: "/mock/events?since=-1"}, 400)
	do(req{method: "GET", path: "/mock/journal?wait=2m"}, 400)
	checkStream(t, ts.URL+"/mock/journal?after=0", doc)
	_, b, _ = do(req{method: "GET", path: "/mock", valid: true}, 200)
	var idx mockhub.AdminIndex
	json.Unmarshal(b, &idx)
	if len(idx.Routes) != len(s.AdminRoutes()) || len(idx.Routes) < 15 {
		t.Errorf("GET /mock lists %d routes: %s", len(idx.Routes), b)
	}
	do(req{method: "GET", path: "/mock", accept: "text/html", valid: true}, 200)
	do(req{method: "GET", path: "/mock/console", valid: true}, 200)
	do(req{method: "GET", path: "/mock/console/console.js", valid: true}, 200)
	do(req{method: "GET", path: "/mock/console/console.css", valid: true}, 200)
	do(req{method: "GET", path: "/mock/console/secret.txt"}, 404)
	do(req{method: "POST", path: "/mock/tokens/" + devTok.ID + "/disable", valid: true}, 200)
	do(req{method: "POST", path: "/mock/tokens/nope/disable", valid: true}, 404)

	// Every admin route refuses a Host that does not name the loopback.
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			if strings.HasPrefix(path, "/mock") {
				p := strings.NewReplacer("{id}", dev.ID, "{tokenId}", devTok.ID, "{file}", "console.js").Replace(path)
				do(req{method: method, path: p, host: rebind}, 403)
			}
		}
	}

	// Every documented status was seen.
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for status := range op.Responses.Map() {
				if k := method + " " + path + " " + status; !covered[k] {
					t.Errorf("no answer checked for %s", k)
				}
			}
		}
	}
}

// checkStream reads the first event of the journal's live mode and checks
// that its content type is one the document gives for GET /mock/journal
// and that it carries a journal entry.
func checkStream(t *testing.T, url string, doc *openapi3.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	r, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	r.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	ct, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";")
	if resp.StatusCode != 200 || doc.Paths.Find("/mock/journal").Get.Responses.Status(200).Value.Content.Get(ct) == nil {
		t.Errorf("the journal stream: %d %q is not documented", resp.StatusCode, ct)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var e mockhub.Event
			if err := json.Unmarshal([]byte(line), &e); err != nil || e.Seq == 0 {
				t.Errorf("the stream's first event is not an entry: %s", line)
			}
			return
		}
	}
	t.Errorf("the stream ended without an event: %v", sc.Err())
}

// examplesOf returns the request body example of the POST at path.
func examplesOf(t *testing.T, doc *openapi3.T, path string) any {
	t.Helper()
	op := doc.Paths.Find(path).Post
	ex := op.RequestBody.Value.Content.Get("application/json").Example
	if ex == nil {
		t.Fatalf("%s has no request example", path)
	}
	return ex
}

// TestOpenAPIParameterExamplesFollowConfig: the parameters that take the
// client id, the device type and the grant type have this server's
// values as their examples (the embedded document is generated once for
// every configuration).
func TestOpenAPIParameterExamplesFollowConfig(t *testing.T) {
	s, _ := newMock(t, mockhub.Config{ClientID: "client-x", DeviceTypeID: "type-x"})
	doc, _ := loadDoc(t, s)
	want := map[string]any{"client_id": "client-x", "deviceTypeId": "type-x", "grant_type": "code"}
	seen := map[string]int{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for _, p := range op.Parameters {
				w, ok := want[p.Value.Name]
				if !ok {
					continue
				}
				seen[p.Value.Name]++
				if p.Value.Example != w {
					t.Errorf("%s %s: parameter %s (%s) has example %v, want %v", method, path, p.Value.Name, p.Value.In, p.Value.Example, w)
				}
			}
		}
	}
	for name := range want {
		if seen[name] == 0 {
			t.Errorf("no operation has a parameter %s", name)
		}
	}
}

// TestOpenAPIValidatesWithSwaggerParser validates the document with
// @apidevtools/swagger-parser (npm), a validator independent of both Go
// libraries.
func TestOpenAPIValidatesWithSwaggerParser(t *testing.T) {
	node := testenv.RequireNode(t)
	testenv.NpmBin(t, "@apidevtools/swagger-parser/package.json")
	s, _ := newMock(t, mockhub.Config{})
	b, err := s.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "openapi.json")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(testenv.ModuleRoot(t), testenv.NpmDir, "openapi-validate.cjs")
	var out bytes.Buffer
	cmd := exec.Command(node, script, file)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil || !strings.Contains(out.String(), "VALID") {
		t.Fatalf("swagger-parser: %v\n%s", err, out.String())
	}
	// The validator is not a rubber stamp: a broken document fails.
	broken := bytes.Replace(b, []byte(`"$ref": "#/components/schemas/UserDevice"`), []byte(`"$ref": "#/components/schemas/Nope"`), 1)
	os.WriteFile(file, broken, 0o600)
	out.Reset()
	if err := exec.Command(node, script, file).Run(); err == nil {
		t.Errorf("swagger-parser accepted a document with a dangling $ref")
	}
}

// TestExplorerRedirectAccepted: the sign-in accepts the explorer's own
// address as redirect_uri even when registered addresses are set; any
// other address of the mock is still refused.
func TestExplorerRedirectAccepted(t *testing.T) {
	_, ts := newMock(t, mockhub.Config{RedirectURIs: []string{"http://127.0.0.1:51772/"}})
	for _, c := range []struct {
		redirect string
		want     int
	}{{ts.URL + "/swagger/", 302}, {ts.URL + "/other/", 400}, {"http://127.0.0.1:51772/", 302}} {
		q := url.Values{"client_id": {mockhub.DefaultClientID}, "redirect_uri": {c.redirect}, "state": {"s"}}
		st, loc, _ := authorize(t, ts.URL, q)
		if st != c.want {
			t.Errorf("redirect_uri %s: %d, want %d", c.redirect, st, c.want)
		}
		if st == 302 && (loc.Query().Get("code") == "" || !strings.HasPrefix(loc.String(), c.redirect)) {
			t.Errorf("redirect_uri %s: sent to %s", c.redirect, loc)
		}
	}
}
