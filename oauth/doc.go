// Package oauth owns the user's sign-in to the remote device service
// (docs/specs/device-hub.md, Authentication): the authorization code flow
// on a loopback redirect, the token exchange at {api_url}/signin/token, and
// a token source that refreshes the access token and persists a rotated
// refresh token. It speaks the token endpoint itself (form POST, JSON
// answer) and uses golang.org/x/oauth2 only for its Token type, the PKCE
// verifier and the authorization URL. It stores nothing itself except
// through the secret setter it is given, and never prints or logs a code, a
// token, the PKCE verifier or the client secret.
//
// The real service's facts followed and the choices where the spec is
// silent: docs/oauth.md.
package oauth
