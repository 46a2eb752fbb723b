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

// balancesHandler serves POST balances from the BalanceReader, and as of a
// past time from the past states (asof.go).
type balancesHandler struct {
	live BalanceReader
	past pastReads
}

func (h *balancesHandler) register(r *mux.Router) {
	r.Handle("/balances", handlerFunc(h.handleBalances)).Methods("POST")
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
func (h *balancesHandler) handleBalances(w http.ResponseWriter, r *http.Request) error {
	var body pastBody
	if err := decodeOptionalBody(r, &body); err != nil {
		return err
	}
	asOf, err := h.past.read(r.URL.Query(), &body)
	if err != nil {
		return err
	}
	var obs []domain.BalancesObserved
	switch {
	case asOf.past:
		if obs, err = h.past.balances(r, asOf); err != nil {
			return err
		}
		markAsOf(w, asOf)
	case h.live == nil:
		return domain.Errorf(domain.EUNAVAILABLE, "trading is not configured")
	default:
		obs = h.live.Balances()
	}
	writeJSON(w, http.StatusOK, BalanceEntries(obs))
	return nil
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
