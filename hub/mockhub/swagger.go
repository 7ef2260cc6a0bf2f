package mockhub

import (
	"embed"
	"net/http"
)

// The OpenAPI 3 document of the REST routes and a self-contained
// explorer page (no external assets: it works offline).
//
//go:embed swagger/openapi.json swagger/index.html
var swaggerFS embed.FS

func serveEmbedded(w http.ResponseWriter, name, contentType string) {
	b, err := swaggerFS.ReadFile(name)
	if err != nil {
		writeProblem(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(b)
}

func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) {
	serveEmbedded(w, "swagger/openapi.json", "application/json; charset=utf-8")
}

func (s *Server) handleExplorer(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'")
	serveEmbedded(w, "swagger/index.html", "text/html; charset=utf-8")
}
