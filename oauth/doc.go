// Package oauth owns the user's sign-in to the remote device service
// (docs/specs/device-hub.md, Authentication): the authorization code
// flow on a loopback redirect, the token exchange at {api_url}/signin/token,
// and a token source that refreshes the access token and persists a
// rotated refresh token. It speaks the token endpoint itself (form POST,
// JSON answer) and uses golang.org/x/oauth2 only for its Token type, the
// PKCE verifier and the authorization URL. It stores nothing itself except
// through the secret setter it is given, and never prints or logs a code,
// a token, the PKCE verifier or the client secret.
//
// The real service decides (docs/real-service.md). Facts
// followed, from the vendor's public clients (Cephable-Unity-Plugin
// OAuth2Manager.cs; Cephable-VirtualController-Sample src/browser/index.html,
// src/android/.../MainActivity.kt, src/iOS/.../ContentView.swift,
// src/c++/CephableClient.cpp):
//   - Login page: {api_url}/signin (Config.AuthURL overrides) with
//     client_id, redirect_uri, response_type=code and state (Android and
//     iOS send state, Unity response_type). PKCE (code_challenge,
//     S256) is added: no sample sends it, a service that does not know it
//     ignores it, and it protects the code on a loopback redirect.
//   - Exchange: POST {api_url}/signin/token with grant_type=code, code,
//     client_id, redirect_uri as form parameters (Android and iOS send a
//     form body; browser, C++ and Unity the same names in the query; a
//     body keeps the code out of server logs). No sample sends a client
//     secret on the exchange: Config.ClientSecret is optional and, when
//     set, is sent as the client_secret parameter, never with HTTP Basic.
//     (x/oauth2's AuthStyleAutoDetect would try Basic and silently resend
//     the exchange with a spent code; this package never uses it.)
//     Config.Grant = GrantAuthorizationCode sends the standard
//     grant_type=authorization_code instead, for services that want it.
//   - Refresh, as Unity does: grant_type=refresh_token, refresh_token,
//     client_id, client_secret when known, redirect_uri (the one of the
//     sign-in).
//   - Token answer: access_token, refresh_token, access_token_expiration,
//     refresh_token_expiration (Unity's TokenResponse); no expires_in is
//     shown. Both are read: expires_in (seconds) when present, else
//     access_token_expiration parsed by ParseExpiration (ISO 8601 with or
//     without zone, .NET forms, HTTP dates, Unix time). A value that cannot
//     be read means "unknown": the token is used until a call is refused
//     with it (TokenSource.Invalidate, called by deviceapi on a 401), then
//     refreshed once.
//   - Redirect: the samples use fixed addresses registered in the
//     developer portal (http://127.0.0.1:51772/, http://localhost:8080/callback).
//     Config.RedirectURI sets one; the listener binds its host and port and
//     answers only its path. Zero: http://127.0.0.1:<OS-chosen port>/callback.
//   - State: no sample checks that the service echoes it (Unity's check is
//     commented out). A wrong state is always refused (the callback is
//     answered and ignored, the flow keeps waiting: another tab or a stale
//     link must not abort a sign-in in progress). A callback WITHOUT state
//     ends the flow with a *StateError naming the setting that accepts it
//     (Config.MissingStateHint; `hubgate pair` says remote.allow_missing_state):
//     a fixed redirect port is reachable by any web page, which could
//     otherwise pair the device to another account; and a service that
//     never echoes the state is better told at once than after the timeout.
//     Config.AllowMissingState accepts it.
//
// Other choices:
//   - State: 32 random bytes, base64url. The first callback with the right
//     state ends the flow, with its code or its error; later ones are told
//     the sign-in has finished.
//   - The success page is shown only after the code was exchanged, so the
//     browser tells the truth; an error page shows the service's error and
//     error_description (HTML-escaped).
//   - Overall timeout: LoginOptions.Timeout, default 5 minutes; the
//     listener is shut down when the flow ends, whatever the outcome.
//   - Client.Probe checks that {api_url} answers at all (any HTTP status)
//     within 5 s, so that a wrong address fails in seconds (ErrUnreachable).
//   - The sign-in page is checked while the person waits (the service's
//     answer to an unknown client id is not shown; the mock answers 400):
//     Login GETs the printed address once, with a state of its own (its
//     answer can neither complete nor disturb the person's sign-in) and
//     without following a redirect (a service that approves at once
//     would send a code). A 4xx answer ends the flow at once with a
//     *SignInPageError (ErrSignInPage) carrying the status and the start
//     of the page's text and naming the likely causes, the client id and
//     the redirect address; nobody could sign in there, and waiting for
//     the timeout helps no one. A 2xx or 3xx answer is a page to sign in
//     on; a 5xx answer or no answer within 5 s is only a note on Out (the
//     browser may still get through), and the flow keeps waiting.
//   - Browser: the URL is always printed first. Then, unless NoBrowser,
//     the BROWSER environment variable is split like a shell command line
//     (quotes and backslashes, no expansion) and run with the URL as its
//     last argument (or in place of a "%s" argument); without BROWSER,
//     xdg-open (open on macOS, rundll32 on Windows). The command runs with
//     hubgate's secrets removed from its environment (internal/proc).
//     Its exit status is honoured: when it cannot start or exits with a
//     failure (xdg-open finding no browser exits 3), Login says so and
//     reads pasted addresses from LoginOptions.In; that is not an error.
//   - Pasted addresses: lines read from LoginOptions.In (NoBrowser, or the
//     browser failed) are taken as the address the browser was redirected
//     to (a full URL or just its query); the state is checked the same way.
//   - Refresh: a token with a known expiry is refreshed 10 s before it, or
//     after 4/5 of its life when that is shorter (a 2-second token is not
//     refreshed on every call). Concurrent callers share one refresh. A
//     refresh that returns a new refresh token writes it through the
//     SecretSetter before the new token is handed out; if that write fails
//     the token is withheld (the caller gets the error) and the write is
//     retried on the next call. An "invalid_grant" answer becomes a
//     *TokenError matching ErrSignInAgain. Token requests are never
//     retried (a code is single-use, a refresh token may rotate).
package oauth
