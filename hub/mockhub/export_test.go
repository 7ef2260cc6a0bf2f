package mockhub

import "github.com/go-chi/chi/v5"

// RouterOf gives the contract test the router to walk.
func RouterOf(s *Server) chi.Routes { return s.router }
