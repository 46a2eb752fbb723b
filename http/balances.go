package http

import "github.com/gorilla/mux"

func (s *Server) registerBalanceRoutes(r *mux.Router) {}
