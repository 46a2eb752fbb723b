package http

import (
	"context"
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/tradeledger/tradeledger/domain"
)

// MarketLister lists an exchange's tradable markets with 24-hour
// statistics (exchange/engine.Trader, from the exchange's connector). An
// exchange that is not configured is EINVALID or ENOTFOUND.
type MarketLister interface {
	Markets(ctx context.Context, exchange string) ([]domain.Market, error)
}

// pairsHandler serves the pair lists (pairs, pairs/detailed) from a
// MarketLister; the exchange query value is URL-decoded once, so
// "binance%231" is the instance "binance#1". Without a MarketLister they
// answer 503.
type pairsHandler struct {
	markets MarketLister
}

func (h *pairsHandler) register(r *mux.Router) {
	r.Handle("/pairs", handlerFunc(h.handlePairs)).Methods("GET")
	r.Handle("/pairs/detailed", handlerFunc(h.handlePairsDetailed)).Methods("GET")
}

type pairList struct {
	Status   string   `json:"status"`
	PairList []string `json:"pairList"`
}

// pairDetail is one market of pairs/detailed. Beyond Gunbot's fields:
// last (price), and the exchange's order rules when it has them (absent
// otherwise, as on the paper exchange): tickSize (price step), stepSize
// (amount step), minQty and minNotional, which also say how precisely a
// client should show the pair's prices and amounts.
type pairDetail struct {
	PairName    string         `json:"pairName"`
	Volume      domain.Number  `json:"volume"`
	Low         string         `json:"low"`
	High        string         `json:"high"`
	Change      string         `json:"change"`
	Last        domain.Number  `json:"last"`
	TickSize    *domain.Number `json:"tickSize,omitempty"`
	StepSize    *domain.Number `json:"stepSize,omitempty"`
	MinQty      *domain.Number `json:"minQty,omitempty"`
	MinNotional *domain.Number `json:"minNotional,omitempty"`
}

// nonZero returns d as a Number, or nil when it is zero (an absent rule).
func nonZero(d domain.Decimal) *domain.Number {
	if d.IsZero() {
		return nil
	}
	n := domain.Number(d)
	return &n
}

type pairDetailList struct {
	Status   string                  `json:"status"`
	PairList map[string][]pairDetail `json:"pairList"`
}

// markets reads the exchange query parameter and lists its markets; a
// missing or unknown exchange is 400 naming the parameter.
func (h *pairsHandler) list(r *http.Request) ([]domain.Market, error) {
	if h.markets == nil {
		return nil, domain.Errorf(domain.EUNAVAILABLE, "trading is not configured")
	}
	exchange := strings.TrimSpace(r.URL.Query().Get("exchange"))
	if exchange == "" {
		return nil, domain.Errorf(domain.EINVALID, "query parameter \"exchange\" is required")
	}
	ms, err := h.markets.Markets(r.Context(), exchange)
	if domain.ErrorCode(err) == domain.EINVALID || domain.ErrorCode(err) == domain.ENOTFOUND {
		return nil, domain.Errorf(domain.EINVALID, "query parameter \"exchange\": unknown exchange %q", exchange)
	}
	return ms, err
}

func (h *pairsHandler) handlePairs(w http.ResponseWriter, r *http.Request) error {
	ms, err := h.list(r)
	if err != nil {
		return err
	}
	out := pairList{Status: "success", PairList: make([]string, 0, len(ms))}
	for _, m := range ms {
		out.PairList = append(out.PairList, m.Pair)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// handlePairsDetailed groups the markets by quote currency: pairName,
// volume (24h, base units, a number), low, high (decimal strings) and
// change (24h percent, a string such as "-1.25"), then the fields beyond
// Gunbot's (pairDetail).
func (h *pairsHandler) handlePairsDetailed(w http.ResponseWriter, r *http.Request) error {
	ms, err := h.list(r)
	if err != nil {
		return err
	}
	out := pairDetailList{Status: "success", PairList: map[string][]pairDetail{}}
	for _, m := range ms {
		change, _ := domain.Number(m.ChangePct24h).MarshalJSON()
		out.PairList[m.Quote] = append(out.PairList[m.Quote], pairDetail{
			PairName: m.Pair, Volume: domain.Number(m.Volume24h),
			Low: m.Low24h.String(), High: m.High24h.String(), Change: string(change), Last: domain.Number(m.Last),
			TickSize: nonZero(m.Filters.TickSize), StepSize: nonZero(m.Filters.StepSize),
			MinQty: nonZero(m.Filters.MinQty), MinNotional: nonZero(m.Filters.MinNotional),
		})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
