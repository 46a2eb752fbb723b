package http

import "github.com/gorilla/mux"

func (s *Server) registerChartRoutes(r *mux.Router) {}
