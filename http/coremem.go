package http

import "github.com/gorilla/mux"

func (s *Server) registerCoreMemoryRoutes(r *mux.Router) {}
