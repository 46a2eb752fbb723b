package http

import "github.com/gorilla/mux"

func (s *Server) registerAuditRoutes(r *mux.Router) {}
