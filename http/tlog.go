package http

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/gorilla/mux"
	"golang.org/x/mod/sumdb/tlog"
)

// registerTlogRoutes serves the Merkle tree as the Go checksum database
// serves its own, so that a mirror copies and checks it with
// golang.org/x/mod/sumdb/tlog alone (TileHashReader against a checkpoint),
// and as c2sp.org/tlog-tiles lays it out (prefix /tlog), record data
// included, so that any tlog-tiles client reads every record and checks
// it against the cosigned checkpoint:
//
//	GET /tlog/checkpoint            the last signed checkpoint with its cosignatures, text/plain
//	GET /tlog/tile/8/L/N…           a hash tile of height 8 at the path tlog.Tile.Path names
//	GET /tlog/tile/L/N[.p/W]        the same hash tile at its c2sp.org/tlog-tiles path
//	GET /tlog/tile/entries/N[.p/W]  an entry bundle: each record's data (the event's
//	                                chain hash) after its big-endian uint16 length
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
	w.Header().Set("Cache-Control", "no-cache") // it changes (c2sp.org/tlog-tiles: no caching beyond seconds)
	s.handleCheckpoint(w, r)
}

// handleTile answers a tile's bytes (application/octet-stream). A full
// tile never changes: it may be cached for good; a partial one grows.
func (s *Server) handleTile(w http.ResponseWriter, r *http.Request) {
	if err := s.tlogReady(); err != nil {
		Error(w, r, err)
		return
	}
	rest := mux.Vars(r)["tile"]
	var b []byte
	var err error
	full := false
	if t, perr := tlog.ParseTilePath("tile/" + rest); perr == nil {
		b, err = s.Tlog.Tile(r.Context(), "tile/"+rest) // the Go checksum database's layout
		full = t.W == 1<<uint(t.H)
	} else {
		b, err = s.Tlog.TilesTile(r.Context(), rest) // c2sp.org/tlog-tiles
		full = !strings.Contains(rest, ".p/")
	}
	if err != nil {
		Error(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	if full {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	w.WriteHeader(http.StatusOK)
	w.Write(b)
}
