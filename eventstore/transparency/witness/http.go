package witness

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// MaxRequestBytes bounds an add-checkpoint body: 63 proof lines and a
// checkpoint with the 16 signatures c2sp.org/signed-note asks verifiers
// to take, post-quantum ones included, fit well within it.
const MaxRequestBytes = 128 << 10

// ServeHTTP serves the witness (c2sp.org/tlog-witness, one prefix for
// submission and monitoring):
//
//	POST /add-checkpoint           a checkpoint and its consistency proof; the cosignature
//	GET  /<origin hash>/checkpoint the latest checkpoint cosigned of that log (404: none)
//	GET  /                         the witness's name and verifier key, text/plain
func (w *Witness) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/add-checkpoint":
		if r.Method != http.MethodPost {
			rw.Header().Set("Allow", "POST")
			http.Error(rw, "add-checkpoint takes a POST", http.StatusMethodNotAllowed)
			return
		}
		w.serveAdd(rw, r)
	case strings.HasSuffix(r.URL.Path, "/checkpoint") && strings.Count(r.URL.Path, "/") == 2 && r.Method == http.MethodGet:
		w.serveMonitor(rw, r, strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/"), "/checkpoint"))
	case r.URL.Path == "/" && r.Method == http.MethodGet:
		text(rw, http.StatusOK, []byte("c2sp.org/tlog-witness witness "+w.Name()+"\nverifier key: "+w.VerifierKey()+"\n"))
	default:
		http.NotFound(rw, r)
	}
}

func (w *Witness) serveAdd(rw http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(rw, r.Body, MaxRequestBytes))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		http.Error(rw, "request body above "+strconv.Itoa(MaxRequestBytes)+" bytes", http.StatusRequestEntityTooLarge)
		return
	}
	if err != nil {
		http.Error(rw, "reading the request: "+err.Error(), http.StatusBadRequest)
		return
	}
	a, err := w.AddCheckpoint(r.Context(), body)
	if err != nil {
		http.Error(rw, "the witness's database failed", http.StatusInternalServerError)
		return
	}
	if a.Status == http.StatusConflict {
		rw.Header().Set("Content-Type", "text/x.tlog.size")
		rw.WriteHeader(a.Status)
		rw.Write(a.Body)
		return
	}
	text(rw, a.Status, a.Body)
}

func (w *Witness) serveMonitor(rw http.ResponseWriter, r *http.Request, hash string) {
	origins, err := w.db.QueryContext(r.Context(), `SELECT origin, note FROM logs WHERE note != ''`)
	if err != nil {
		http.Error(rw, "the witness's database failed", http.StatusInternalServerError)
		return
	}
	defer origins.Close()
	for origins.Next() {
		var origin, note string
		if err := origins.Scan(&origin, &note); err != nil {
			break
		}
		if OriginHash(origin) == hash {
			text(rw, http.StatusOK, []byte(note))
			return
		}
	}
	http.Error(rw, "no checkpoint cosigned for that log", http.StatusNotFound)
}

func text(rw http.ResponseWriter, status int, b []byte) {
	rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
	rw.Header().Set("Content-Length", strconv.Itoa(len(b)))
	rw.WriteHeader(status)
	rw.Write(b)
}
