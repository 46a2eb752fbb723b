package http

import "github.com/gorilla/mux"

func (s *Server) registerLicenseRoutes(r *mux.Router) {}
