package books

import (
	"github.com/tradeledger/tradeledger/domain"
)

// The period statement: per pair key, the lots held at the start of the
// period (opening), what the period's fills added (acquired) and took
// (disposed), and the lots held at its end (closing), in the pair's quote:
//
//	opening.quantity  + acquired.quantity − disposed.quantity  = closing.quantity
//	opening.costBasis + acquired.cost     − disposed.costBasis = closing.costBasis
//	openingPosition   + acquired.quantity − disposed.quantity − unmatched.quantity = closingPosition
//
// exactly, under every method (statement_test.go proves it over random
// logs). Quantities and cost bases are those of the lots (what the books
// know the cost of); a position counts every fill, so it falls below the
// lots' quantity when coins the log never saw bought were sold
// (unmatched). acquired.cost includes the buys' valued fees; fees is every
// valued fee of the period (buys' and sells'); the realized gain is the
// disposals' (the realized report's). The unrealized gain values the
// closing lots at the closing price, the pair's last fill price before the
// period's end (none without a fill: no unrealized gain).
//
// In the reporting currency (when the query names one): the realized gain
// as the realized report converts it (lot by lot), the fees at each fill's
// time, the closing value and the unrealized gain at the latest rate
// before the period's end. A figure whose rate is missing is absent and
// the line's key is listed in the currency totals' unconverted.

// Holding is lots held: their quantity and cost.
type Holding struct {
	Quantity  domain.Number `json:"quantity"`
	CostBasis domain.Number `json:"costBasis"`
}

// Acquired is the period's buys: quantity and cost (fees included) of the
// lots they added, and those fees.
type Acquired struct {
	Quantity domain.Number `json:"quantity"`
	Cost     domain.Number `json:"cost"`
	Fees     domain.Number `json:"fees"`
	Fills    int64         `json:"fills"`
}

// Disposed is the period's sells: the quantity taken from lots, its
// proceeds, matched fees, the cost basis of the lots taken and the gain.
type Disposed struct {
	Quantity  domain.Number `json:"quantity"`
	Proceeds  domain.Number `json:"proceeds"`
	Fees      domain.Number `json:"fees"`
	CostBasis domain.Number `json:"costBasis"`
	Gain      domain.Number `json:"gain"`
	Fills     int64         `json:"fills"`
}

// LineCurrency is a statement line's figures in the reporting currency;
// a figure whose rate was missing is absent.
type LineCurrency struct {
	RealizedGain   *domain.Number `json:"realizedGain,omitempty"`
	Fees           *domain.Number `json:"fees,omitempty"`
	ClosingValue   *domain.Number `json:"closingValue,omitempty"`
	UnrealizedGain *domain.Number `json:"unrealizedGain,omitempty"`
}

// Line is one pair key's statement.
type Line struct {
	Key             string         `json:"key"`
	Exchange        string         `json:"exchange"`
	Pair            string         `json:"pair"`
	Asset           string         `json:"asset"`
	Quote           string         `json:"quote"`
	Opening         Holding        `json:"opening"`
	OpeningPosition domain.Number  `json:"openingPosition"`
	Acquired        Acquired       `json:"acquired"`
	Disposed        Disposed       `json:"disposed"`
	Unmatched       Unmatched      `json:"unmatched"`
	Fees            domain.Number  `json:"fees"`
	UnconvertedFees []FeeAmount    `json:"unconvertedFees"`
	RealizedGain    domain.Number  `json:"realizedGain"`
	Closing         Holding        `json:"closing"`
	ClosingPosition domain.Number  `json:"closingPosition"`
	ClosingPrice    *domain.Number `json:"closingPrice"`     // null: no fill before the end
	ClosingPriceAt  int64          `json:"closingPriceTime"` // ms, 0 with no price
	UnrealizedGain  *domain.Number `json:"unrealizedGain"`   // null: no closing price
	InCurrency      *LineCurrency  `json:"inCurrency,omitempty"`
}

// AssetStatement is one asset's statement figures in the reporting
// currency, summed over the figures of its lines that converted.
type AssetStatement struct {
	Asset          string        `json:"asset"`
	RealizedGain   domain.Number `json:"realizedGain"`
	Fees           domain.Number `json:"fees"`
	ClosingValue   domain.Number `json:"closingValue"`
	UnrealizedGain domain.Number `json:"unrealizedGain"`
}

// StatementCurrency is a statement in the reporting currency: per asset
// and in all, and the keys of lines with a figure that did not convert.
type StatementCurrency struct {
	Currency    string           `json:"currency"`
	Total       AssetStatement   `json:"total"`
	Assets      []AssetStatement `json:"assets"`
	Unconverted []string         `json:"unconverted"`
}

// Statement is the period statement.
type Statement struct {
	Method     string             `json:"method"`
	From       int64              `json:"from"`
	To         int64              `json:"to"` // 0: no end
	Timezone   string             `json:"timezone"`
	Lines      []Line             `json:"lines"`
	InCurrency *StatementCurrency `json:"inCurrency,omitempty"`
}

// lineAcc is a line while it is summed.
type lineAcc struct {
	acqQty, acqCost, acqFees              domain.Decimal
	disQty, disProceeds, disFees, disCost domain.Decimal
	gain, unmQty, unmProceeds, fees       domain.Decimal
	acqFills, disFills                    int64
	unconv                                feeBag
	gainR, feesR                          domain.Decimal
	gainMissing, feesMissing              bool
}

// StatementReport returns the statement of q's period under q's method:
// one line per pair key with a fill before the period's end, sorted by
// key.
func StatementReport(src Source, q Query) (*Statement, error) {
	acc := map[string]*lineAcc{}
	line := func(k string) *lineAcc {
		a := acc[k]
		if a == nil {
			a = &lineAcc{}
			acc[k] = a
		}
		return a
	}
	z := newRealizer(src, &q)
	snap := z.w.snap
	onFill := func(p *pairWalk, f *Fill, r *domain.FillPnl) {
		a := line(p.Key)
		fee := domain.Zero
		if f.Fee.Valued {
			fee = f.Fee.Quote
		} else {
			a.unconv.add(f.Fee.Asset, f.Fee.Amount)
		}
		a.fees = a.fees.Add(fee)
		if q.Currency != "" && !fee.IsZero() {
			if c, ok := src.BookConvert(snap, fee, p.Quote, q.Currency, f.Time); ok {
				a.feesR = a.feesR.Add(c.Amount)
			} else {
				a.feesMissing = true
			}
		}
		if !f.Sell {
			a.acqQty, a.acqCost, a.acqFees, a.acqFills = a.acqQty.Add(r.Matched), a.acqCost.Add(r.LotCost), a.acqFees.Add(fee), a.acqFills+1
			return
		}
		matchedFee := domain.Zero
		if r.Matched.IsPos() {
			matchedFee = domain.MulDiv(fee, r.Matched, f.Qty)
		}
		a.disQty, a.disProceeds, a.disFees = a.disQty.Add(r.Matched), a.disProceeds.Add(f.Price.Mul(r.Matched)), a.disFees.Add(matchedFee)
		a.disCost, a.gain, a.disFills = a.disCost.Add(r.LotCost), a.gain.Add(r.Pnl), a.disFills+1
		a.unmQty, a.unmProceeds = a.unmQty.Add(r.Unmatched), a.unmProceeds.Add(r.UnmatchedValue)
	}
	err := z.run(onFill, func(d *Disposal) error {
		if q.Currency != "" && len(d.Lots) > 0 {
			a := line(d.Key)
			if d.InCurrency != nil {
				a.gainR = a.gainR.Add(domain.Decimal(d.InCurrency.Gain))
			} else {
				a.gainMissing = true
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := &Statement{Method: q.Method.String(), From: q.From, To: q.To, Timezone: q.loc().String(), Lines: []Line{}}
	var cur *StatementCurrency
	assets := map[string]*AssetStatement{}
	if q.Currency != "" {
		cur = &StatementCurrency{Currency: q.Currency, Assets: []AssetStatement{}, Unconverted: []string{}}
	}
	end := endOf(&q)
	for _, p := range z.w.pairs {
		if p.fills == 0 {
			continue // no fill before the end in the snapshot
		}
		a := line(p.Key)
		l := Line{Key: p.Key, Exchange: p.Exchange, Pair: p.Pair.Pair, Asset: p.Base, Quote: p.Quote,
			Opening:         Holding{Quantity: domain.Number(p.openQty), CostBasis: domain.Number(p.openCost)},
			OpeningPosition: domain.Number(p.openPosn),
			Acquired:        Acquired{Quantity: domain.Number(a.acqQty), Cost: domain.Number(a.acqCost), Fees: domain.Number(a.acqFees), Fills: a.acqFills},
			Disposed: Disposed{Quantity: domain.Number(a.disQty), Proceeds: domain.Number(a.disProceeds), Fees: domain.Number(a.disFees),
				CostBasis: domain.Number(a.disCost), Gain: domain.Number(a.gain), Fills: a.disFills},
			Unmatched:       Unmatched{Quantity: domain.Number(a.unmQty), Proceeds: domain.Number(a.unmProceeds)},
			Fees:            domain.Number(a.fees),
			UnconvertedFees: a.unconv.list(),
			RealizedGain:    domain.Number(a.gain),
			Closing:         Holding{Quantity: domain.Number(p.lots.Qty()), CostBasis: domain.Number(p.lots.Cost())},
			ClosingPosition: domain.Number(p.position),
		}
		// The walk stopped before the end: the last fill it read is the
		// closing price.
		value := p.lots.Qty().Mul(p.price)
		unreal := value.Sub(p.lots.Cost())
		l.ClosingPrice, l.ClosingPriceAt, l.UnrealizedGain = num(p.price), p.priceT, num(unreal)
		if cur != nil {
			lc := &LineCurrency{}
			missing := a.gainMissing || a.feesMissing
			if !a.gainMissing {
				lc.RealizedGain = num(a.gainR)
			}
			if !a.feesMissing {
				lc.Fees = num(a.feesR)
			}
			cv, ok1 := src.BookConvert(snap, value, p.Quote, q.Currency, end-1)
			cu, ok2 := src.BookConvert(snap, unreal, p.Quote, q.Currency, end-1)
			if ok1 && ok2 {
				lc.ClosingValue, lc.UnrealizedGain = num(cv.Amount), num(cu.Amount)
			} else {
				missing = true
			}
			l.InCurrency = lc
			if missing {
				cur.Unconverted = append(cur.Unconverted, p.Key)
			}
			s := assets[p.Base]
			if s == nil {
				s = &AssetStatement{Asset: p.Base}
				assets[p.Base] = s
			}
			for _, x := range []struct {
				dst *domain.Number
				v   *domain.Number
			}{{&s.RealizedGain, lc.RealizedGain}, {&s.Fees, lc.Fees}, {&s.ClosingValue, lc.ClosingValue}, {&s.UnrealizedGain, lc.UnrealizedGain}} {
				if x.v != nil {
					*x.dst = addN(*x.dst, *x.v)
				}
			}
		}
		out.Lines = append(out.Lines, l)
	}
	if cur != nil {
		for _, s := range assets {
			cur.Assets = append(cur.Assets, *s)
			cur.Total.RealizedGain = addN(cur.Total.RealizedGain, s.RealizedGain)
			cur.Total.Fees = addN(cur.Total.Fees, s.Fees)
			cur.Total.ClosingValue = addN(cur.Total.ClosingValue, s.ClosingValue)
			cur.Total.UnrealizedGain = addN(cur.Total.UnrealizedGain, s.UnrealizedGain)
		}
		sortBy(cur.Assets, func(s AssetStatement) string { return s.Asset })
		out.InCurrency = cur
	}
	return out, nil
}

func num(d domain.Decimal) *domain.Number {
	n := domain.Number(d)
	return &n
}

// endOf returns the end of q's period in ms (the largest time without one).
func endOf(q *Query) int64 {
	if q.To == 0 {
		return 1<<62 - 1
	}
	return q.To
}
