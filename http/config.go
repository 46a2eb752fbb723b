package http

import "github.com/gorilla/mux"

func (s *Server) registerConfigRoutes(r *mux.Router) {}
