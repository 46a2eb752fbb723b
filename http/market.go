package http

import "github.com/gorilla/mux"

func (s *Server) registerMarketRoutes(r *mux.Router) {}
