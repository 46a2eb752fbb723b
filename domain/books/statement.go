package books

import (
	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/fold"
)

// The period statement: per pool of lots (the cost basis scope's: a pair
// key, or a pair across accounts), the lots held at the start of the
// period (opening), what the period's fills added (acquired) and took
// (disposed), what its deposits brought and its withdrawals took, and the
// lots held at its end (closing), in the pair's quote:
//
//	opening.quantity  + acquired.quantity − disposed.quantity − disposed.unpriced.quantity
//	                  + deposited.quantity − withdrawn.quantity = closing.quantity
//	opening.costBasis + acquired.cost − disposed.costBasis − disposed.unpriced.costBasis
//	                  + deposited.cost − withdrawn.costBasis = closing.costBasis
//	opening.unknownCostQuantity + acquired.unknownCostQuantity + deposited.unknownCostQuantity
//	                  − disposed.unknownCostQuantity − withdrawn.unknownCostQuantity = closing.unknownCostQuantity
//	openingPosition   + acquired.quantity + acquired.unknownCostQuantity + deposited.quantity
//	                  + deposited.unknownCostQuantity − disposed.quantity − disposed.unpriced.quantity
//	                  − disposed.unknownCostQuantity − unmatched.quantity − withdrawn.quantity
//	                  − withdrawn.unknownCostQuantity − withdrawn.unheld = closingPosition
//
// exactly, under every method and scope (statement_test.go proves it over
// random logs with trades, external trades, deposits, withdrawals,
// transfers and conversions). Quantities and cost bases are those of the
// lots (what the books know the cost of); coins of unknown cost (a deposit
// no withdrawal of the service's explains and the log has no price for, a
// conversion without a rate) are counted apart, never at a cost of 0; a position counts every coin,
// so it falls below what the books hold when coins the log never saw
// arrive were sold (unmatched) or sent (withdrawn.unheld). A deposit
// matched to a withdrawal from another of the service's accounts brings
// that withdrawal's lots (deposited.cost: their cost, the network fee's
// included); a withdrawal's network fee is in the quantity and cost it
// took (withdrawn.networkFees says how much of the quantity): a cost, not
// a disposal. acquired.cost includes the buys' valued fees; fees is every
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

// Holding is lots held: their quantity and cost, and the coins held of
// unknown cost.
type Holding struct {
	Quantity            domain.Number `json:"quantity"`
	CostBasis           domain.Number `json:"costBasis"`
	UnknownCostQuantity domain.Number `json:"unknownCostQuantity"`
}

// Acquired is the period's buys (external trades and conversions'
// acquisitions among them): quantity and cost (fees included) of the lots
// they added, and those fees; a conversion without a rate adds coins of
// unknown cost.
type Acquired struct {
	Quantity            domain.Number `json:"quantity"`
	Cost                domain.Number `json:"cost"`
	Fees                domain.Number `json:"fees"`
	Fills               int64         `json:"fills"`
	External            int64         `json:"external"`    // of them, trades the service did not place
	Conversions         int64         `json:"conversions"` // and conversions' acquisitions
	UnknownCostQuantity domain.Number `json:"unknownCostQuantity"`
}

// Disposed is the period's sells (external trades and conversions'
// disposals among them): the quantity taken from lots, its proceeds,
// matched fees, the cost basis of the lots taken and the gain; the
// quantity taken from coins of unknown cost and its proceeds (no gain);
// the lots a conversion without a rate took (Unpriced: no proceeds, no
// gain).
type Disposed struct {
	Quantity            domain.Number `json:"quantity"`
	Proceeds            domain.Number `json:"proceeds"`
	Fees                domain.Number `json:"fees"`
	CostBasis           domain.Number `json:"costBasis"`
	Gain                domain.Number `json:"gain"`
	Fills               int64         `json:"fills"`
	External            int64         `json:"external"`
	Conversions         int64         `json:"conversions"`
	UnknownCostQuantity domain.Number `json:"unknownCostQuantity"`
	UnknownCostProceeds domain.Number `json:"unknownCostProceeds"`
	Unpriced            Unpriced      `json:"unpriced"`
}

// Deposited is the period's deposits: the lots they brought (those of a
// withdrawal from another of the service's accounts, Transfers of them;
// from the outside, lots at the log's price of their time, AtMarket of
// them) and their cost, and the coins of unknown cost.
type Deposited struct {
	Quantity            domain.Number `json:"quantity"`
	Cost                domain.Number `json:"cost"`
	UnknownCostQuantity domain.Number `json:"unknownCostQuantity"`
	Count               int64         `json:"count"`
	Transfers           int64         `json:"transfers"`
	AtMarket            int64         `json:"atMarket"`
}

// Withdrawn is the period's withdrawals: the lots they took (the quantity
// sent and the network fee) and their cost, the coins of unknown cost
// they took, and what they took beyond every coin held (Unheld); of the
// quantity, NetworkFees were the fees; Transfers of them were matched to
// a deposit on another of the service's accounts.
type Withdrawn struct {
	Quantity            domain.Number `json:"quantity"`
	CostBasis           domain.Number `json:"costBasis"`
	UnknownCostQuantity domain.Number `json:"unknownCostQuantity"`
	Unheld              domain.Number `json:"unheld"`
	NetworkFees         domain.Number `json:"networkFees"`
	Count               int64         `json:"count"`
	Transfers           int64         `json:"transfers"`
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
	Deposited       Deposited      `json:"deposited"`
	Withdrawn       Withdrawn      `json:"withdrawn"`
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
	Scope      string             `json:"scope"`
	From       int64              `json:"from"`
	To         int64              `json:"to"` // 0: no end
	Timezone   string             `json:"timezone"`
	Lines      []Line             `json:"lines"`
	InCurrency *StatementCurrency `json:"inCurrency,omitempty"`
}

// lineAcc is a line while it is summed.
type lineAcc struct {
	acq                                   Acquired
	dis                                   Disposed
	dep                                   Deposited
	wd                                    Withdrawn
	acqQty, acqCost, acqFees, acqUnk      domain.Decimal
	disQty, disProceeds, disFees, disCost domain.Decimal
	disUnk, disUnkProceeds                domain.Decimal
	unpricedQty, unpricedCost             domain.Decimal
	depQty, depCost, depUnk               domain.Decimal
	wdQty, wdCost, wdUnk, wdUnheld, wdFee domain.Decimal
	gain, unmQty, unmProceeds, fees       domain.Decimal
	unconv                                feeBag
	gainR, feesR                          domain.Decimal
	gainMissing, feesMissing              bool
}

// StatementReport returns the statement of q's period under q's method:
// one line per pair key with a fill before the period's end, sorted by
// key.
func StatementReport(src Source, q Query) (*Statement, error) {
	z := newRealizer(src, &q)
	sa := &statementAcc{src: src, q: &q, snap: z.w.snap, lines: map[string]*lineAcc{}}
	if err := z.run(sa.onFill, sa.onDisposal); err != nil {
		return nil, err
	}
	out := &Statement{Method: q.Method.String(), Scope: q.Scope.String(), From: q.From, To: q.To, Timezone: q.loc().String(), Lines: []Line{}}
	var cur *StatementCurrency
	assets := map[string]*AssetStatement{}
	if q.Currency != "" {
		cur = &StatementCurrency{Currency: q.Currency, Assets: []AssetStatement{}, Unconverted: []string{}}
	}
	for _, p := range z.w.pools {
		if p.fills == 0 || !p.selected {
			continue // no fill before the end in the snapshot, or none of the query's pairs
		}
		a := sa.line(p.key)
		l := a.view(p)
		if cur != nil {
			l.InCurrency = sa.inCurrency(a, p, cur, assets)
		}
		out.Lines = append(out.Lines, l)
	}
	if cur != nil {
		cur.sum(assets)
		out.InCurrency = cur
	}
	return out, nil
}

// statementAcc is a statement while its lines are summed, one per pool
// key, as the realizer walks the period.
type statementAcc struct {
	src   Source
	q     *Query
	snap  Snapshot
	lines map[string]*lineAcc
}

// line returns the line of pool key k, made empty the first time.
func (sa *statementAcc) line(k string) *lineAcc {
	return entry(sa.lines, k)
}

// onFill adds fill or move f of pair p, as step s folded it under the
// query's method, to the line of p's pool.
func (sa *statementAcc) onFill(p *pairWalk, f *Fill, s *step) {
	a := sa.line(p.pool.key)
	switch f.Kind {
	case KindDeposit:
		a.deposit(f, s.tr)
	case KindWithdrawal:
		a.withdrawal(f, s.tr)
	case KindConvertIn:
		a.convertIn(s.tr)
	case KindConvertOut:
		a.convertOut(f, s)
	default:
		fee := sa.fee(a, p, f)
		if f.Sell {
			a.sell(f, fee, s)
		} else {
			a.buy(f, fee, s.tr)
		}
	}
}

// onDisposal adds disposal d's gain in the reporting currency, when there
// is one and d took lots, to its line (a gain that did not convert marks
// the line's realized gain unconverted).
func (sa *statementAcc) onDisposal(d *Disposal) error {
	if sa.q.Currency != "" && len(d.Lots) > 0 {
		a := sa.line(d.pool)
		if d.InCurrency != nil {
			a.gainR = a.gainR.Add(domain.Decimal(d.InCurrency.Gain))
		} else {
			a.gainMissing = true
		}
	}
	return nil
}

// fee returns trade f's valued fee (0 when no rate valued it: then it is
// listed as charged in a's unconverted fees) and adds it to a's fees, in
// quote and, with a reporting currency, converted at f's time (a missing
// rate marks a's fees unconverted).
func (sa *statementAcc) fee(a *lineAcc, p *pairWalk, f *Fill) domain.Decimal {
	q := sa.q
	fee := domain.Zero
	if f.Fee.Valued {
		fee = f.Fee.Quote
	} else {
		a.unconv.add(f.Fee.Asset, f.Fee.Amount)
	}
	a.fees = a.fees.Add(fee)
	if q.Currency != "" && !fee.IsZero() {
		if c, ok := sa.src.BookConvert(sa.snap, fee, p.Quote, q.Currency, f.Time); ok {
			a.feesR = a.feesR.Add(c.Amount)
		} else {
			a.feesMissing = true
		}
	}
	return fee
}

// deposit adds deposit f, which brought tr.In of lots (a transfer's, or
// at the log's price), tr.InUnknown of coins of unknown cost, to a.
func (a *lineAcc) deposit(f *Fill, tr *fold.Trace) {
	a.dep.Count++
	switch {
	case f.Peer != "" && tr.In.IsPos():
		a.dep.Transfers++
	case f.Peer == "" && f.Priced:
		a.dep.AtMarket++
	}
	a.depQty, a.depCost, a.depUnk = a.depQty.Add(tr.In), a.depCost.Add(tr.InCost), a.depUnk.Add(tr.InUnknown)
}

// withdrawal adds withdrawal f, which took tr's lots and coins of unknown
// cost and tr.Unheld beyond them, its network fee among them, to a.
func (a *lineAcc) withdrawal(f *Fill, tr *fold.Trace) {
	a.wd.Count++
	if f.Peer != "" {
		a.wd.Transfers++
	}
	a.wdQty, a.wdCost, a.wdUnk = a.wdQty.Add(tr.Out), a.wdCost.Add(tr.OutCost), a.wdUnk.Add(tr.UnknownQty)
	a.wdUnheld, a.wdFee = a.wdUnheld.Add(tr.Unheld), a.wdFee.Add(f.NetworkFee)
}

// convertIn adds a conversion's acquisition leg, which added tr's lots
// (or coins of unknown cost, without a rate), to a.
func (a *lineAcc) convertIn(tr *fold.Trace) {
	a.acq.Fills++
	a.acq.Conversions++
	a.acqQty, a.acqCost, a.acqUnk = a.acqQty.Add(tr.In), a.acqCost.Add(tr.InCost), a.acqUnk.Add(tr.InUnknown)
}

// convertOut adds conversion leg f, a disposal as step s folded it, to a:
// priced, its lots and coins of unknown cost taken at their share of its
// Value, its gain, and what it took beyond every coin held (unmatched);
// without a rate, the lots it took as unpriced and the rest unmatched,
// with no proceeds.
func (a *lineAcc) convertOut(f *Fill, s *step) {
	r, tr := s.r, s.tr
	a.dis.Fills++
	a.dis.Conversions++
	a.disUnk = a.disUnk.Add(tr.UnknownQty)
	unm := tr.Unheld
	if !f.Priced {
		a.unpricedQty, a.unpricedCost = a.unpricedQty.Add(tr.Out), a.unpricedCost.Add(tr.OutCost)
		a.unmQty = a.unmQty.Add(unm)
		return
	}
	a.disUnkProceeds = a.disUnkProceeds.Add(domain.MulDiv(f.Value, tr.UnknownQty, f.Qty))
	a.disQty, a.disProceeds = a.disQty.Add(tr.Out), a.disProceeds.Add(domain.MulDiv(f.Value, tr.Out, f.Qty))
	a.disCost, a.gain = a.disCost.Add(tr.OutCost), a.gain.Add(r.Pnl)
	a.unmQty, a.unmProceeds = a.unmQty.Add(unm), a.unmProceeds.Add(domain.MulDiv(f.Value, unm, f.Qty))
}

// buy adds buy f (an order's or an external trade's), which added tr's
// lots, its valued fee fee among their cost, to a.
func (a *lineAcc) buy(f *Fill, fee domain.Decimal, tr *fold.Trace) {
	a.acq.Fills++
	if f.Kind == KindExternal {
		a.acq.External++
	}
	a.acqQty, a.acqCost, a.acqFees = a.acqQty.Add(tr.In), a.acqCost.Add(tr.InCost), a.acqFees.Add(fee)
}

// sell adds sell f (an order's or an external trade's), as step s folded
// it, to a: the lots and coins of unknown cost it took at its price, the
// share of its valued fee fee the lots' quantity bears, its gain, and
// what it took beyond every coin held (unmatched).
func (a *lineAcc) sell(f *Fill, fee domain.Decimal, s *step) {
	r, tr := s.r, s.tr
	a.dis.Fills++
	if f.Kind == KindExternal {
		a.dis.External++
	}
	matchedFee := domain.Zero
	if tr.Out.IsPos() {
		matchedFee = domain.MulDiv(fee, tr.Out, f.Qty)
	}
	unm := tr.Unheld
	a.disQty, a.disProceeds, a.disFees = a.disQty.Add(tr.Out), a.disProceeds.Add(f.Price.Mul(tr.Out)), a.disFees.Add(matchedFee)
	a.disCost, a.gain = a.disCost.Add(tr.OutCost), a.gain.Add(r.Pnl)
	a.disUnk, a.disUnkProceeds = a.disUnk.Add(tr.UnknownQty), a.disUnkProceeds.Add(f.Price.Mul(tr.UnknownQty))
	a.unmQty, a.unmProceeds = a.unmQty.Add(unm), a.unmProceeds.Add(f.Price.Mul(unm))
}

// view returns line a of pool p: its sums, p's opening, and its closing
// as the walk left it, with the closing price and unrealized gain when
// the walk read a fill of p (no reporting currency: inCurrency).
func (a *lineAcc) view(p *pool) Line {
	lots := p.fold.Lots()
	acq, dis, dep, wd := a.acq, a.dis, a.dep, a.wd
	acq.Quantity, acq.Cost, acq.Fees, acq.UnknownCostQuantity = domain.Number(a.acqQty), domain.Number(a.acqCost), domain.Number(a.acqFees), domain.Number(a.acqUnk)
	dis.Quantity, dis.Proceeds, dis.Fees = domain.Number(a.disQty), domain.Number(a.disProceeds), domain.Number(a.disFees)
	dis.CostBasis, dis.Gain = domain.Number(a.disCost), domain.Number(a.gain)
	dis.UnknownCostQuantity, dis.UnknownCostProceeds = domain.Number(a.disUnk), domain.Number(a.disUnkProceeds)
	dis.Unpriced = Unpriced{Quantity: domain.Number(a.unpricedQty), CostBasis: domain.Number(a.unpricedCost)}
	dep.Quantity, dep.Cost, dep.UnknownCostQuantity = domain.Number(a.depQty), domain.Number(a.depCost), domain.Number(a.depUnk)
	wd.Quantity, wd.CostBasis, wd.UnknownCostQuantity = domain.Number(a.wdQty), domain.Number(a.wdCost), domain.Number(a.wdUnk)
	wd.Unheld, wd.NetworkFees = domain.Number(a.wdUnheld), domain.Number(a.wdFee)
	l := Line{Key: p.key, Exchange: p.exchange, Pair: p.pair, Asset: p.base, Quote: p.quote,
		Opening:         Holding{Quantity: domain.Number(p.openQty), CostBasis: domain.Number(p.openCost), UnknownCostQuantity: domain.Number(p.openUnknown)},
		OpeningPosition: domain.Number(p.openPosn),
		Acquired:        acq,
		Disposed:        dis,
		Deposited:       dep,
		Withdrawn:       wd,
		Unmatched:       Unmatched{Quantity: domain.Number(a.unmQty), Proceeds: domain.Number(a.unmProceeds)},
		Fees:            domain.Number(a.fees),
		UnconvertedFees: a.unconv.list(),
		RealizedGain:    domain.Number(a.gain),
		Closing:         Holding{Quantity: domain.Number(lots.Qty()), CostBasis: domain.Number(lots.Cost()), UnknownCostQuantity: domain.Number(p.fold.Unknown())},
		ClosingPosition: domain.Number(p.fold.Position()),
	}
	// The walk stopped before the end: the last fill it read is the
	// closing price (none when only moves were read).
	if p.priced {
		_, unreal := p.closingValue()
		l.ClosingPrice, l.ClosingPriceAt, l.UnrealizedGain = num(p.price), p.priceT, num(unreal)
	}
	return l
}

// closingValue returns the lots pl holds valued at its last price, and
// that value less their cost: the unrealized gain (meaningful when the
// pool has a price).
func (pl *pool) closingValue() (value, unrealized domain.Decimal) {
	lots := pl.fold.Lots()
	value = lots.Qty().Mul(pl.price)
	return value, value.Sub(lots.Cost())
}

// inCurrency returns line a of pool p in cur's currency: the realized
// gain and fees as summed, the closing value and unrealized gain at the
// latest rate before the period's end (none without a closing price); a
// figure that did not convert is absent and puts p's key in
// cur.Unconverted. Those that did are added to p's asset in assets.
func (sa *statementAcc) inCurrency(a *lineAcc, p *pool, cur *StatementCurrency, assets map[string]*AssetStatement) *LineCurrency {
	end := endOf(sa.q)
	lc := &LineCurrency{}
	missing := a.gainMissing || a.feesMissing
	if !a.gainMissing {
		lc.RealizedGain = num(a.gainR)
	}
	if !a.feesMissing {
		lc.Fees = num(a.feesR)
	}
	value, unreal := p.closingValue()
	cv, ok1 := sa.src.BookConvert(sa.snap, value, p.quote, cur.Currency, end-1)
	cu, ok2 := sa.src.BookConvert(sa.snap, unreal, p.quote, cur.Currency, end-1)
	if ok1 && ok2 && p.priced {
		lc.ClosingValue, lc.UnrealizedGain = num(cv.Amount), num(cu.Amount)
	} else {
		missing = true
	}
	if missing {
		cur.Unconverted = append(cur.Unconverted, p.key)
	}
	s := entry(assets, p.base)
	s.Asset = p.base
	s.add(lc)
	return lc
}

// add adds lc's figures that converted to s.
func (s *AssetStatement) add(lc *LineCurrency) {
	for _, x := range []struct {
		dst *domain.Number
		v   *domain.Number
	}{{&s.RealizedGain, lc.RealizedGain}, {&s.Fees, lc.Fees}, {&s.ClosingValue, lc.ClosingValue}, {&s.UnrealizedGain, lc.UnrealizedGain}} {
		if x.v != nil {
			*x.dst = addN(*x.dst, *x.v)
		}
	}
}

// sum sets cur's assets to those of assets, sorted by asset, and its
// total to their sum.
func (cur *StatementCurrency) sum(assets map[string]*AssetStatement) {
	for _, s := range assets {
		cur.Assets = append(cur.Assets, *s)
		cur.Total.RealizedGain = addN(cur.Total.RealizedGain, s.RealizedGain)
		cur.Total.Fees = addN(cur.Total.Fees, s.Fees)
		cur.Total.ClosingValue = addN(cur.Total.ClosingValue, s.ClosingValue)
		cur.Total.UnrealizedGain = addN(cur.Total.UnrealizedGain, s.UnrealizedGain)
	}
	sortBy(cur.Assets, func(s AssetStatement) string { return s.Asset })
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
