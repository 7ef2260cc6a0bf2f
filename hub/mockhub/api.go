package mockhub

import (
	"cmp"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/hubgate/hubgate/deviceapi"
)

// routeGroup is where a route sits: its path prefix, its middleware and
// its tag in the OpenAPI document.
type routeGroup int

const (
	groupSignIn routeGroup = iota // OAuth sign-in, answers anyone
	groupDevice                   // device REST routes, user bearer (requireUser)
	groupAdmin                    // the mock's admin API under /mock, loopback only
)

// Tags of the OpenAPI document, one per group.
const (
	TagSignIn = "SignIn"
	TagDevice = "Device"
	TagAdmin  = "Mock admin"
)

// group prefixes: a group's routes are registered on a chi sub-router
// mounted there, so its middleware also guards its unknown paths.
const (
	devicePrefix = "/api/Device/userDevices"
	adminPrefix  = "/mock"
)

// apiRoute is one route of the mock's HTTP API: the router registers its
// handler and the OpenAPI document describes it from the same entry, so
// the two cannot drift.
type apiRoute struct {
	method, path string // path is the full chi pattern
	group        routeGroup
	handler      http.HandlerFunc
	op           apiOp
}

// apiOp is what the document says of a route.
type apiOp struct {
	id, summary, description string
	deprecated               bool
	// params is a struct whose fields carry path, query and formData
	// tags (with description, required, enum, minLength, minimum and
	// example: openapi_gen_test.go reads them); body is the JSON request body (a Go
	// value of its type), requestExample an example of it.
	params, body, requestExample any
	bodyRequired                 bool
	anyBody                      bool // the body is any JSON value (body is then unused)
	responses                    []apiResponse
}

// apiResponse is one documented status of a route.
type apiResponse struct {
	status      int
	description string
	body        any    // a value of the body's Go type; nil: no body
	contentType string // zero: application/json
	example     any
	headers     map[string]string // response header: description
}

// Content types of the answers.
const (
	contentJSON    = "application/json"
	contentProblem = "application/problem+json"
	contentHTML    = "text/html"
	contentJS      = "text/javascript"
	contentCSS     = "text/css"
	// contentEventStream is the journal's live mode (server-sent events).
	contentEventStream = "text/event-stream"
)

// problem is a documented problem-details answer.
func problem(status int, description string) apiResponse {
	return apiResponse{status: status, description: description, body: Problem{}, contentType: contentProblem}
}

// oauthProblem is a documented RFC 6749 5.2 error answer.
func oauthProblem(status int, description string) apiResponse {
	return apiResponse{status: status, description: description, body: oauthError{}}
}

// Parameters of the routes, for the document (the handlers read the
// request themselves).
type (
	authorizeParams struct {
		ClientID            string `query:"client_id" required:"true" description:"The OAuth client id (the mock's: Config.ClientID, default mock-client)."`
		RedirectURI         string `query:"redirect_uri" required:"true" description:"A registered redirect address (--redirect-uri), else any http loopback address with a port; the explorer's own /swagger/ address is always accepted."`
		ResponseType        string `query:"response_type" enum:"code" description:"code, or absent (the vendor's samples send either)."`
		State               string `query:"state" description:"Echoed verbatim in the redirect."`
		CodeChallenge       string `query:"code_challenge" description:"PKCE S256 challenge (optional: the vendor's samples send none)."`
		CodeChallengeMethod string `query:"code_challenge_method" enum:"S256"`
		Scope               string `query:"scope" description:"Echoed in the token answer."`
	}
	tokenParams struct {
		GrantType    string `query:"grant_type" formData:"grant_type" enum:"code,authorization_code,refresh_token" description:"code (the vendor's), authorization_code (the standard's) or refresh_token."`
		Code         string `query:"code" formData:"code" description:"The authorization code (grant_type code)."`
		ClientID     string `query:"client_id" formData:"client_id" description:"The OAuth client id."`
		RedirectURI  string `query:"redirect_uri" formData:"redirect_uri" description:"The redirect_uri of the authorization request (grant_type code)."`
		CodeVerifier string `query:"code_verifier" formData:"code_verifier" description:"The PKCE verifier, when the authorization request carried a challenge."`
		RefreshToken string `query:"refresh_token" formData:"refresh_token" description:"The refresh token (grant_type refresh_token); refresh tokens rotate."`
		ClientSecret string `query:"client_secret" formData:"client_secret" description:"Optional; when sent it must be right (HTTP Basic is accepted too)."`
	}
	createDeviceParams struct {
		DeviceTypeID string `path:"deviceTypeId" description:"The device type (the mock knows one: Config.DeviceTypeID)."`
		Name         string `query:"name" required:"true" minLength:"1" description:"The device's name (nameOverride)." example:"Living room controller"`
	}
	userDeviceParams struct {
		UserDeviceID string `path:"userDeviceId" description:"The User Device's id."`
	}
	adminDeviceParams struct {
		ID string `path:"id" description:"The User Device's id."`
	}
	pushParams struct {
		ID         string `path:"id" description:"The User Device's id."`
		Connection string `query:"connection" description:"Push to this hub connection of the device only (its id in GET /mock/devices: hubConnections); 409 when the device has no such connection."`
	}
	consoleFileParams struct {
		File string `path:"file" enum:"console.js,console.css" description:"A file of the console page."`
	}
	journalParams struct {
		After  int64  `query:"after" minimum:"0" description:"Entries after this sequence number (0: from the oldest kept)."`
		Since  int64  `query:"since" minimum:"0" description:"The older name of after."`
		Device string `query:"device" description:"Only the entries of this User Device."`
		Wait   string `query:"wait" description:"Wait up to this long (a Go duration, at most 1m) for an entry when there is none yet (JSON mode)." example:"5s"`
	}
	adminTokenParams struct {
		TokenID string `path:"tokenId" description:"The device token's id (not the token itself)."`
	}
)

// apiRoutes is the mock's HTTP API: every route of the sign-in, device and
// admin groups, with its handler and its documentation. The hub
// (/device, SignalR) and the explorer itself are not in it.
func (s *Server) apiRoutes() []apiRoute {
	unauthorized := problem(http.StatusUnauthorized, "Missing, unknown, revoked or expired access token.")
	unauthorized.headers = map[string]string{"WWW-Authenticate": `Bearer realm="mock", with error="invalid_token" when a token was presented.`}
	forbidden := problem(http.StatusForbidden, "Not a loopback peer, another local user than the mock's, a Host header not naming the loopback, or a cross-origin browser request.")
	unknownDevice := problem(http.StatusNotFound, "Unknown device.")
	var noConnection apiResponse
	badBody := problem(http.StatusBadRequest, "Bad JSON body.")
	pushed := apiResponse{status: http.StatusOK, description: "The push is queued on this many hub connections.", body: PushResult{}, example: PushResult{Delivered: 1}}
	noConnection = problem(http.StatusConflict, "The device has no hub connection (or not the one ?connection= names).")
	badJournal := problem(http.StatusBadRequest, "Bad after, since or wait.")
	page := func(what string) apiResponse {
		return apiResponse{status: http.StatusOK, description: what, body: "", contentType: contentHTML}
	}
	journalJSON := apiResponse{status: http.StatusOK, description: "The entries after the asked sequence number, oldest first; missed counts those the ring already dropped.", body: EventsPage{}}
	journalStream := apiResponse{status: http.StatusOK, contentType: contentEventStream, body: "",
		description: "For Accept: text/event-stream: server-sent events, one entry each (id: its sequence number, data: the Event as JSON), " +
			"then each new one as it is entered, until the client leaves; a \"gap\" event ({\"missed\": N}) when the ring dropped entries not yet seen; " +
			"Last-Event-ID resumes; a comment every 15 s when idle."}
	exampleDevice := exampleUserDevice(false)
	exampleToken := deviceapi.DeviceToken{ID: "6a1c2f0e-8c9b-4f7e-9d3a-2b1e0c4d5f6a", UserDeviceID: exampleDevice.ID, Token: "Jq3v2bC0n0Q8Zx0m1R7yW4tK9pL6sD5fG2hA8eU1iO0"}
	exampleTokens := TokenResponse{AccessToken: "f1Wc5kX2nQ7rZ0aB9dE3gH6jL8mP4sT1uV2wY5zA7bC", RefreshToken: "r8Yt3uI6oP1aS4dF7gH0jK2lZ5xC9vB3nM6qW8eR1tY",
		AccessTokenExpiration: "2026-11-26T17:00:00.123456789Z", RefreshTokenExpiration: "2026-12-26T16:00:00.123456789Z"}
	authorize := apiOp{
		summary: "Sign-in page: approves at once and redirects to redirect_uri",
		description: "The vendor's clients open {api_url}/signin with client_id, redirect_uri and, in some samples, state and response_type=code. " +
			"Consent is automatic (hubgate mock --deny-consent denies). Swagger UI does not follow the redirect: use the Sign in button above, or `hubgate mock token`.",
		params: authorizeParams{},
		responses: []apiResponse{
			{status: http.StatusFound, description: "Redirect to redirect_uri with code and state, or with error and error_description.", headers: map[string]string{"Location": "The redirect_uri with code and state, or with error, error_description and state."}},
			{status: http.StatusBadRequest, description: "Unknown client_id or a redirect_uri that is not accepted (no redirect, RFC 6749 4.1.2.1).", body: "", contentType: contentHTML},
		},
	}
	alias := authorize
	alias.summary, alias.deprecated = "The old sign-in path, an alias of /signin", true

	return []apiRoute{
		{http.MethodGet, "/signin", groupSignIn, s.handleAuthorize, withID(authorize, "SignIn")},
		{http.MethodGet, "/signin/authorize", groupSignIn, s.handleAuthorize, withID(alias, "SignInAlias")},
		{http.MethodPost, "/signin/token", groupSignIn, s.handleToken, apiOp{
			id:      "Token",
			summary: "Exchange an authorization code or a refresh token for tokens",
			description: "Parameters in the query string (the vendor's browser, C++ and Unity samples) or in a form body (Android, iOS); the body wins. " +
				"The answer carries access_token_expiration and refresh_token_expiration (RFC 3339 UTC), no expires_in and no token_type. Refresh tokens rotate.",
			params: tokenParams{},
			responses: []apiResponse{
				{status: http.StatusOK, description: "Tokens.", body: TokenResponse{}, example: exampleTokens},
				oauthProblem(http.StatusBadRequest, "invalid_request, invalid_grant or unsupported_grant_type."),
				oauthProblem(http.StatusUnauthorized, "invalid_client: no client_id, an unknown client or a wrong secret."),
			},
		}},

		{http.MethodPost, devicePrefix + "/new/{deviceTypeId}", groupDevice, s.handleCreateDevice, apiOp{
			id:          "CreateUserDevice",
			summary:     "Create a User Device",
			description: "No body (the vendor's C++ sample also sends {\"name\": ...}; the mock reads the query). Every flag is false and currentProfile null at creation.",
			params:      createDeviceParams{},
			responses: []apiResponse{
				{status: http.StatusOK, description: "The new User Device.", body: deviceapi.UserDevice{}, example: exampleUserDevice(true)},
				problem(http.StatusBadRequest, "The query parameter name is missing or empty."),
				unauthorized,
				problem(http.StatusNotFound, "Unknown device type."),
			},
		}},
		{http.MethodPost, devicePrefix + "/{userDeviceId}/tokens", groupDevice, s.handleCreateToken, apiOp{
			id:          "CreateDeviceToken",
			summary:     "Create a device token for a User Device",
			description: "Earlier tokens stay valid. The hub takes the token as bearer and in X-Device-Token. (The vendor's C++ sample reads the token as deviceToken; the mock answers token, as the other samples read it.)",
			params:      userDeviceParams{},
			responses: []apiResponse{
				{status: http.StatusOK, description: "The new device token.", body: deviceapi.DeviceToken{}, example: exampleToken},
				unauthorized, unknownDevice,
			},
		}},
		{http.MethodGet, devicePrefix + "/{userDeviceId}", groupDevice, s.handleGetDevice, apiOp{
			id:      "GetUserDevice",
			summary: "Get a User Device",
			params:  userDeviceParams{},
			responses: []apiResponse{
				{status: http.StatusOK, description: "The User Device.", body: deviceapi.UserDevice{}, example: exampleDevice},
				unauthorized, unknownDevice,
			},
		}},

		{http.MethodGet, adminPrefix, groupAdmin, s.adminIndex, apiOp{
			id:          "Index",
			summary:     "The admin API's routes (this list; an HTML page for a browser)",
			description: "Lists the admin group of the route table that also registers the routes and makes this document.",
			responses: []apiResponse{
				{status: http.StatusOK, description: "Every admin route.", body: AdminIndex{}},
				page("For Accept: text/html, the same list as a page."),
				forbidden,
			},
		}},
		{http.MethodGet, adminPrefix + "/console", groupAdmin, s.adminConsole, apiOp{
			id:          "Console",
			summary:     "The hub console page: push to a device and watch its hub frames live",
			description: "Plain HTML, CSS and JS embedded in the binary; it speaks this admin API and follows GET /mock/journal as a stream.",
			responses:   []apiResponse{page("The console page."), forbidden},
		}},
		{http.MethodGet, adminPrefix + "/console/{file}", groupAdmin, s.adminConsoleAsset, apiOp{
			id: "ConsoleAsset", summary: "The console page's script and style", params: consoleFileParams{},
			responses: []apiResponse{
				{status: http.StatusOK, description: "The script.", body: "", contentType: contentJS},
				{status: http.StatusOK, description: "The style sheet.", body: "", contentType: contentCSS},
				problem(http.StatusNotFound, "No such file."), forbidden,
			},
		}},
		{http.MethodPost, adminPrefix + "/signin", groupAdmin, s.adminSignIn, apiOp{
			id:          "MockSignIn",
			summary:     "Sign the mock user in without a browser",
			description: "Issues an access and a refresh token of the mock's client, as /signin and /signin/token would (`hubgate mock token`). Paste the access token into Authorize.",
			responses: []apiResponse{
				{status: http.StatusOK, description: "Tokens, as /signin/token answers them.", body: TokenResponse{}, example: exampleTokens},
				forbidden,
			},
		}},
		{http.MethodPost, adminPrefix + "/devices", groupAdmin, s.adminCreateDevice, apiOp{
			id:             "CreateDevice",
			summary:        "Create a device and a device token without OAuth",
			body:           CreateDeviceRequest{},
			requestExample: CreateDeviceRequest{Name: "Living room controller"},
			responses: []apiResponse{
				{status: http.StatusCreated, description: "The device and its token.", body: CreatedDevice{}, example: CreatedDevice{Device: exampleDevice, Token: exampleToken}},
				badBody, problem(http.StatusNotFound, "Unknown device type."), forbidden,
			},
		}},
		{http.MethodGet, adminPrefix + "/devices", groupAdmin, s.adminDevices, apiOp{
			id:        "Devices",
			summary:   "List the devices, their hub connections and tokens",
			responses: []apiResponse{{status: http.StatusOK, description: "Every device in creation order.", body: []DeviceInfo{}}, forbidden},
		}},
		{http.MethodPost, adminPrefix + "/devices/{id}/tokens", groupAdmin, s.adminCreateToken, apiOp{
			id:        "MockCreateDeviceToken",
			summary:   "Create a device token for a device without OAuth",
			params:    adminDeviceParams{},
			responses: []apiResponse{{status: http.StatusCreated, description: "The new device token.", body: deviceapi.DeviceToken{}, example: exampleToken}, unknownDevice, forbidden},
		}},
		{http.MethodPost, adminPrefix + "/devices/{id}/command", groupAdmin, s.adminCommand, apiOp{
			id:      "PushCommand",
			summary: "Push DeviceCommand(command, macro)",
			description: "With macroName the macro is the one of that name in the device's current profile (as the real app sends it); with macro, that macro; " +
				"with noMacro, none: DeviceCommand(command, null), as the real service may send a voice phrase or a macro named by its name; " +
				"with none of them, one made from the command (fresh id, name and commands [command], no events). An empty command is the macro's name, else its first command.",
			params:         pushParams{},
			body:           CommandRequest{},
			bodyRequired:   true,
			requestExample: exampleCommand(),
			responses: []apiResponse{pushed, problem(http.StatusBadRequest, "Bad JSON body, neither command, macro nor macroName, or noMacro with a macro."),
				problem(http.StatusNotFound, "Unknown device, or no macro of that name in its current profile (the answer names the profile's macros)."), noConnection, forbidden},
		}},
		{http.MethodPost, adminPrefix + "/devices/{id}/profile", groupAdmin, s.adminProfile, apiOp{
			id:             "PushProfile",
			summary:        "Set the current profile and push DeviceProfileUpdate(device)",
			description:    "The profile is stored even when the device has no hub connection (delivered 0); 409 only when ?connection= names a connection the device does not have.",
			params:         pushParams{},
			body:           deviceapi.Profile{},
			bodyRequired:   true,
			requestExample: exampleProfile(),
			responses: []apiResponse{
				{status: http.StatusOK, description: "The device with its new profile.", body: ProfileResult{}},
				problem(http.StatusBadRequest, "The body is not a Profile object."), unknownDevice, noConnection, forbidden,
			},
		}},
		{http.MethodPost, adminPrefix + "/devices/{id}/start-listening", groupAdmin, s.adminListening("StartListening"), apiOp{
			id: "StartListening", summary: "Push StartListening()", params: pushParams{},
			responses: []apiResponse{pushed, unknownDevice, noConnection, forbidden},
		}},
		{http.MethodPost, adminPrefix + "/devices/{id}/stop-listening", groupAdmin, s.adminListening("StopListening"), apiOp{
			id: "StopListening", summary: "Push StopListening()", params: pushParams{},
			responses: []apiResponse{pushed, unknownDevice, noConnection, forbidden},
		}},
		{http.MethodPost, adminPrefix + "/devices/{id}/settings", groupAdmin, s.adminSettings, apiOp{
			id: "PushSettings", summary: "Push DeviceSettingsUpdate(settings) with any JSON value",
			params: pushParams{}, anyBody: true,
			requestExample: map[string]any{"isAutoListen": true},
			responses:      []apiResponse{pushed, problem(http.StatusBadRequest, "The body is not JSON."), unknownDevice, noConnection, forbidden},
		}},
		{http.MethodPost, adminPrefix + "/tokens/{tokenId}/disable", groupAdmin, s.adminDisable, apiOp{
			id: "DisableToken", summary: "Disable a device token and drop the hub connections using it",
			params: adminTokenParams{},
			responses: []apiResponse{
				{status: http.StatusOK, description: "The token, now disabled.", body: DisableResult{}},
				problem(http.StatusNotFound, "Unknown device token."), forbidden,
			},
		}},
		{http.MethodPost, adminPrefix + "/faults", groupAdmin, s.adminFaults, apiOp{
			id: "Faults", summary: "Inject hub faults",
			description: "drop closes every hub transport abruptly, after the pushes already queued on it are written (at most 1 s each, none while frozen); refuseFor answers 503 to new hub connections; freeze stops every hub connection without closing it; " +
				"expireServiceTokens expires the negotiate redirect's access tokens; serviceErrorFor makes the SignalR service's negotiate answer an error. Durations are Go duration strings; \"0s\" ends one.",
			body: Faults{}, requestExample: map[string]any{"refuseFor": "10s"},
			responses: []apiResponse{{status: http.StatusOK, description: "The fault state after the request.", body: FaultState{}}, badBody, forbidden},
		}},
		{http.MethodGet, adminPrefix + "/journal", groupAdmin, s.adminJournal, apiOp{
			id:      "Journal",
			summary: "The journal: every OAuth, REST, admin and hub call, both directions, with payloads (secrets redacted)",
			description: "JSON: a page of entries after a sequence number, waiting up to wait for one when there is none. " +
				"Accept: text/event-stream follows the journal live (what the console and `hubgate mock events --follow` read).",
			params:    journalParams{},
			responses: []apiResponse{journalJSON, journalStream, badJournal, forbidden},
		}},
		{http.MethodGet, adminPrefix + "/events", groupAdmin, s.adminJournal, apiOp{
			id: "Events", summary: "The journal under its older name", deprecated: true, params: journalParams{},
			responses: []apiResponse{journalJSON, journalStream, badJournal, forbidden},
		}},
	}
}

func withID(op apiOp, id string) apiOp { op.id = id; return op }

// mountGroup registers a group's routes on r (a sub-router mounted at the
// group's prefix), each handler passed through wrap when it is not nil.
func (s *Server) mountGroup(r chi.Router, g routeGroup, prefix string, wrap func(apiRoute, http.Handler) http.Handler) {
	for _, rt := range s.apiRoutes() {
		if rt.group != g {
			continue
		}
		h := http.Handler(rt.handler)
		if wrap != nil {
			h = wrap(rt, h)
		}
		r.Method(rt.method, cmp.Or(strings.TrimPrefix(rt.path, prefix), "/"), h)
	}
}

// exampleUserDevice is a UserDevice as the document shows it: fresh (every
// flag false, no profile) or verified and listening with a vendor profile.
func exampleUserDevice(fresh bool) deviceapi.UserDevice {
	d := deviceapi.UserDevice{ID: "3f2b8c1e-5d4a-4e6b-9c7d-1a2b3c4d5e6f", NameOverride: "Living room controller"}
	if fresh {
		return d
	}
	p := exampleProfile()
	d.IsVerified, d.IsConnected, d.IsListening, d.CurrentProfile = true, true, true, &p
	return d
}

// exampleProfile is a profile with macros from the vendor's sample data
// (Cephable-VirtualController-Sample src/sample-data: basicKeys.json and
// game_controller_simple_movement.json).
func exampleProfile() deviceapi.Profile {
	hundred, zero := 100.0, 0.0
	f := false
	none := []json.RawMessage{}
	return deviceapi.Profile{
		ID: "9b8a7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d", Name: "Simple movement", UserID: UserID, ProfileType: "Game",
		Configuration: deviceapi.Configuration{
			ProfileType: "Game", CommandKeyMappings: none, Hotkeys: none, DictationCommands: none, AudioEvents: none,
			Macros: []deviceapi.Macro{
				{ID: "1", Name: "Space", Commands: []string{"space"}, Events: []deviceapi.MacroEvent{
					{EventType: deviceapi.EventKeyPress, Keys: []string{"space"}, HoldTimeMilliseconds: &zero, IsKeyLatch: &f},
				}},
				{ID: "2", Name: "Start Running Forward", Commands: []string{"run forward"}, Events: []deviceapi.MacroEvent{
					{EventType: deviceapi.EventJoystickMove, JoystickLeftMoveY: &hundred},
				}},
			},
		},
	}
}

// exampleCommand is a DeviceCommand with the vendor's Space macro.
func exampleCommand() CommandRequest {
	m := exampleProfile().Configuration.Macros[0]
	return CommandRequest{Command: "space", Macro: &m}
}
