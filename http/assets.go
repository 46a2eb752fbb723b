package http

import "github.com/gorilla/mux"

func (s *Server) registerAssetRoutes(r *mux.Router) {}
