package http

import (
	"net/http"
	"sort"

	"github.com/gorilla/mux"

	"github.com/tradeledger/tradeledger/domain"
)

// BalanceReader returns the balances each exchange last reported
// (exchange/engine.Trader: its projection of BalancesObserved events,
// appended only when they changed).
type BalanceReader interface {
	Balances() []domain.BalancesObserved
}

func (s *Server) registerBalanceRoutes(r *mux.Router) {
	r.HandleFunc("/balances", s.handleBalances).Methods("POST")
}

// BalanceEntry is the spec's balance entry: "Available Qty" and "On
// Order" as the spec writes them, strings of a decimal with 8 places,
// rounded half to even once, here (domain.Decimal.Round); beside them, in
// fields of our own, the exact amounts as the log holds them (all their
// digits, up to 12 decimals).
type BalanceEntry struct {
	Asset          string `json:"Asset"`
	Exchange       string `json:"Exchange"`
	Available      string `json:"Available Qty"`
	OnOrder        string `json:"On Order"`
	AvailableExact string `json:"availableExact"`
	OnOrderExact   string `json:"onOrderExact"`
}

// balancePlaces is how many decimals the spec's balance entry has.
const balancePlaces = 8

// newBalanceEntry returns b of exchange as the balances route answers it.
func newBalanceEntry(exchange string, b domain.AssetBalance) BalanceEntry {
	return BalanceEntry{Asset: b.Asset, Exchange: exchange,
		Available: b.Available.Round(balancePlaces).String(), OnOrder: b.OnOrder.Round(balancePlaces).String(),
		AvailableExact: b.Available.String(), OnOrderExact: b.OnOrder.String()}
}

// handleBalances answers every asset of every exchange, sorted by exchange
// then asset; an empty array before any balance was observed. With asOf
// (asof.go; in the query or the body {"asOf": …}, which the spec's
// request otherwise leaves empty), what the exchanges had last reported
// by then.
func (s *Server) handleBalances(w http.ResponseWriter, r *http.Request) {
	var body pastBody
	if err := decodeOptionalBody(r, &body); err != nil {
		Error(w, r, err)
		return
	}
	asOf, err := s.readPast(r.URL.Query(), &body)
	if err != nil {
		Error(w, r, err)
		return
	}
	var obs []domain.BalancesObserved
	switch {
	case asOf.past:
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
	writeJSON(w, http.StatusOK, BalanceEntries(obs))
}

// BalanceEntries returns what the balances route answers for obs: every
// asset of every exchange, sorted by exchange then asset (an empty array
// for none). tradeledger replay prints the same.
func BalanceEntries(obs []domain.BalancesObserved) []BalanceEntry {
	out := []BalanceEntry{}
	for _, ob := range obs {
		for _, b := range ob.Balances {
			out = append(out, newBalanceEntry(ob.Exchange, b))
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Exchange != out[j].Exchange {
			return out[i].Exchange < out[j].Exchange
		}
		return out[i].Asset < out[j].Asset
	})
	return out
}
