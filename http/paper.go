package http

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore"
)

// Activity outside the service on a paper exchange (domain.PaperActivity):
// POST paper/activity (admin scope) records a deposit, a withdrawal, a
// trade by hand, a conversion or a drift in the paper exchange's own
// stream, and the simulator applies it to the paper account as the
// exchange would (refusing what the exchange would refuse: funds that are
// not there, a pair it does not list). The service learns of it only
// through its account sync, as it would on a real exchange.

// PaperActivity is the simulator as the paper route uses it (cmd wires
// the paper.Simulator and the connectors' choice).
type PaperActivity interface {
	// Simulated reports whether the exchange trades on the paper
	// exchange now, and if not, why.
	Simulated(exchange string) (bool, string)
	// DecideActivity decides the activity on its exchange's paper
	// account (paper.Simulator.DecideActivity).
	DecideActivity(clock domain.Clock, p domain.PaperActivity) ([]domain.Event, error)
}

// paperHandler serves paper/activity: the request checked against the
// configuration in force (when there is one), decided by the PaperActivity
// (503 without one) and appended through the command path.
type paperHandler struct {
	paper     PaperActivity
	exchanges CurrentConfig
	cmds      *eventstore.Commands
	clock     domain.Clock
}

func (h *paperHandler) register(r *mux.Router) {
	r.Handle("/paper/activity", handlerFunc(h.handlePaperActivity)).Methods("POST")
}

// paperActivityRequest is the body: amounts as decimal strings (a JSON
// number is taken as its own text).
type paperActivityRequest struct {
	Exchange string          `json:"exchange"`
	Kind     string          `json:"kind"`
	Asset    string          `json:"asset"`
	Amount   json.RawMessage `json:"amount"`
	Fee      json.RawMessage `json:"fee"`
	Pair     string          `json:"pair"`
	Side     string          `json:"side"`
	Price    json.RawMessage `json:"price"`
	ToAsset  string          `json:"toAsset"`
	ToAmount json.RawMessage `json:"toAmount"`
}

// decimalText returns an amount field's text: a JSON string's content, a
// JSON number's own text (never through a float), "" when absent or null;
// anything else is EINVALID naming the field.
func decimalText(field string, raw json.RawMessage) (string, error) {
	s := strings.TrimSpace(string(raw))
	switch {
	case s == "" || s == "null":
		return "", nil
	case s[0] == '"':
		var v string
		if err := json.Unmarshal(raw, &v); err != nil {
			return "", domain.Errorf(domain.EINVALID, "field %q must be a decimal string", field)
		}
		return v, nil
	case s[0] == '-' || ('0' <= s[0] && s[0] <= '9'):
		return s, nil
	}
	return "", domain.Errorf(domain.EINVALID, "field %q must be a decimal string (e.g. \"0.25\")", field)
}

type paperActivityResponse struct {
	Status   string `json:"status"`
	ID       string `json:"id"`
	Exchange string `json:"exchange"`
	Kind     string `json:"kind"`
	Time     int64  `json:"time"`
}

func (h *paperHandler) handlePaperActivity(w http.ResponseWriter, r *http.Request) error {
	var req paperActivityRequest
	if err := decodeJSON(r, &req, false); err != nil {
		return err
	}
	text := map[string]string{}
	for _, f := range []struct {
		name string
		raw  json.RawMessage
	}{{"amount", req.Amount}, {"fee", req.Fee}, {"price", req.Price}, {"toAmount", req.ToAmount}} {
		v, err := decimalText(f.name, f.raw)
		if err != nil {
			return err
		}
		text[f.name] = v
	}
	p, err := domain.PaperActivityRequest{Exchange: req.Exchange, Kind: req.Kind, Asset: req.Asset, Amount: text["amount"],
		Fee: text["fee"], Pair: req.Pair, Side: req.Side, Price: text["price"], ToAsset: req.ToAsset, ToAmount: text["toAmount"]}.Parse()
	if err != nil {
		return err
	}
	if h.exchanges != nil {
		if _, ok := h.exchanges.Current().Exchange(p.Exchange); !ok {
			return domain.Errorf(domain.EINVALID, "field \"exchange\": %.40q is not in config.exchanges", p.Exchange)
		}
	}
	if h.paper == nil {
		return domain.Errorf(domain.EUNAVAILABLE, "the paper exchange is not configured")
	}
	if ok, why := h.paper.Simulated(p.Exchange); !ok {
		return domain.Errorf(domain.ECONFLICT, "exchange %s does not trade on the paper exchange (%s): its activity happens on the exchange itself", p.Exchange, why)
	}
	res, err := eventstore.Run(r.Context(), h.cmds, eventstore.Command[struct{}]{
		Stream: domain.PaperStream(p.Exchange),
		Load:   func(context.Context) (struct{}, domain.ExpectedVersion, error) { return struct{}{}, domain.Any, nil },
		Decide: func(struct{}) ([]domain.Event, error) { return h.paper.DecideActivity(h.clock, p) },
	})
	if err != nil {
		return err
	}
	out := paperActivityResponse{Status: "success", Exchange: p.Exchange, Kind: p.Kind}
	if len(res.Events) > 0 {
		out.ID, out.Time = res.Events[0].ID, res.Events[0].Time
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
