package http

import "github.com/gorilla/mux"

func (s *Server) registerOrderRoutes(r *mux.Router) {}
