package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hubgate/hubgate/cmd/hubgate/internal/mockcli"
	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/internal/testenv"
)

// TestMockToken: `hubgate mock token` prints an access token the device
// routes accept, and with --device a device token of that device.
func TestMockToken(t *testing.T) {
	e := env(t)
	p := startMockProc(t, e, "--listen", "127.0.0.1:0")

	r := runCmd(t, e, "", "mock", "token", "--url", p.url)
	at := strings.TrimSpace(r.stdout)
	if r.code != 0 || at == "" || strings.Contains(at, "\n") {
		t.Fatalf("mock token: %+v", r)
	}
	req, _ := http.NewRequest("POST", p.url+"/api/Device/userDevices/new/mock-controller?name=curl", nil)
	req.Header.Set("Authorization", "Bearer "+at)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var dev deviceapi.UserDevice
	json.NewDecoder(resp.Body).Decode(&dev)
	resp.Body.Close()
	if resp.StatusCode != 200 || dev.ID == "" || dev.NameOverride != "curl" {
		t.Fatalf("create with the printed token: %d %+v", resp.StatusCode, dev)
	}

	r = runCmd(t, e, "", "mock", "token", "--url", p.url, "--device", dev.ID, "--json")
	var out mockcli.Tokens
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &out) != nil || out.User.AccessToken == "" || out.User.RefreshToken == "" ||
		out.User.AccessTokenExpiration == "" || out.Device == nil || out.Device.UserDeviceID != dev.ID || out.Device.Token == "" {
		t.Fatalf("mock token --device --json: %+v", r)
	}
	var devices []mockhub.DeviceInfo
	c := &mockhub.AdminClient{BaseURL: p.url}
	if devices, err = c.Devices(context.Background()); err != nil || len(devices) != 1 || len(devices[0].Tokens) != 1 || devices[0].Tokens[0].ID != out.Device.ID {
		t.Errorf("the minted device token is not the device's: %+v %v", devices, err)
	}

	// Plain output: the access token, then the device token.
	r = runCmd(t, e, "", "mock", "token", "--url", p.url, "--device", dev.ID)
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); r.code != 0 || len(lines) != 2 || lines[0] == lines[1] {
		t.Errorf("mock token --device: %+v", r)
	}
	// An unknown device: exit 1, a clear message, nothing minted.
	r = runCmd(t, e, "", "mock", "token", "--url", p.url, "--device", "nope")
	if r.code != ExitError || !strings.Contains(r.stderr, "unknown device") || r.stdout != "" {
		t.Errorf("mock token --device nope: %+v", r)
	}
}

// TestMockExplorerInChromium: the real Swagger UI at /swagger shows every
// documented route, authorizes with a token from `hubgate mock token` and
// creates a User Device; its Sign in button runs the OAuth flow and
// authorizes too.
func TestMockExplorerInChromium(t *testing.T) {
	node := testenv.RequireNode(t)
	chromium := testenv.RequireProgram(t, "chromium")
	testenv.NpmBin(t, "playwright-core/package.json")
	script := filepath.Join(testenv.ModuleRoot(t), testenv.NpmDir, "swagger-e2e.cjs")

	e := env(t)
	p := startMockProc(t, e, "--listen", "127.0.0.1:0")
	r := runCmd(t, e, "", "mock", "token", "--url", p.url)
	if r.code != 0 {
		t.Fatalf("mock token: %+v", r)
	}
	docResp, err := http.Get(p.url + mockhub.OpenAPIPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	json.NewDecoder(docResp.Body).Decode(&doc)
	docResp.Body.Close()
	var want []string
	for path, ops := range doc.Paths {
		for m := range ops {
			want = append(want, strings.ToUpper(m)+" "+path)
		}
	}
	if len(want) < 15 {
		t.Fatalf("the document has %d operations", len(want))
	}

	shot := filepath.Join(t.TempDir(), "swagger.png")
	if dir := os.Getenv("HUBGATE_SCREENSHOTS"); dir != "" {
		shot = filepath.Join(dir, "swagger.png")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Env = append(os.Environ(), "MOCK_URL="+p.url, "ACCESS_TOKEN="+strings.TrimSpace(r.stdout), "SCREENSHOT="+shot, "CHROMIUM="+chromium)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var resultLine string
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "RESULT "); ok {
			resultLine = rest
		} else {
			t.Logf("script: %s", line)
		}
	}
	if err := cmd.Wait(); err != nil || resultLine == "" {
		t.Fatalf("script: %v", err)
	}
	t.Logf("screenshot of the explorer after creating a User Device: %s", shot)

	type created struct {
		Status     string         `json:"status"`
		Body       map[string]any `json:"body"`
		BearerSent bool           `json:"bearerSent"`
	}
	var res struct {
		PageStatus         int      `json:"pageStatus"`
		Title              string   `json:"title"`
		Operations         []string `json:"operations"`
		Tags               []string `json:"tags"`
		Unauthorized       created  `json:"unauthorized"`
		Authorized         []string `json:"authorized"`
		Created            created  `json:"created"`
		SignInStatus       string   `json:"signInStatus"`
		AddressAfterSignIn string   `json:"addressAfterSignIn"`
		SignedInSchemes    []string `json:"signedInSchemes"`
		CreatedAfterSignIn created  `json:"createdAfterSignIn"`
		Console            []string `json:"console"`
		PageErrors         []string `json:"pageErrors"`
		ForeignRequests    []string `json:"foreignRequests"`
	}
	if err := json.Unmarshal([]byte(resultLine), &res); err != nil {
		t.Fatal(err)
	}
	if res.PageStatus != 200 || !strings.Contains(res.Title, "hubgate mock") {
		t.Errorf("page %d, title %q", res.PageStatus, res.Title)
	}
	slices.Sort(want)
	slices.Sort(res.Operations)
	if !slices.Equal(want, res.Operations) {
		t.Errorf("the UI shows\n%v\nthe document has\n%v", res.Operations, want)
	}
	for _, tag := range []string{mockhub.TagSignIn, mockhub.TagDevice, mockhub.TagAdmin} {
		if !slices.Contains(res.Tags, tag) {
			t.Errorf("tag %q not shown: %v", tag, res.Tags)
		}
	}
	if res.Unauthorized.Status != "401" || res.Unauthorized.BearerSent {
		t.Errorf("before Authorize: %+v", res.Unauthorized)
	}
	if !slices.Equal(res.Authorized, []string{mockhub.BearerScheme}) {
		t.Errorf("authorized schemes %v", res.Authorized)
	}
	for name, c := range map[string]created{"with the CLI's token": res.Created, "after Sign in": res.CreatedAfterSignIn} {
		if c.Status != "200" || !c.BearerSent {
			t.Errorf("create %s: %s, bearer sent %v", name, c.Status, c.BearerSent)
		}
		for _, field := range []string{"id", "nameOverride", "isVerified", "isConnected", "isListening", "isAutoListen", "isOptimisticModel", "currentProfile"} {
			if _, ok := c.Body[field]; !ok {
				t.Errorf("create %s: the answer lacks %s: %v", name, field, c.Body)
			}
		}
	}
	if res.Created.Body["nameOverride"] != "Explorer device" || res.CreatedAfterSignIn.Body["nameOverride"] != "Signed-in device" {
		t.Errorf("names: %v, %v", res.Created.Body["nameOverride"], res.CreatedAfterSignIn.Body["nameOverride"])
	}
	if !strings.HasPrefix(res.SignInStatus, "Signed in:") || res.AddressAfterSignIn != p.url+"/swagger/" ||
		!slices.Equal(res.SignedInSchemes, []string{mockhub.BearerScheme}) {
		t.Errorf("sign in: %q at %s, schemes %v", res.SignInStatus, res.AddressAfterSignIn, res.SignedInSchemes)
	}
	if len(res.PageErrors) > 0 || len(res.ForeignRequests) > 0 {
		t.Errorf("page errors %v, requests beyond the mock %v", res.PageErrors, res.ForeignRequests)
	}
	for _, c := range res.Console {
		if strings.Contains(c, "Content Security Policy") || strings.Contains(c, "Refused to") {
			t.Errorf("console: %s", c)
		}
	}
	// Both devices exist in the mock.
	devices, err := (&mockhub.AdminClient{BaseURL: p.url}).Devices(context.Background())
	if err != nil || len(devices) != 2 {
		t.Errorf("devices after the explorer: %+v %v", devices, err)
	}
}
