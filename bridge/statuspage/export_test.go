package statuspage

// NewLoginCode mints a one-time login code of s's page (the tests' way to
// a code where NewLoginURL arms a code-free login).
func (s *Server) NewLoginCode() string { return s.h.NewLoginCode() }
