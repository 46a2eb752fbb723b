package domain

import (
	"strings"

	"github.com/tradeledger/tradeledger/domain/decimal"
)

// Activity on a paper account that did not come from this service (POST
// /api/v1/paper/activity): what a person or another bot would do on a real
// exchange account — a deposit, a withdrawal, a trade by hand, a
// conversion —, or a drift (a balance changed with no history behind it,
// what an unexplained difference looks like). It is the paper exchange's
// own record, in its own stream (PaperStream), not a fact of the account:
// the simulator applies it to the paper account (and again when its state
// is rebuilt from the log), and the service learns of it only as it would
// on a real exchange, through the account's sync.

// PaperStream is the stream of the activity simulated on one paper
// exchange.
func PaperStream(exchange string) string { return "paper-" + exchange }

// TypePaperActivity is the event of one simulated activity.
const TypePaperActivity = "PaperActivity"

// Kinds of simulated activity.
const (
	PaperDeposit    = "deposit"
	PaperWithdrawal = "withdrawal"
	PaperTrade      = "trade"
	PaperDrift      = "drift"
	PaperConversion = "conversion"
)

// PaperActivity is one simulated activity on a paper exchange. By kind:
//   - deposit: Amount of Asset arrives;
//   - withdrawal: Amount of Asset leaves, and the network Fee with it;
//   - trade: a trade of Amount (base) of Pair at Price on Side, its Fee in
//     Asset (the quote when empty);
//   - conversion: Amount of Asset becomes ToAmount of ToAsset (Fee, in
//     ToAsset, is shown and already out of ToAmount);
//   - drift: Asset's balance moves by Amount (either sign), and nothing on
//     the exchange says why.
type PaperActivity struct {
	Exchange string          `json:"exchange"`
	Kind     string          `json:"kind"`
	Asset    string          `json:"asset,omitempty"`
	Amount   decimal.Decimal `json:"amount"`
	Fee      decimal.Decimal `json:"fee,omitzero"`
	Pair     string          `json:"pair,omitempty"`
	Side     Side            `json:"side,omitempty"`
	Price    decimal.Decimal `json:"price,omitzero"`
	ToAsset  string          `json:"toAsset,omitempty"`
	ToAmount decimal.Decimal `json:"toAmount,omitzero"`
}

// PaperActivityRequest is a simulated activity as the API receives it:
// amounts as decimal strings.
type PaperActivityRequest struct {
	Exchange, Kind, Asset, Amount, Fee, Pair, Side, Price, ToAsset, ToAmount string
}

// Parse checks the request for its kind and returns the activity, or
// EINVALID naming the field (the API's: exchange, kind, asset, amount,
// fee, pair, side, price, toAsset, toAmount).
func (r PaperActivityRequest) Parse() (PaperActivity, error) {
	p := PaperActivity{Exchange: r.Exchange, Kind: r.Kind, Asset: strings.ToUpper(r.Asset), Pair: r.Pair, Side: Side(r.Side), ToAsset: strings.ToUpper(r.ToAsset)}
	if err := ValidateExchangeName(r.Exchange); err != nil {
		return p, Errorf(EINVALID, "field \"exchange\": %s", ErrorMessage(err))
	}
	var err error
	if p.Fee, err = r.amount("fee", r.Fee, false); err != nil {
		return p, err
	}
	if p.Fee.IsNeg() {
		return p, Errorf(EINVALID, "field \"fee\" must not be negative")
	}
	switch r.Kind {
	case PaperDeposit, PaperWithdrawal, PaperDrift, PaperConversion:
		err = r.parseMovement(&p)
	case PaperTrade:
		err = r.parseTrade(&p)
	case "":
		err = Errorf(EINVALID, "field \"kind\" is required: deposit, withdrawal, trade, conversion or drift")
	default:
		err = Errorf(EINVALID, "field \"kind\" must be deposit, withdrawal, trade, conversion or drift, not %.20q", r.Kind)
	}
	return p, err
}

// parseMovement fills p's Amount (and for a conversion ToAmount) from a
// deposit, withdrawal, drift or conversion request, whose Asset (upper
// case) p already holds, or returns EINVALID naming the field: an asset
// that is not a symbol, an amount that is not positive (a drift's must
// only be non-zero), a fee on a deposit, a conversion to the same asset or
// to an amount that is not positive.
func (r PaperActivityRequest) parseMovement(p *PaperActivity) error {
	if err := checkPaperAsset("asset", p.Asset); err != nil {
		return err
	}
	var err error
	if p.Amount, err = r.amount("amount", r.Amount, true); err != nil {
		return err
	}
	if r.Kind == PaperDrift {
		if p.Amount.IsZero() {
			return Errorf(EINVALID, "field \"amount\" of a drift must not be zero")
		}
	} else if !p.Amount.IsPos() {
		return Errorf(EINVALID, "field \"amount\" must be positive")
	}
	if r.Kind == PaperDeposit && !p.Fee.IsZero() {
		return Errorf(EINVALID, "field \"fee\": a deposit has no fee on the exchange")
	}
	if r.Kind != PaperConversion {
		return nil
	}
	if err := checkPaperAsset("toAsset", p.ToAsset); err != nil {
		return err
	}
	if p.ToAsset == p.Asset {
		return Errorf(EINVALID, "field \"toAsset\" must differ from \"asset\"")
	}
	p.ToAmount, err = r.positiveAmount("toAmount", r.ToAmount)
	return err
}

// parseTrade fills p's Amount and Price from a trade request, or returns
// EINVALID naming the field: a pair or side that is not valid, an amount
// or price that is not positive, a notional (amount × price) beyond the
// ledger's range, a fee asset (optional) that is not a symbol.
func (r PaperActivityRequest) parseTrade(p *PaperActivity) error {
	if err := ValidatePair(r.Pair); err != nil {
		return Errorf(EINVALID, "field \"pair\": %s", ErrorMessage(err))
	}
	if p.Side != Buy && p.Side != Sell {
		return Errorf(EINVALID, "field \"side\" must be buy or sell")
	}
	var err error
	if p.Amount, err = r.positiveAmount("amount", r.Amount); err != nil {
		return err
	}
	if p.Price, err = r.positiveAmount("price", r.Price); err != nil {
		return err
	}
	if _, ok := p.Price.CheckedMul(p.Amount); !ok {
		return Errorf(EINVALID, "field \"amount\": amount × price is beyond the ledger's range")
	}
	if p.Asset != "" {
		return checkPaperAsset("asset", p.Asset)
	}
	return nil
}

// amount parses s, the request's field named field, as a decimal: Zero
// when s is empty and the field optional (need false), else EINVALID
// naming the field (required for the request's kind, or not a decimal).
func (r PaperActivityRequest) amount(field, s string, need bool) (decimal.Decimal, error) {
	if s == "" {
		if need {
			return decimal.Zero, Errorf(EINVALID, "field %q is required for a %s", field, r.Kind)
		}
		return decimal.Zero, nil
	}
	d, err := decimal.ParseDecimal(s)
	if err != nil {
		return decimal.Zero, Errorf(EINVALID, "field %q: %s", field, ErrorMessage(err))
	}
	return d, nil
}

// positiveAmount is amount of a required field that must also be
// positive: EINVALID naming the field otherwise.
func (r PaperActivityRequest) positiveAmount(field, s string) (decimal.Decimal, error) {
	d, err := r.amount(field, s, true)
	if err == nil && !d.IsPos() {
		err = Errorf(EINVALID, "field %q must be positive", field)
	}
	return d, err
}

// checkPaperAsset returns EINVALID naming field unless s is an asset
// symbol: letters and digits, not empty, at most MaxPairLen long.
func checkPaperAsset(field, s string) error {
	if s == "" || len(s) > MaxPairLen || !alnum(s) {
		return Errorf(EINVALID, "field %q must be an asset symbol (letters and digits, e.g. BTC)", field)
	}
	return nil
}

// FeeAsset is the asset a simulated trade's fee is charged in: Asset, or
// the pair's quote.
func (p *PaperActivity) FeeAsset() string {
	if p.Asset != "" {
		return p.Asset
	}
	quote, _, _ := SplitPair(p.Pair)
	return quote
}

// Deltas returns what the activity moves on the paper account.
func (p *PaperActivity) Deltas() []AssetDelta {
	switch p.Kind {
	case PaperDeposit, PaperDrift:
		return []AssetDelta{{p.Asset, p.Amount}}
	case PaperWithdrawal:
		return []AssetDelta{{p.Asset, p.Amount.Add(p.Fee).Neg()}}
	case PaperConversion:
		return []AssetDelta{{p.Asset, p.Amount.Neg()}, {p.ToAsset, p.ToAmount}}
	case PaperTrade:
		return TradeDeltas(p.Pair, p.Side, p.Price, p.Amount, decimal.Zero, p.Fee, p.FeeAsset())
	}
	return nil
}

// DecidePaperActivity returns the PaperActivity event of p on a paper
// account whose available balances available gives, or EINVALID as the
// exchange would refuse it: funds that are not there (a withdrawal, a
// trade, a conversion, a drift below zero), a pair the account does not
// list (listed reports it).
func DecidePaperActivity(clock Clock, p PaperActivity, available func(asset string) decimal.Decimal, listed func(pair string) bool) ([]Event, error) {
	if p.Kind == PaperTrade && listed != nil && !listed(p.Pair) {
		return nil, Errorf(EINVALID, "field \"pair\": %s is not listed on %s", p.Pair, p.Exchange)
	}
	need := map[string]decimal.Decimal{}
	for _, d := range p.Deltas() {
		need[d.Asset] = need[d.Asset].Add(d.Amount)
	}
	for _, d := range p.Deltas() {
		if n := need[d.Asset]; n.IsNeg() {
			if have := available(d.Asset); have.Add(n).IsNeg() {
				field := "amount"
				if p.Kind == PaperTrade && p.Side == Buy {
					field = "price"
				}
				return nil, Errorf(EINVALID, "field %q: insufficient funds: %s %s needs %s, %s available", field, p.Kind, d.Asset, n.Neg(), have)
			}
		}
	}
	return []Event{NewEvent(clock, TypePaperActivity, p)}, nil
}
