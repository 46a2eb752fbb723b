package http

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/tradeledger/tradeledger/domain"
)

// Chart marks (GET chart/marks): one mark per fill of the pair with
// startTime ≤ time ≤ endTime (UNIX seconds), oldest first; see
// projections.Mark. interval (minutes, a positive integer) is validated and
// otherwise unused: marks sit at their fill's second and the chart places
// them on its candles. chart/data belongs to market.go.
func (s *Server) registerChartRoutes(r *mux.Router) {
	r.HandleFunc("/chart/marks", s.handleChartMarks).Methods("GET")
}

func (s *Server) handleChartMarks(w http.ResponseWriter, r *http.Request) {
	l, err := s.ledger()
	if err != nil {
		Error(w, r, err)
		return
	}
	q := r.URL.Query()
	exchange, pair := q.Get("exchange"), q.Get("pair")
	if exchange == "" {
		Error(w, r, domain.Errorf(domain.EINVALID, "exchange is required"))
		return
	}
	if _, _, err := domain.SplitPair(pair); err != nil {
		Error(w, r, domain.Errorf(domain.EINVALID, "pair: %s", domain.ErrorMessage(err)))
		return
	}
	if _, err := queryInt64(q, "interval", 1, 60*24*366); err != nil {
		Error(w, r, err)
		return
	}
	start, err := queryInt64(q, "startTime", 0, 1<<40)
	if err != nil {
		Error(w, r, err)
		return
	}
	end, err := queryInt64(q, "endTime", start, 1<<40)
	if err != nil {
		Error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, l.Marks(exchange, pair, start, end))
}
