package server

import (
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/assistant"
)

// The routes of the desktop application's newer Automate server
// (Cephable-Automate-Agent-Samples at a34cc04, docs/api-cheatsheet.md),
// served beside the spec's: GET /v1/automate/tools, GET|PATCH
// /v1/settings, GET /v1/speech/status. The cheatsheet: "A wrong method on
// a core route → also 404; on settings and speech routes → 405", so a
// wrong method on one of these answers 405 with an Allow header, and on
// the spec's routes still 404 as the spec says.

// newerRoute is one route of the newer contract: its path and, per
// method, its handler.
type newerRoute struct {
	path    string
	methods []string // in the order of the Allow header
	handle  map[string]http.HandlerFunc
}

func (s *Server) newerRoutes() []newerRoute {
	return []newerRoute{
		{path: "/v1/automate/tools", methods: []string{http.MethodGet},
			handle: map[string]http.HandlerFunc{http.MethodGet: s.handleTools}},
		{path: "/v1/settings", methods: []string{http.MethodGet, http.MethodPatch},
			handle: map[string]http.HandlerFunc{http.MethodGet: s.handleSettings, http.MethodPatch: s.handlePatchSettings}},
		{path: "/v1/speech/status", methods: []string{http.MethodGet},
			handle: map[string]http.HandlerFunc{http.MethodGet: s.handleSpeechStatus}},
	}
}

// mountNewer registers the newer routes on r and returns the
// MethodNotAllowed handler of the whole router: 405 with Allow on a newer
// route, the spec's 404 elsewhere.
func (s *Server) mountNewer(r chi.Router, notFound http.HandlerFunc) http.HandlerFunc {
	allow := map[string]string{}
	for _, rt := range s.newerRoutes() {
		for _, m := range rt.methods {
			r.Method(m, rt.path, rt.handle[m])
		}
		allow[rt.path] = strings.Join(rt.methods, ", ")
	}
	return func(w http.ResponseWriter, req *http.Request) {
		methods, ok := allow[req.URL.Path]
		if !ok {
			notFound(w, req)
			return
		}
		w.Header().Set("Allow", methods)
		writeError(w, s.log, &apiError{kind: errMethodNotAllowed,
			msg: "Method " + req.Method + " is not allowed on " + req.URL.Path + "; allowed: " + methods})
	}
}

// handleTools answers GET /v1/automate/tools: every built-in tool with its
// groups and whether it is destructive, the groups, and the server-wide
// policy, which is null: this server has none (PUT and DELETE
// /v1/automate/tools/policy are not served); each run narrows with
// builtInTools and allowDestructiveTools.
func (s *Server) handleTools(w http.ResponseWriter, r *http.Request) {
	groups := make(map[string][]string, len(assistant.BuiltInToolGroups))
	for g, members := range assistant.BuiltInToolGroups {
		groups[g] = slices.Clone(members)
	}
	data := make([]automate.BuiltInToolInfo, 0, len(assistant.BuiltInToolNames))
	for _, name := range assistant.BuiltInToolNames {
		info := automate.BuiltInToolInfo{Name: name, Groups: []string{}, Destructive: assistant.DestructiveTools[name]}
		for g, members := range groups {
			if slices.Contains(members, name) {
				info.Groups = append(info.Groups, g)
			}
		}
		sort.Strings(info.Groups)
		data = append(data, info)
	}
	writeJSON(w, s.log, http.StatusOK, automate.ToolCatalog{Object: "list", Data: data, Groups: groups})
}

// settingsNames are the fields of automate.Settings, all read-only here:
// the server's settings are its Config, fixed at New.
var settingsNames = []string{"workspace", "workspaceRestriction", "defaultTimeoutMs", "toolResultWaitMs", "configuredMcpServers"}

func (s *Server) settings() automate.Settings {
	st := automate.Settings{
		Workspace:            s.workspace,
		DefaultTimeoutMs:     automate.DefaultTimeoutMs,
		ToolResultWaitMs:     s.toolWait.Milliseconds(),
		ConfiguredMcpServers: slices.Clone(s.cfg.ConfiguredMcpServers),
		ReadOnly:             slices.Clone(settingsNames),
	}
	if st.ConfiguredMcpServers == nil {
		st.ConfiguredMcpServers = []string{}
	}
	if s.cfg.WorkspaceRestriction != "" {
		ws := s.cfg.WorkspaceRestriction
		st.WorkspaceRestriction = &ws
	}
	return st
}

func (s *Server) handleSettings(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, s.log, http.StatusOK, s.settings())
}

// handlePatchSettings answers PATCH /v1/settings. Every setting of this
// server is fixed when it starts (its configuration), so a body naming
// any field is a 400 that names it (the first in sorted order) and
// changes nothing; an empty object changes nothing and answers the
// settings, as a PATCH without changes does.
func (s *Server) handlePatchSettings(w http.ResponseWriter, r *http.Request) {
	o, ok := s.readObject(w, r, true)
	if !ok {
		return
	}
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !slices.Contains(settingsNames, k) {
			writeError(w, s.log, invalid("Unknown setting %s (settings: %s)", k, strings.Join(settingsNames, ", ")))
			return
		}
	}
	if len(keys) > 0 {
		writeError(w, s.log, invalid("Setting %s is read-only on this server: it is set when the server starts", keys[0]))
		return
	}
	writeJSON(w, s.log, http.StatusOK, s.settings())
}

// handleSpeechStatus answers GET /v1/speech/status: this server has no
// speech recogniser, so speech is unavailable and nothing listens.
func (s *Server) handleSpeechStatus(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, s.log, http.StatusOK, automate.SpeechStatus{
		Available: false, Listening: false, State: "unavailable",
		Reason: "This Automate server has no speech recognizer",
	})
}
