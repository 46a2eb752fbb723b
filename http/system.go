package http

import "github.com/gorilla/mux"

func (s *Server) registerSystemRoutes(r *mux.Router) {}
