package books

import (
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/fold"
)

// The realized-gains report. Every sell fill of the period is a disposal:
// its matched quantity realizes a gain against the lots it consumed, its
// unmatched quantity (coins the log never saw bought) is listed with its
// proceeds and realizes nothing. Per consumed lot ("lot use"):
//
//	proceeds  = price × quantity of the lot used
//	fee       = the sell's matched fee (fee × matched ÷ sold, valued in
//	            quote) × quantity ÷ matched
//	costBasis = the cost the lot gave up (its price and buy fee, pro rata)
//	gain      = proceeds − fee − costBasis
//	holdingDays = calendar days (in the query's zone) from the day acquired
//	            to the day disposed; long term when > holdingPeriodDays
//
// The split of a disposal's proceeds and fee over its lots gives the last
// lot the rounding, so the lots' gains add up to the disposal's gain
// exactly, which is the fill's pnl in the Ledger's sense (domain/pnl.go).
//
// A disposal is a sale of an order's fill, of a trade placed elsewhere
// (Kind "external") or a conversion's disposal leg (Kind "conversion":
// its proceeds are the value of what the conversion brought, as the
// Ledger's fold found it, package fold's move.go). It takes the lots by
// the method first, then coins of unknown cost (UnknownCost: deposited
// with no withdrawal of the service's to explain them, acquired by a
// conversion the log has no rate for), oldest first: their proceeds and
// fee share are listed, their gain is unknown and counted in no gain
// (the disposal's Gain is partial: GainKnown false), never computed as if
// their cost were 0. A conversion the log has no rate for has unknown
// proceeds: the lots it took are listed (Unpriced) and it realizes no
// gain either.
//
// In the reporting currency: proceeds and fee convert at the disposal's
// time, the cost basis at the lot's acquisition time, each with the rate
// from the log at that time (Source.BookConvert), and the gain is their
// difference. A lot use with a missing rate has no reporting-currency
// figures: it is counted in Unconverted, in its quote. A fee no rate
// values in quote (a third asset) counts 0 in the gain, as in the Ledger,
// and is listed in UnconvertedFees as charged.

// Money is a disposal's, or a lot use's, figures in one currency.
type Money struct {
	Proceeds  domain.Number `json:"proceeds"`
	Fee       domain.Number `json:"fee"`
	CostBasis domain.Number `json:"costBasis"`
	Gain      domain.Number `json:"gain"`
}

// LotUse is the part of one lot a disposal consumed.
type LotUse struct {
	AcquiredAt  int64         `json:"acquiredAt"` // ms
	BuyOrderID  int64         `json:"buyOrderId"` // 0 for a lot no order of the service's bought
	Acquired    string        `json:"acquired"`   // how: "order", "external" (a trade placed elsewhere), "conversion" or "deposit" (from the outside, at the log's price)
	Quantity    domain.Number `json:"quantity"`
	Proceeds    domain.Number `json:"proceeds"`
	Fee         domain.Number `json:"fee"`
	CostBasis   domain.Number `json:"costBasis"`
	Gain        domain.Number `json:"gain"`
	HoldingDays int64         `json:"holdingDays"`
	Term        string        `json:"term"` // "short" or "long"
	// InCurrency is the lot use in the reporting currency; absent without
	// a reporting currency or when a rate was missing.
	InCurrency *Money `json:"inCurrency,omitempty"`
}

// Unmatched is quantity sold that no lot held, and its proceeds.
type Unmatched struct {
	Quantity domain.Number `json:"quantity"`
	Proceeds domain.Number `json:"proceeds"`
}

// UnknownLotUse is the part of coins of unknown cost a disposal took: when
// they arrived, how many, their share of the proceeds and fee; their cost
// and gain are unknown.
type UnknownLotUse struct {
	AcquiredAt  int64         `json:"acquiredAt"` // ms
	Quantity    domain.Number `json:"quantity"`
	Proceeds    domain.Number `json:"proceeds"`
	Fee         domain.Number `json:"fee"`
	HoldingDays int64         `json:"holdingDays"`
	Term        string        `json:"term"`
}

// UnpricedLotUse is the part of one lot a disposal of unknown proceeds
// took: no proceeds, fee or gain to show.
type UnpricedLotUse struct {
	AcquiredAt  int64         `json:"acquiredAt"` // ms
	BuyOrderID  int64         `json:"buyOrderId"`
	Acquired    string        `json:"acquired"`
	Quantity    domain.Number `json:"quantity"`
	CostBasis   domain.Number `json:"costBasis"`
	HoldingDays int64         `json:"holdingDays"`
	Term        string        `json:"term"`
}

// UnknownCost is what disposals took from coins of unknown cost: quantity,
// proceeds and fee share (their gain is unknown).
type UnknownCost struct {
	Quantity domain.Number `json:"quantity"`
	Proceeds domain.Number `json:"proceeds"`
	Fees     domain.Number `json:"fees"`
}

// Unpriced is lots a disposal of unknown proceeds (a conversion the log
// has no rate for) took: their quantity and cost basis.
type Unpriced struct {
	Quantity  domain.Number `json:"quantity"`
	CostBasis domain.Number `json:"costBasis"`
}

// FeeView is a fill's fee as the reports show it.
type FeeView struct {
	Asset    string        `json:"asset"`
	Amount   domain.Number `json:"amount"`
	Valued   bool          `json:"valued"`
	Quote    domain.Number `json:"quote"` // 0 when not valued
	Rate     domain.Number `json:"rate,omitzero"`
	RateTime int64         `json:"rateTime,omitempty"`
}

func feeView(f Fee) FeeView {
	v := FeeView{Asset: f.Asset, Amount: domain.Number(f.Amount), Valued: f.Valued}
	if f.Valued {
		v.Quote, v.Rate, v.RateTime = domain.Number(f.Quote), domain.Number(f.Rate), f.RateTime
	}
	return v
}

// Disposal is one sell fill (or conversion leg) of the period and the lots
// it consumed.
type Disposal struct {
	Key        string        `json:"key"`
	Exchange   string        `json:"exchange"`
	Pair       string        `json:"pair"`
	Asset      string        `json:"asset"`
	Quote      string        `json:"quote"`
	Kind       string        `json:"kind"`     // "order", "external" or "conversion"
	External   bool          `json:"external"` // a trade on the account the service did not place
	OrderID    int64         `json:"orderId"`
	Position   uint64        `json:"position"`
	DisposedAt int64         `json:"disposedAt"` // ms
	Price      domain.Number `json:"price"`
	Quantity   domain.Number `json:"quantity"` // sold, matched and unmatched
	Fee        FeeView       `json:"fee"`      // the whole fill's
	Matched    domain.Number `json:"matched"`
	Proceeds   domain.Number `json:"proceeds"` // of the matched quantity
	MatchedFee domain.Number `json:"matchedFee"`
	CostBasis  domain.Number `json:"costBasis"`
	Gain       domain.Number `json:"gain"`
	Unmatched  Unmatched     `json:"unmatched"`
	Lots       []LotUse      `json:"lots"`
	// GainKnown is false when part of the disposal's gain is unknown: it
	// took coins of unknown cost (UnknownCost, UnknownLots) or its proceeds
	// are unknown (Unpriced, UnpricedLots). Gain is then the known lots'.
	GainKnown    bool             `json:"gainKnown"`
	UnknownCost  UnknownCost      `json:"unknownCost"`
	UnknownLots  []UnknownLotUse  `json:"unknownCostLots"`
	Unpriced     *Unpriced        `json:"unpriced,omitempty"`
	UnpricedLots []UnpricedLotUse `json:"unpricedLots,omitempty"`
	InCurrency   *Money           `json:"inCurrency,omitempty"` // Σ of the lots, when every one converted
	Currency     string           `json:"currency,omitempty"`
	feeQuote     domain.Decimal   // the fee's valuation (0 when not valued)
	pool         string           // the key of the pool of lots it took from
}

// Gains are sums of lot uses in one currency.
type Gains struct {
	Quantity      domain.Number `json:"quantity"`
	Proceeds      domain.Number `json:"proceeds"`
	Fees          domain.Number `json:"fees"`
	CostBasis     domain.Number `json:"costBasis"`
	Gain          domain.Number `json:"gain"`
	ShortTermGain domain.Number `json:"shortTermGain"`
	LongTermGain  domain.Number `json:"longTermGain"`
	Lots          int64         `json:"lots"`
}

// gains is Gains while it is summed.
type gains struct {
	qty, proceeds, fees, cost, gain, short, long domain.Decimal
	lots                                         int64
}

func (g *gains) add(qty, proceeds, fee, cost, gain domain.Decimal, long bool) {
	g.qty, g.proceeds, g.fees, g.cost, g.gain = g.qty.Add(qty), g.proceeds.Add(proceeds), g.fees.Add(fee), g.cost.Add(cost), g.gain.Add(gain)
	if long {
		g.long = g.long.Add(gain)
	} else {
		g.short = g.short.Add(gain)
	}
	g.lots++
}

func (g *gains) view() Gains {
	return Gains{Quantity: domain.Number(g.qty), Proceeds: domain.Number(g.proceeds), Fees: domain.Number(g.fees),
		CostBasis: domain.Number(g.cost), Gain: domain.Number(g.gain), ShortTermGain: domain.Number(g.short),
		LongTermGain: domain.Number(g.long), Lots: g.lots}
}

// AssetTotals are the period's disposals of one asset against one quote
// currency, in that quote.
type AssetTotals struct {
	Asset string `json:"asset"`
	Quote string `json:"quote"`
	Gains
	Disposals       int64       `json:"disposals"`
	Unmatched       Unmatched   `json:"unmatched"`
	UnknownCost     UnknownCost `json:"unknownCost"` // sold from coins of unknown cost: no gain counted
	Unpriced        Unpriced    `json:"unpriced"`    // lots disposed of for unknown proceeds
	UnconvertedFees []FeeAmount `json:"unconvertedFees"`
}

// AssetGains are one asset's gains in the reporting currency.
type AssetGains struct {
	Asset string `json:"asset"`
	Gains
}

// UnconvertedGains are the lot uses of one asset and quote that a missing
// rate kept out of the reporting currency, in their quote.
type UnconvertedGains struct {
	Asset string `json:"asset"`
	Quote string `json:"quote"`
	Gains
}

// CurrencyTotals are the period's gains in the reporting currency: in all,
// per asset, and what could not be converted.
type CurrencyTotals struct {
	Currency    string             `json:"currency"`
	Total       Gains              `json:"total"`
	Assets      []AssetGains       `json:"assets"`
	Unconverted []UnconvertedGains `json:"unconverted"`
}

// Realized is the realized-gains report of a period.
type Realized struct {
	Method            string          `json:"method"`
	Scope             string          `json:"scope"`
	From              int64           `json:"from"`
	To                int64           `json:"to"` // 0: no end
	Timezone          string          `json:"timezone"`
	HoldingPeriodDays int             `json:"holdingPeriodDays"`
	Disposals         int             `json:"disposals"` // in the period, every page
	Totals            []AssetTotals   `json:"totals"`
	InCurrency        *CurrencyTotals `json:"inCurrency,omitempty"`
	Page              int             `json:"page"`
	PageSize          int             `json:"pageSize"`
	Rows              []Disposal      `json:"rows"`
}

// assetKey names an asset against a quote.
type assetKey struct{ asset, quote string }

// realizer folds disposals into a report's totals.
type realizer struct {
	q      *Query
	src    Source
	w      *walk
	totals map[assetKey]*assetAcc
	inCur  map[string]*gains // per asset, in q.Currency
	curAll gains
	uncon  map[assetKey]*gains
	n      int
	d      Disposal // the disposal being built (its Lots reused)
	loc    *time.Location
	hold   int64 // the holding period (days): a lot held longer is long term
}

type assetAcc struct {
	gains
	disposals                  int64
	unmQty, unmProceed         domain.Decimal
	unkQty, unkProceed, unkFee domain.Decimal
	unpricedQty, unpricedCost  domain.Decimal
	fees                       feeBag
}

// newRealizer returns a realizer of q over src as of src's snapshot now.
func newRealizer(src Source, q *Query) *realizer {
	return &realizer{q: q, src: src, w: newWalk(src, q, true), totals: map[assetKey]*assetAcc{},
		inCur: map[string]*gains{}, uncon: map[assetKey]*gains{}}
}

// run walks the period and calls emit with every disposal of the
// query's pairs, in (time, position) order; the disposal and its Lots are
// reused after emit returns. onFill, when set, is called first with every
// fill and move of the period in a pool of the query's pairs (buys and
// moves too) and its figures.
func (z *realizer) run(onFill func(p *pairWalk, f *Fill, s *step), emit func(d *Disposal) error) error {
	q := z.q
	z.loc, z.hold = q.loc(), int64(q.holdingDays())
	return z.w.run(func(p *pairWalk, f *Fill, s *step) error {
		if !q.inPeriod(f.Time) || !p.pool.selected {
			return nil
		}
		if onFill != nil {
			onFill(p, f, s)
		}
		if !p.selected || !f.Sell || (f.Kind != KindOrder && f.Kind != KindExternal && f.Kind != KindConvertOut) {
			return nil
		}
		z.dispose(p, f, s)
		z.n++
		return emit(&z.d)
	})
}

// sale is a disposal's fill as the report values it: a conversion's
// disposal leg brought its Value (the value of what the conversion
// brought, unknown when not Priced), a trade its price × quantity.
type sale struct {
	f      *Fill
	conv   bool // a conversion's disposal leg
	priced bool // its proceeds are known
}

func saleOf(f *Fill) sale {
	conv := f.Kind == KindConvertOut
	return sale{f: f, conv: conv, priced: !conv || f.Priced}
}

// value returns the proceeds of part of the quantity sold (the share of
// Value for a conversion, whether priced or not: callers zero it then).
func (s sale) value(part domain.Decimal) domain.Decimal {
	if s.conv {
		return domain.MulDiv(s.f.Value, part, s.f.Qty)
	}
	return s.f.Price.Mul(part)
}

// price returns the disposal's unit price: a priced conversion's Value ÷
// quantity, else the fill's price.
func (s sale) price() domain.Decimal {
	if s.conv && s.f.Priced && s.f.Qty.IsPos() {
		return s.f.Value.Div(s.f.Qty)
	}
	return s.f.Price
}

// dispose sets z.d to the disposal that sell fill f of pair p made, as
// step s folded it: its figures (begin), the lots it took for unknown
// proceeds (unpriced) or for known ones (lots), the coins of unknown cost
// it took (unknownCost); and adds it to its asset's totals.
func (z *realizer) dispose(p *pairWalk, f *Fill, s *step) {
	sa, tr := saleOf(f), s.tr
	proceeds, matchedFee := z.begin(p, sa, s)
	acc := entry(z.totals, assetKey{p.Base, p.Quote})
	acc.disposals++
	acc.unmQty, acc.unmProceed = acc.unmQty.Add(tr.Unheld), acc.unmProceed.Add(domain.Decimal(z.d.Unmatched.Proceeds))
	if !f.Fee.Valued {
		acc.fees.add(f.Fee.Asset, f.Fee.Amount)
	}
	used := tr.Used
	if !sa.priced { // the lots went for unknown proceeds: listed, no gain
		z.unpriced(acc, f, tr)
		used = nil
	}
	if tr.UnknownQty.IsPos() {
		z.unknownCost(acc, sa, tr)
	}
	z.lots(p, acc, sa, used, proceeds, matchedFee, tr.Out)
}

// begin sets z.d to sale sa's disposal without its lot uses (Lots,
// UnknownLots and UnpricedLots emptied, their memory kept) and returns its
// proceeds (of the matched quantity; 0 when unknown) and its matched fee
// (the fee's valuation × matched ÷ sold).
func (z *realizer) begin(p *pairWalk, sa sale, s *step) (proceeds, matchedFee domain.Decimal) {
	f, d, q := sa.f, &z.d, z.q
	r, tr := s.r, s.tr
	unm := tr.Unheld
	*d = Disposal{Key: p.Key, Exchange: p.Exchange, Pair: p.Pair.Pair, Asset: p.Base, Quote: p.Quote, Kind: f.Kind.String(),
		External: f.Kind == KindExternal, OrderID: f.OrderID, Position: f.Position, DisposedAt: f.Time, Price: domain.Number(sa.price()),
		Quantity: domain.Number(f.Qty), Fee: feeView(f.Fee), Matched: domain.Number(tr.Out), CostBasis: domain.Number(tr.OutCost),
		Gain: domain.Number(r.Pnl), Lots: d.Lots[:0], UnknownLots: d.UnknownLots[:0], UnpricedLots: d.UnpricedLots[:0],
		Currency: q.Currency, GainKnown: tr.UnknownQty.IsZero() && sa.priced, pool: p.pool.key}
	if sa.priced {
		d.Unmatched = Unmatched{Quantity: domain.Number(unm), Proceeds: domain.Number(sa.value(unm))}
	} else {
		d.Unmatched = Unmatched{Quantity: domain.Number(unm)}
	}
	if f.Fee.Valued {
		d.feeQuote = f.Fee.Quote
	}
	proceeds = domain.Zero
	if sa.priced {
		proceeds = sa.value(tr.Out)
	}
	matchedFee = domain.Zero
	if tr.Out.IsPos() {
		matchedFee = domain.MulDiv(d.feeQuote, tr.Out, f.Qty)
	}
	d.Proceeds, d.MatchedFee = domain.Number(proceeds), domain.Number(matchedFee)
	return proceeds, matchedFee
}

// unpriced lists in z.d the lots a sale of unknown proceeds (fill f) took,
// tr.Used: UnpricedLots, and their sum in Unpriced, with no matched
// quantity and no gain; and adds them to acc.
func (z *realizer) unpriced(acc *assetAcc, f *Fill, tr *fold.Trace) {
	d := &z.d
	d.Matched, d.Gain = domain.Number(domain.Zero), domain.Number(domain.Zero)
	d.Unpriced = &Unpriced{Quantity: domain.Number(tr.Out), CostBasis: domain.Number(tr.OutCost)}
	acc.unpricedQty, acc.unpricedCost = acc.unpricedQty.Add(tr.Out), acc.unpricedCost.Add(tr.OutCost)
	for _, u := range tr.Used {
		lu := lotUse(u, domain.Zero, domain.Zero, domain.Zero, z.daysHeld(f.Time, u.Time), z.hold)
		d.UnpricedLots = append(d.UnpricedLots, UnpricedLotUse{AcquiredAt: lu.AcquiredAt, BuyOrderID: lu.BuyOrderID,
			Acquired: lu.Acquired, Quantity: lu.Quantity, CostBasis: lu.CostBasis, HoldingDays: lu.HoldingDays, Term: lu.Term})
	}
}

// unknownCost lists in z.d what sale sa took from coins of unknown cost
// (tr.Unknown): their quantity, their share of the proceeds (0 when
// unknown) and of the valued fee, in UnknownCost and split over the coins
// by quantity in UnknownLots, the last taking the rounding; and adds them
// to acc.
func (z *realizer) unknownCost(acc *assetAcc, sa sale, tr *fold.Trace) {
	f, d := sa.f, &z.d
	up, uf := sa.value(tr.UnknownQty), domain.MulDiv(d.feeQuote, tr.UnknownQty, f.Qty)
	if !sa.priced {
		up = domain.Zero
	}
	d.UnknownCost = UnknownCost{Quantity: domain.Number(tr.UnknownQty), Proceeds: domain.Number(up), Fees: domain.Number(uf)}
	acc.unkQty, acc.unkProceed, acc.unkFee = acc.unkQty.Add(tr.UnknownQty), acc.unkProceed.Add(up), acc.unkFee.Add(uf)
	restP, restF := up, uf
	for i, u := range tr.Unknown {
		lp, lf := restP, restF
		if i < len(tr.Unknown)-1 {
			lp, lf = domain.MulDiv(up, u.Qty, tr.UnknownQty), domain.MulDiv(uf, u.Qty, tr.UnknownQty)
			restP, restF = restP.Sub(lp), restF.Sub(lf)
		}
		days := z.daysHeld(f.Time, u.Time)
		d.UnknownLots = append(d.UnknownLots, UnknownLotUse{AcquiredAt: u.Time, Quantity: domain.Number(u.Qty), Proceeds: domain.Number(lp),
			Fee: domain.Number(lf), HoldingDays: days, Term: term(days, z.hold)})
	}
}

// lots lists in z.d the lots sale sa took for known proceeds (used, of
// quantity matched): the proceeds and matched fee split over them (each
// but the last its own quantity's proceeds and share of the fee, the last
// the rest), each one's gain its proceeds less its fee and cost; adds
// them to acc and, with a reporting currency, each lot use converted to
// the currency totals (one a rate is missing for to the unconverted),
// setting z.d.InCurrency to their sum when every one converted.
func (z *realizer) lots(p *pairWalk, acc *assetAcc, sa sale, used []domain.Lot, proceeds, matchedFee, matched domain.Decimal) {
	f, d, q := sa.f, &z.d, z.q
	var sumR Money
	allR := q.Currency != ""
	restP, restF := proceeds, matchedFee
	for i, u := range used {
		lp, lf := restP, restF
		if i < len(used)-1 {
			lp, lf = sa.value(u.Qty), domain.MulDiv(matchedFee, u.Qty, matched)
			restP, restF = restP.Sub(lp), restF.Sub(lf)
		}
		gain := lp.Sub(lf).Sub(u.Cost)
		days := z.daysHeld(f.Time, u.Time)
		long := days > z.hold
		lu := lotUse(u, lp, lf, gain, days, z.hold)
		acc.add(u.Qty, lp, lf, u.Cost, gain, long)
		if q.Currency != "" {
			lu.InCurrency = z.convert(p, f.Time, u.Time, lp, lf, u.Cost)
			if m := lu.InCurrency; m != nil {
				z.curAdd(p.Base, u.Qty, m, long)
				sumR = Money{Proceeds: addN(sumR.Proceeds, m.Proceeds), Fee: addN(sumR.Fee, m.Fee),
					CostBasis: addN(sumR.CostBasis, m.CostBasis), Gain: addN(sumR.Gain, m.Gain)}
			} else {
				allR = false
				z.unconAdd(assetKey{p.Base, p.Quote}, u.Qty, lp, lf, u.Cost, gain, long)
			}
		}
		d.Lots = append(d.Lots, lu)
	}
	if allR && len(used) > 0 {
		d.InCurrency = &sumR
	}
}

// daysHeld returns the calendar days, in the query's zone, from the day
// of acquired to the day of disposed (times in ms).
func (z *realizer) daysHeld(disposed, acquired int64) int64 {
	return domain.DayNumber(disposed, z.loc) - domain.DayNumber(acquired, z.loc)
}

// term returns "long" for a holding of more than hold days, else "short".
func term(days, hold int64) string {
	if days > hold {
		return "long"
	}
	return "short"
}

// lotUse returns the use of lot part u by a disposal: its figures, its
// holding days and term, and how it was acquired (its Ref: an order's id,
// or fold.RefExternal, RefConversion, RefDeposit).
func lotUse(u domain.Lot, proceeds, fee, gain domain.Decimal, days, hold int64) LotUse {
	lu := LotUse{AcquiredAt: u.Time, BuyOrderID: u.Ref, Acquired: "order", Quantity: domain.Number(u.Qty), Proceeds: domain.Number(proceeds),
		Fee: domain.Number(fee), CostBasis: domain.Number(u.Cost), Gain: domain.Number(gain), HoldingDays: days, Term: term(days, hold)}
	switch u.Ref {
	case fold.RefExternal:
		lu.BuyOrderID, lu.Acquired = 0, "external"
	case fold.RefConversion:
		lu.BuyOrderID, lu.Acquired = 0, "conversion"
	case fold.RefDeposit:
		lu.BuyOrderID, lu.Acquired = 0, "deposit"
	}
	return lu
}

func addN(a, b domain.Number) domain.Number {
	return domain.Number(domain.Decimal(a).Add(domain.Decimal(b)))
}

// convert returns a lot use in the reporting currency: proceeds and fee at
// the disposal's time, the cost basis at the acquisition's; nil when a
// rate is missing.
func (z *realizer) convert(p *pairWalk, disposed, acquired int64, proceeds, fee, cost domain.Decimal) *Money {
	to := z.q.Currency
	cp, ok1 := z.src.BookConvert(z.w.snap, proceeds, p.Quote, to, disposed)
	cf, ok2 := z.src.BookConvert(z.w.snap, fee, p.Quote, to, disposed)
	cc, ok3 := z.src.BookConvert(z.w.snap, cost, p.Quote, to, acquired)
	if !ok1 || !ok2 || !ok3 {
		return nil
	}
	return &Money{Proceeds: domain.Number(cp.Amount), Fee: domain.Number(cf.Amount), CostBasis: domain.Number(cc.Amount),
		Gain: domain.Number(cp.Amount.Sub(cf.Amount).Sub(cc.Amount))}
}

// unconAdd adds a lot use a missing rate kept out of the reporting
// currency to the unconverted gains of k, in its quote.
func (z *realizer) unconAdd(k assetKey, qty, proceeds, fee, cost, gain domain.Decimal, long bool) {
	entry(z.uncon, k).add(qty, proceeds, fee, cost, gain, long)
}

// curAdd adds lot use m of qty of asset, in the reporting currency, to
// the asset's gains and to the total.
func (z *realizer) curAdd(asset string, qty domain.Decimal, m *Money, long bool) {
	g := entry(z.inCur, asset)
	p, f, c, x := domain.Decimal(m.Proceeds), domain.Decimal(m.Fee), domain.Decimal(m.CostBasis), domain.Decimal(m.Gain)
	g.add(qty, p, f, c, x, long)
	z.curAll.add(qty, p, f, c, x, long)
}

// report returns the totals as a Realized report (without rows).
func (z *realizer) report() *Realized {
	q := z.q
	out := &Realized{Method: q.Method.String(), Scope: q.Scope.String(), From: q.From, To: q.To, Timezone: q.loc().String(),
		HoldingPeriodDays: q.holdingDays(), Disposals: z.n, Totals: []AssetTotals{}, Rows: []Disposal{}}
	for k, a := range z.totals {
		out.Totals = append(out.Totals, AssetTotals{Asset: k.asset, Quote: k.quote, Gains: a.view(), Disposals: a.disposals,
			Unmatched:       Unmatched{Quantity: domain.Number(a.unmQty), Proceeds: domain.Number(a.unmProceed)},
			UnknownCost:     UnknownCost{Quantity: domain.Number(a.unkQty), Proceeds: domain.Number(a.unkProceed), Fees: domain.Number(a.unkFee)},
			Unpriced:        Unpriced{Quantity: domain.Number(a.unpricedQty), CostBasis: domain.Number(a.unpricedCost)},
			UnconvertedFees: a.fees.list()})
	}
	sortBy(out.Totals, func(t AssetTotals) string { return t.Asset + "\x00" + t.Quote })
	if q.Currency != "" {
		c := &CurrencyTotals{Currency: q.Currency, Total: z.curAll.view(), Assets: []AssetGains{}, Unconverted: []UnconvertedGains{}}
		for a, g := range z.inCur {
			c.Assets = append(c.Assets, AssetGains{Asset: a, Gains: g.view()})
		}
		sortBy(c.Assets, func(g AssetGains) string { return g.Asset })
		for k, g := range z.uncon {
			c.Unconverted = append(c.Unconverted, UnconvertedGains{Asset: k.asset, Quote: k.quote, Gains: g.view()})
		}
		sortBy(c.Unconverted, func(g UnconvertedGains) string { return g.Asset + "\x00" + g.Quote })
		out.InCurrency = c
	}
	return out
}

// RealizedReport returns the realized gains of q's period under q's
// method: totals per asset and quote (and in q.Currency when set), and
// page (from 0) of pageSize disposals in (time, position) order (pageSize
// 0: none, the totals only).
func RealizedReport(src Source, q Query, page, pageSize int) (*Realized, error) {
	lo, hi := page*pageSize, (page+1)*pageSize
	var rows []Disposal
	i := 0
	z := newRealizer(src, &q)
	err := z.run(nil, func(d *Disposal) error {
		if i >= lo && i < hi {
			c := *d
			c.Lots = append([]LotUse(nil), d.Lots...)
			c.UnknownLots = append([]UnknownLotUse{}, d.UnknownLots...)
			if len(d.UnpricedLots) > 0 {
				c.UnpricedLots = append([]UnpricedLotUse(nil), d.UnpricedLots...)
			} else {
				c.UnpricedLots = nil
			}
			rows = append(rows, c)
		}
		i++
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := z.report()
	out.Page, out.PageSize = page, pageSize
	if rows != nil {
		out.Rows = rows
	}
	return out, nil
}
