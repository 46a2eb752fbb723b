package http

import "github.com/gorilla/mux"

func (s *Server) registerFileRoutes(r *mux.Router) {}
