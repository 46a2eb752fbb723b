package http

import "github.com/gorilla/mux"

func (s *Server) registerPnlRoutes(r *mux.Router) {}
