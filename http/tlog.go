package http

import (
	"net/http"
	"strconv"

	"github.com/gorilla/mux"
)

// registerTlogRoutes serves the Merkle tree as the Go checksum database
// serves its own, so that a mirror copies and checks it with
// golang.org/x/mod/sumdb/tlog alone (TileHashReader against a checkpoint):
//
//	GET /tlog/checkpoint     the last signed checkpoint, text/plain
//	GET /tlog/tile/H/L/N…    a hash tile of height 8 at the path tlog.Tile.Path names
//
// They need a read token, unless PublicTlog.
func (s *Server) registerTlogRoutes(root *mux.Router) {
	r := root.PathPrefix("/tlog").Subrouter()
	if !s.PublicTlog {
		r.Use(s.requireToken)
	}
	r.HandleFunc("/checkpoint", s.handleTlogCheckpoint).Methods("GET")
	r.HandleFunc("/tile/{tile:.+}", s.handleTile).Methods("GET")
}

// handleTlogCheckpoint is audit/checkpoint's plain text.
func (s *Server) handleTlogCheckpoint(w http.ResponseWriter, r *http.Request) {
	r.Header.Del("Accept")
	s.handleCheckpoint(w, r)
}

// handleTile answers a tile's bytes (application/octet-stream). A full
// tile never changes: it may be cached for good; a partial one grows.
func (s *Server) handleTile(w http.ResponseWriter, r *http.Request) {
	if err := s.tlogReady(); err != nil {
		Error(w, r, err)
		return
	}
	path := "tile/" + mux.Vars(r)["tile"]
	b, err := s.Tlog.Tile(r.Context(), path)
	if err != nil {
		Error(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	if len(b) == 256*32 {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	w.WriteHeader(http.StatusOK)
	w.Write(b)
}
