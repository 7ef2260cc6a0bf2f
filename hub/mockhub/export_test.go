package mockhub

import "github.com/go-chi/chi/v5"

// RouterOf gives the contract test the router to walk.
func RouterOf(s *Server) chi.Routes { return s.router }

// RouteTable lists every route of the route table (method, chi pattern):
// the tests of who reaches the mock walk it.
func RouteTable(s *Server) [][2]string {
	var out [][2]string
	for _, rt := range s.apiRoutes() {
		out = append(out, [2]string{rt.method, rt.path})
	}
	return out
}
