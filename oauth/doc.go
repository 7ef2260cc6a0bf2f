// Package oauth owns the user's sign-in to the remote device service
// (docs/specs/device-hub.md, Authentication): the OAuth 2.0
// authorization code flow with PKCE on a loopback redirect, the token
// exchange at {api_url}/signin/token, and a token source that refreshes
// the access token and persists a rotated refresh token. It is built on
// golang.org/x/oauth2. It stores nothing itself except through the secret
// setter it is given, and never prints or logs a code, a token, the PKCE
// verifier or the client secret.
//
// Choices where the spec says "not shown":
//   - Login page: Config.AuthURL, default {api_url}/signin/authorize; the
//     request carries response_type=code, client_id, redirect_uri, state,
//     code_challenge and code_challenge_method=S256, plus scope only when
//     Config.Scopes is set (the spec shows no scopes).
//   - Redirect: http://127.0.0.1:<port>/callback, the port chosen by the
//     OS; the listener binds the IPv4 loopback address only.
//   - Client authentication at the token endpoint: HTTP Basic
//     (oauth2.AuthStyleInHeader), set explicitly. The zero value,
//     AuthStyleAutoDetect, would on ANY error resend the exchange with the
//     credentials in the body: a one-time code would be spent twice and the
//     first, real error hidden. A client without a secret (a public PKCE
//     client) sends its client_id in the body instead (AuthStyleInParams),
//     as RFC 6749 section 3.2.1 asks.
//   - State: 32 random bytes, base64url. A callback (or a pasted address)
//     whose state is missing or wrong is answered with a page saying it
//     was ignored and does not end the flow: another tab or a stale link
//     must not abort a sign-in in progress. The first callback with the
//     right state ends the flow, with its code or its error; later ones
//     are told the sign-in has finished.
//   - The success page is shown only after the code was exchanged, so the
//     browser tells the truth; an error page shows the service's error and
//     error_description (HTML-escaped).
//   - Overall timeout: LoginOptions.Timeout, default 5 minutes; the
//     listener is shut down when the flow ends, whatever the outcome.
//   - Browser: the URL is always printed first. Then, unless NoBrowser,
//     the BROWSER environment variable is split like a shell command line
//     (quotes and backslashes, no expansion) and run with the URL as its
//     last argument (or in place of a "%s" argument); without BROWSER,
//     xdg-open (open on macOS, rundll32 on Windows). Failing to open one is
//     reported and is not an error. The command is started, not waited
//     for (a browser may keep running); it is reaped in the background.
//   - No browser: the listener still runs (a browser on the same machine
//     completes the flow by itself), and lines read from LoginOptions.In
//     are taken as the address the browser was redirected to (a full URL
//     or just its query); the state is checked the same way.
//   - Refresh: TokenSource wraps oauth2.Config.TokenSource (which refreshes
//     10 s before expiry and keeps the old refresh token when the response
//     omits one). When a refresh returns a new refresh token, it is
//     written through the SecretSetter before the new token is handed out;
//     if that write fails the token is withheld (the caller gets the
//     error) and the write is retried on the next call. An "invalid_grant"
//     answer becomes a *TokenError matching ErrSignInAgain.
package oauth
