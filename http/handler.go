package http

import "net/http"

// handlerFunc is the shape of every route's handler: parse and validate,
// call the narrow interface its handler type holds, encode — and return
// the error instead of writing it. Its ServeHTTP is the one adapter that
// writes a returned error (Error: the status its code maps to, the JSON
// body). A handler that has started its answer (an event stream, a CSV)
// cannot answer an error any more: it logs a later failure and returns
// nil.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// ServeHTTP runs h and writes the error it returns, if any.
func (h handlerFunc) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := h(w, r); err != nil {
		Error(w, r, err)
	}
}

// requires returns h behind ready: the error ready returns (a missing
// dependency: 503) is the answer, before h reads anything. A handler
// that must check its input first (a 400 before a 503) checks ready
// itself.
func requires(ready func() error, h handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := ready(); err != nil {
			return err
		}
		return h(w, r)
	}
}
