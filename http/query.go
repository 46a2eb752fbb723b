package http

import (
	"net/http"
	"sort"

	"github.com/tradeledger/tradeledger/domain"
)

// multiValued are the query parameters that take several values by
// repeating them: pair keys (keys[], and keys on the reports), event
// types (audit/events, events/stream) and order states (orders/all).
// Every other parameter takes one value.
var multiValued = map[string]bool{"keys[]": true, "keys": true, "type": true, "state": true}

// singleValuedQuery answers 400 naming the parameter when a request gives
// a single-valued query parameter more than once (?asOf=1&asOf=2,
// ?method=fifo&method=lifo): a handler reads one value, and which one
// would be a guess the client cannot see.
func (s *Server) singleValuedQuery(next http.Handler) http.Handler {
	return handlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		if r.URL.RawQuery != "" {
			q := r.URL.Query()
			names := make([]string, 0, len(q))
			for name, vs := range q {
				if len(vs) > 1 && !multiValued[name] {
					names = append(names, name)
				}
			}
			if len(names) > 0 {
				sort.Strings(names)
				return domain.Errorf(domain.EINVALID, "query parameter %q is given %d times; it takes one value", names[0], len(q[names[0]]))
			}
		}
		next.ServeHTTP(w, r)
		return nil
	})
}
