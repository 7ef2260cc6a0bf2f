package mockhub

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/hubgate/hubgate/deviceapi"
)

// TokenResponse is the answer of /signin/token and of the admin API's
// sign-in, in the vendor's shape (see tokenResponse).
type TokenResponse = tokenResponse

// SignIn signs the mock user in without a browser: a grant of
// Config.ClientID with an access and a refresh token, as /signin and
// /signin/token would give (`hubgate mock token`, the explorer's
// Authorize box).
func (s *Server) SignIn() TokenResponse {
	s.mu.Lock()
	g := &grant{id: uuid.NewString(), clientID: s.cfg.ClientID}
	s.grants[g.id] = g
	tok := s.issueLocked(g)
	s.mu.Unlock()
	s.record(Event{Source: SourceOAuth, Action: "admin-signin", Status: http.StatusOK, Args: map[string]any{"grantId": g.id, "clientId": g.clientID}})
	return *tok
}

func (s *Server) adminSignIn(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.SignIn())
}

func (s *Server) adminCreateToken(w http.ResponseWriter, r *http.Request) {
	tok, err := s.createToken(chi.URLParam(r, "id"))
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, tok)
}

// SignIn asks the mock for an access token of its user (POST /mock/signin).
func (c *AdminClient) SignIn(ctx context.Context) (TokenResponse, error) {
	var out TokenResponse
	err := c.do(ctx, http.MethodPost, adminPrefix+"/signin", nil, &out)
	return out, err
}

// CreateToken asks the mock for a new device token of a device.
func (c *AdminClient) CreateToken(ctx context.Context, deviceID string) (deviceapi.DeviceToken, error) {
	var out deviceapi.DeviceToken
	err := c.do(ctx, http.MethodPost, devPath(deviceID, "tokens"), nil, &out)
	return out, err
}
