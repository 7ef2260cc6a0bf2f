package mockhub

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/hubgate/hubgate/deviceapi"
	"github.com/hubgate/hubgate/internal/atomicfile"
)

// stateVersion is the version of the state file this mock writes and
// reads.
const stateVersion = 1

// ErrCorruptState is what New answers for a state file it cannot read:
// not JSON, another version, or entries that do not hold together. The
// mock never starts afresh over such a file.
var ErrCorruptState = errors.New("mockhub: the state file is corrupt")

// stateFile is what Config.StateFile holds: everything a client keeps
// across a restart of the mock. Secrets are kept as the mock keeps them in
// memory, as SHA-256 digests; the file is still private (0600).
type stateFile struct {
	Version       int            `json:"version"`
	Devices       []stateDevice  `json:"devices"` // in creation order
	Grants        []stateGrant   `json:"grants"`
	AccessTokens  []stateAccess  `json:"accessTokens"`
	RefreshTokens []stateRefresh `json:"refreshTokens"`
}

type stateDevice struct {
	Device       deviceapi.UserDevice `json:"device"` // isConnected and isListening are false after a restart
	DeviceTypeID string               `json:"deviceTypeId"`
	Tokens       []stateToken         `json:"tokens"`
}

type stateToken struct {
	ID       string `json:"id"`
	Digest   string `json:"sha256"`
	Disabled bool   `json:"disabled,omitempty"`
}

type stateGrant struct {
	ID       string `json:"id"`
	ClientID string `json:"clientId"`
	Scope    string `json:"scope,omitempty"`
	Revoked  bool   `json:"revoked,omitempty"`
}

type stateAccess struct {
	Digest  string    `json:"sha256"`
	GrantID string    `json:"grantId"`
	Expires time.Time `json:"expires"`
}

type stateRefresh struct {
	Digest  string    `json:"sha256"`
	GrantID string    `json:"grantId"`
	Expires time.Time `json:"expires"`
	Used    bool      `json:"used,omitempty"`
}

// statePersist serialises the state file's writes, so that a later write
// never carries an older snapshot.
type statePersist struct{ mu sync.Mutex }

// snapshotLocked is the state to persist (s.mu held). Expired tokens are
// left out; authorization codes (two minutes of life) are not kept.
func (s *Server) snapshotLocked() stateFile {
	now := s.now()
	st := stateFile{Version: stateVersion, Devices: []stateDevice{}, Grants: []stateGrant{}, AccessTokens: []stateAccess{}, RefreshTokens: []stateRefresh{}}
	digestOf := make(map[*deviceToken]string, len(s.devTokens))
	for dg, t := range s.devTokens {
		digestOf[t] = dg
	}
	for _, id := range s.order {
		d := s.devices[id]
		sd := stateDevice{Device: d.dev, DeviceTypeID: d.typeID, Tokens: []stateToken{}}
		sd.Device.IsConnected, sd.Device.IsListening = false, false
		for _, tid := range d.tokenIDs {
			t := s.tokenByID[tid]
			sd.Tokens = append(sd.Tokens, stateToken{ID: t.id, Digest: digestOf[t], Disabled: t.disabled})
		}
		st.Devices = append(st.Devices, sd)
	}
	for _, g := range s.grants {
		st.Grants = append(st.Grants, stateGrant{ID: g.id, ClientID: g.clientID, Scope: g.scope, Revoked: g.revoked})
	}
	for dg, t := range s.access {
		if now.Before(t.expires) {
			st.AccessTokens = append(st.AccessTokens, stateAccess{Digest: dg, GrantID: t.grantID, Expires: t.expires})
		}
	}
	for dg, t := range s.refresh {
		if now.Before(t.expires) {
			st.RefreshTokens = append(st.RefreshTokens, stateRefresh{Digest: dg, GrantID: t.grantID, Expires: t.expires, Used: t.used})
		}
	}
	return st
}

// saveState writes the state file (when there is one) after a change. A
// failed write is logged and journaled; the mock runs on in memory.
func (s *Server) saveState() {
	if err := s.writeState(); err != nil {
		s.log.Error("mock: cannot write the state file", "path", s.cfg.StateFile, "err", err)
		s.record(Event{Source: SourceMock, Action: "state-write-failed", Error: err.Error()})
	}
}

func (s *Server) writeState() error {
	if s.cfg.StateFile == "" {
		return nil
	}
	s.persist.mu.Lock()
	defer s.persist.mu.Unlock()
	s.mu.Lock()
	st := s.snapshotLocked()
	s.mu.Unlock()
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(s.cfg.StateFile, append(b, '\n'), 0o600)
}

// loadState reads Config.StateFile at start; a missing file is created
// (so that a path that cannot be written fails now, not at the first
// change).
func (s *Server) loadState() error {
	path := s.cfg.StateFile
	if path == "" {
		return nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		if err := s.writeState(); err != nil {
			return fmt.Errorf("mockhub: cannot create the state file: %w", err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("mockhub: cannot read the state file: %w", err)
	}
	st, err := decodeState(b)
	if err != nil {
		return fmt.Errorf("%w: %s: %v (fix it, or move it away to start afresh)", ErrCorruptState, path, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sd := range st.Devices {
		dev := sd.Device
		dev.IsConnected, dev.IsListening = false, false
		d := &device{dev: dev, typeID: sd.DeviceTypeID}
		for _, t := range sd.Tokens {
			dt := &deviceToken{id: t.ID, deviceID: dev.ID, disabled: t.Disabled}
			s.devTokens[t.Digest] = dt
			s.tokenByID[t.ID] = dt
			d.tokenIDs = append(d.tokenIDs, t.ID)
		}
		s.devices[dev.ID] = d
		s.order = append(s.order, dev.ID)
	}
	for _, g := range st.Grants {
		s.grants[g.ID] = &grant{id: g.ID, clientID: g.ClientID, scope: g.Scope, revoked: g.Revoked}
	}
	for _, t := range st.AccessTokens {
		s.access[t.Digest] = &accessToken{grantID: t.GrantID, expires: t.Expires}
	}
	for _, t := range st.RefreshTokens {
		s.refresh[t.Digest] = &refreshToken{grantID: t.GrantID, expires: t.Expires, used: t.Used}
	}
	return nil
}

// decodeState parses a state file strictly and checks that it holds
// together: the version, ids present and unique, digests of the right
// shape, tokens of known grants.
func decodeState(b []byte) (stateFile, error) {
	var st stateFile
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil {
		return st, fmt.Errorf("not a state file: %w", err)
	}
	if dec.More() {
		return st, errors.New("trailing data after the state")
	}
	if st.Version != stateVersion {
		return st, fmt.Errorf("version %d, this mock reads version %d", st.Version, stateVersion)
	}
	validDigest := func(d string) bool {
		if len(d) != 64 {
			return false
		}
		for _, c := range d {
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return false
			}
		}
		return true
	}
	seen := map[string]bool{}
	for i, sd := range st.Devices {
		if sd.Device.ID == "" || seen[sd.Device.ID] || sd.DeviceTypeID == "" {
			return st, fmt.Errorf("device #%d: a missing or repeated id, or no device type", i+1)
		}
		seen[sd.Device.ID] = true
		for j, t := range sd.Tokens {
			if t.ID == "" || seen[t.ID] || !validDigest(t.Digest) || seen[t.Digest] {
				return st, fmt.Errorf("device %s, token #%d: a missing or repeated id or digest", sd.Device.ID, j+1)
			}
			seen[t.ID], seen[t.Digest] = true, true
		}
	}
	grants := map[string]bool{}
	for i, g := range st.Grants {
		if g.ID == "" || grants[g.ID] {
			return st, fmt.Errorf("grant #%d: a missing or repeated id", i+1)
		}
		grants[g.ID] = true
	}
	for i, t := range st.AccessTokens {
		if !validDigest(t.Digest) || !grants[t.GrantID] {
			return st, fmt.Errorf("access token #%d: a bad digest or an unknown grant", i+1)
		}
	}
	for i, t := range st.RefreshTokens {
		if !validDigest(t.Digest) || !grants[t.GrantID] {
			return st, fmt.Errorf("refresh token #%d: a bad digest or an unknown grant", i+1)
		}
	}
	return st, nil
}
