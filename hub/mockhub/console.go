package mockhub

import (
	"embed"
	"net/http"
	"path"

	"github.com/go-chi/chi/v5"
)

// The hub console: plain HTML, CSS and JS embedded in the binary, no
// build step. It speaks only the admin API (same origin) and follows the
// journal's event stream.
//
//go:embed console
var consoleFS embed.FS

// consoleType is the content type of a console file ("" for none). A
// switch, not a package-level map: a map literal is init work in every
// hubgate process.
func consoleType(name string) string {
	switch name {
	case "index.html":
		return "text/html; charset=utf-8"
	case "console.js":
		return "text/javascript; charset=utf-8"
	case "console.css":
		return "text/css; charset=utf-8"
	}
	return ""
}

func serveConsoleFile(w http.ResponseWriter, name string) {
	ct := consoleType(name)
	ok := ct != ""
	b, err := consoleFS.ReadFile(path.Join("console", name))
	if !ok || err != nil {
		writeProblem(w, http.StatusNotFound, errNoAsset.Error()+": "+name)
		return
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'")
	w.Write(b)
}

func (s *Server) adminConsole(w http.ResponseWriter, r *http.Request) {
	serveConsoleFile(w, "index.html")
}

func (s *Server) adminConsoleAsset(w http.ResponseWriter, r *http.Request) {
	serveConsoleFile(w, chi.URLParam(r, "file"))
}
