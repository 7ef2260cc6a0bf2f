package mockhub

import (
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/go-chi/chi/v5"
	"github.com/swaggest/swgui/v5/static"
	"github.com/vearutop/statigz"
)

// Where the explorer lives.
const (
	explorerPath = "/swagger"
	// OpenAPIPath is where Swagger UI reads the document: Swashbuckle's
	// default path, as an ASP.NET Core service serves it.
	OpenAPIPath = explorerPath + "/v1/swagger.json"
	// OpenAPIAltPath is a second, plainer path of the same document.
	OpenAPIAltPath = explorerPath + "/openapi.json"
)

// explorerCSP allows Swagger UI's own files and its inline start-up
// script, nothing from elsewhere.
const explorerCSP = "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; form-action 'self'"

// explorerRoutes serves Swagger UI (github.com/swaggest/swgui's build, its
// files embedded in the binary) over the generated document, with a Sign
// in button above it.
func (s *Server) explorerRoutes(r chi.Router) {
	page := []byte(explorerPage(s.signInBar()))
	index := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", explorerCSP)
		w.Header().Set("Cache-Control", "no-cache")
		w.Write(page)
	}
	r.Get("/", index)
	r.Get("/index.html", index)
	r.Get("/v1/swagger.json", s.handleOpenAPI)
	r.Get("/openapi.json", s.handleOpenAPI)
	r.Get("/*", func(w http.ResponseWriter, r *http.Request) { // Swagger UI's scripts, styles and icons
		explorerAssets().ServeHTTP(w, r)
	})
}

// explorerAssets serves Swagger UI's files from swgui/v5/static (gzipped:
// sent as they are to a browser that takes gzip, unpacked for one that
// does not). Built on the explorer's first request, not at start as
// swgui's v5emb package does: statigz reads and hashes every file, 231 KB
// and the pages of 1.5 MB of embedded files that no other hubgate
// process (the daemon above all) should pay for.
func explorerAssets() http.Handler {
	explorerFiles.once.Do(func() {
		explorerFiles.h = http.StripPrefix(explorerPath+"/", statigz.FileServer(static.FS))
	})
	return explorerFiles.h
}

var explorerFiles struct {
	once sync.Once
	h    http.Handler
}

// explorerPage is the explorer's index: Swagger UI's standalone bootstrap
// (as swgui's template, without its proxy and scheme hooks) reading
// OpenAPIPath, with the sign-in bar above it. The sign-in script finds the
// UI as window.ui.
func explorerPage(signInBar template.HTML) string {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<title>Device service (hubgate mock) - Swagger UI</title>
<link rel="stylesheet" type="text/css" href="` + explorerPath + `/swagger-ui.css">
<link rel="icon" type="image/png" href="` + explorerPath + `/favicon-32x32.png" sizes="32x32"/>
<link rel="icon" type="image/png" href="` + explorerPath + `/favicon-16x16.png" sizes="16x16"/>
<style>
html { box-sizing: border-box; overflow: -moz-scrollbars-vertical; overflow-y: scroll; }
*, *:before, *:after { box-sizing: inherit; }
body { margin: 0; background: #fafafa; }
</style>
`)
	b.WriteString(string(signInStyle))
	b.WriteString("\n</head>\n<body>\n")
	b.WriteString(string(signInBar))
	b.WriteString(`
<div id="swagger-ui"></div>
<script src="` + explorerPath + `/swagger-ui-bundle.js"></script>
<script src="` + explorerPath + `/swagger-ui-standalone-preset.js"></script>
<script>
window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: location.origin + "` + OpenAPIPath + `",
    dom_id: "#swagger-ui",
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl],
    layout: "StandaloneLayout",
    showExtensions: true,
    showCommonExtensions: true,
    validatorUrl: null,
    defaultModelsExpandDepth: 1,
    docExpansion: "list",
    displayRequestDuration: true,
    tryItOutEnabled: true,
    filter: true
  });
};
</script>
</body>
</html>
`)
	return b.String()
}

// explorerRedirect is the explorer's own sign-in redirect address, as the
// browser reached the mock: the Sign in button sends it as redirect_uri.
func explorerRedirect(r *http.Request) string {
	return "http://" + r.Host + explorerPath + "/"
}

// checkRedirectFor checks a sign-in's redirect URI: the explorer's own
// address is always accepted (the code comes back to the mock itself),
// else checkRedirect decides. The rule holds only for the names the mock
// serves: a request under any other Host never gets here (hostOnly), and
// behind a public URL (a TLS tunnel) the explorer's address is that
// URL's.
func (s *Server) checkRedirectFor(r *http.Request, raw string) (*url.URL, error) {
	if r.TLS == nil && raw == explorerRedirect(r) {
		return url.Parse(raw)
	}
	for _, p := range s.public {
		if raw == p.base+explorerPath+"/" && slices.Contains(p.hosts, strings.ToLower(r.Host)) {
			return url.Parse(raw)
		}
	}
	return s.checkRedirect(raw)
}

const signInStyle = template.HTML(`<style>
#mock-signin { font-family: sans-serif; font-size: 14px; padding: 10px 20px; background: #1b1b1b; color: #eee; display: flex; gap: 12px; align-items: center; }
#mock-signin button { font-size: 14px; padding: 4px 14px; cursor: pointer; }
#mock-signin code { color: #9f9; }
</style>`)

// signInBar is the Sign in button above Swagger UI. It runs the sign-in
// as the vendor's browser sample does (/signin with client_id,
// redirect_uri, response_type=code and state; then POST /signin/token
// with grant_type=code in the query string), with the explorer's own
// address as redirect_uri, checks the state, and puts the access token
// into Swagger UI's Authorize box (preauthorizeApiKey).
func (s *Server) signInBar() template.HTML {
	cfg, _ := json.Marshal(map[string]string{"clientId": s.cfg.ClientID, "scheme": BearerScheme, "path": explorerPath + "/"})
	return template.HTML(`<div id="mock-signin">
<button id="mock-signin-button" type="button">Sign in</button>
<span id="mock-signin-status">Signs in as the mock's user (OAuth, as the vendor's browser sample) and authorizes the explorer. Or paste <code>hubgate mock token</code> into Authorize (Authorization: Bearer).</span>
</div>
<script>
(function () {
  var cfg = ` + string(cfg) + `;
  var redirect = location.origin + cfg.path;
  var status = function (text) { document.getElementById('mock-signin-status').textContent = text; };
  document.getElementById('mock-signin-button').addEventListener('click', function () {
    var state = Array.from(crypto.getRandomValues(new Uint8Array(16)), function (b) { return b.toString(16).padStart(2, '0'); }).join('');
    sessionStorage.setItem('mock-signin-state', state);
    location.assign('/signin?' + new URLSearchParams({ client_id: cfg.clientId, redirect_uri: redirect, response_type: 'code', state: state }));
  });
  var q = new URLSearchParams(location.search);
  if (!q.has('code') && !q.has('error')) { return; }
  history.replaceState(null, '', cfg.path + location.hash);
  var want = sessionStorage.getItem('mock-signin-state');
  sessionStorage.removeItem('mock-signin-state');
  if (q.has('error')) { status('Sign-in failed: ' + q.get('error') + ' ' + (q.get('error_description') || '')); return; }
  if (!want || q.get('state') !== want) { status('Sign-in refused: the state does not match the one this page sent.'); return; }
  status('Signing in...');
  fetch('/signin/token?' + new URLSearchParams({ grant_type: 'code', code: q.get('code'), client_id: cfg.clientId, redirect_uri: redirect }), { method: 'POST' })
    .then(function (resp) { return resp.json().then(function (body) { return { ok: resp.ok, body: body }; }); })
    .then(function (res) {
      if (!res.ok || !res.body.access_token) { throw new Error((res.body.error || 'error') + ' ' + (res.body.error_description || '')); }
      var tries = 0;
      var timer = setInterval(function () {
        var ready = window.ui && window.ui.getSystem().specSelectors.securityDefinitions();
        if (!ready && ++tries < 100) { return; }
        clearInterval(timer);
        if (!ready) { status('Signed in, but the document did not load: paste the token into Authorize.'); return; }
        window.ui.preauthorizeApiKey(cfg.scheme, res.body.access_token);
        status('Signed in: the access token (expires ' + res.body.access_token_expiration + ') is in Authorize.');
      }, 100);
    })
    .catch(function (err) { status('Sign-in failed: ' + err.message); });
})();
</script>`)
}
