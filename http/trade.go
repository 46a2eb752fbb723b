package http

import "github.com/gorilla/mux"

func (s *Server) registerTradeRoutes(r *mux.Router) {}
