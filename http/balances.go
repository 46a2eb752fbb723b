package http

import (
	"net/http"
	"sort"

	"github.com/gorilla/mux"

	"github.com/tradeledger/tradeledger/domain"
)

// Balances come from the Trader's projection of BalancesObserved events:
// what each exchange last reported, appended only when it changed.

func (s *Server) registerBalanceRoutes(r *mux.Router) {
	r.HandleFunc("/balances", s.handleBalances).Methods("POST")
}

// balanceEntry is the spec's balance entry: amounts as decimal strings
// (domain.Decimal's String form: 8 decimals, more when the amount has them).
type balanceEntry struct {
	Asset     string         `json:"Asset"`
	Exchange  string         `json:"Exchange"`
	Available domain.Decimal `json:"Available Qty"`
	OnOrder   domain.Decimal `json:"On Order"`
}

// handleBalances answers every asset of every exchange, sorted by exchange
// then asset; an empty array before any balance was observed. With
// ?asOf= (asof.go), what the exchanges had last reported by then.
func (s *Server) handleBalances(w http.ResponseWriter, r *http.Request) {
	asOf, err := s.queryAsOf(r.URL.Query())
	if err != nil {
		Error(w, r, err)
		return
	}
	var obs []domain.BalancesObserved
	switch {
	case asOf != 0:
		st, err := s.pastState(r, asOf, s.liveMethod())
		if err != nil {
			Error(w, r, err)
			return
		}
		obs = st.Balances.Balances()
		markAsOf(w, asOf)
	case s.Trader == nil:
		Error(w, r, domain.Errorf(domain.EUNAVAILABLE, "trading is not configured"))
		return
	default:
		obs = s.Trader.Balances()
	}
	out := []balanceEntry{}
	for _, ob := range obs {
		for _, b := range ob.Balances {
			out = append(out, balanceEntry{Asset: b.Asset, Exchange: ob.Exchange, Available: b.Available, OnOrder: b.OnOrder})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Exchange != out[j].Exchange {
			return out[i].Exchange < out[j].Exchange
		}
		return out[i].Asset < out[j].Asset
	})
	writeJSON(w, http.StatusOK, out)
}
