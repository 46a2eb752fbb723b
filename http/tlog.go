package http

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/gorilla/mux"
	"golang.org/x/mod/sumdb/tlog"
)

// registerTiles serves the Merkle tree as the Go checksum database
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
// They need a read token when requireToken is given (not PublicTlog).
func (h *tlogHandler) registerTiles(root *mux.Router, requireToken mux.MiddlewareFunc) {
	r := root.PathPrefix("/tlog").Subrouter()
	if requireToken != nil {
		r.Use(requireToken)
	}
	r.Handle("/checkpoint", handlerFunc(h.handleTlogCheckpoint)).Methods("GET")
	r.Handle("/tile/{tile:.+}", requires(h.ready, h.handleTile)).Methods("GET")
}

// handleTlogCheckpoint is audit/checkpoint's plain text.
func (h *tlogHandler) handleTlogCheckpoint(w http.ResponseWriter, r *http.Request) error {
	r.Header.Del("Accept")
	w.Header().Set("Cache-Control", "no-cache") // it changes (c2sp.org/tlog-tiles: no caching beyond seconds)
	return h.handleCheckpoint(w, r)
}

// handleTile answers a tile's bytes (application/octet-stream). A full
// tile never changes: it may be cached for good; a partial one grows.
func (h *tlogHandler) handleTile(w http.ResponseWriter, r *http.Request) error {
	rest := mux.Vars(r)["tile"]
	var b []byte
	var err error
	full := false
	if t, perr := tlog.ParseTilePath("tile/" + rest); perr == nil {
		b, err = h.tlog.Tile(r.Context(), "tile/"+rest) // the Go checksum database's layout
		full = t.W == 1<<uint(t.H)
	} else {
		b, err = h.tlog.TilesTile(r.Context(), rest) // c2sp.org/tlog-tiles
		full = !strings.Contains(rest, ".p/")
	}
	if err != nil {
		return err
	}
	hd := w.Header()
	hd.Set("Content-Type", "application/octet-stream")
	hd.Set("Content-Length", strconv.Itoa(len(b)))
	if full {
		hd.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		hd.Set("Cache-Control", "no-cache")
	}
	w.WriteHeader(http.StatusOK)
	w.Write(b)
	return nil
}
