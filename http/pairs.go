package http

import "github.com/gorilla/mux"

func (s *Server) registerPairRoutes(r *mux.Router) {}
