package projections

import (
	"sort"
	"strconv"
	"sync"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/fold"
	"github.com/tradeledger/tradeledger/domain/jsonscan"
	"github.com/tradeledger/tradeledger/domain/pnlmath"
	"github.com/tradeledger/tradeledger/domain/streams"
)

// Ledger is the trading read model: order records per pair key, PNL
// aggregates (pnl.go), asset value history (assets.go) and chart marks
// (marks.go). It is one projection with one lock because all of them are
// folds of the same fills through the same lot matching (pnlmath.Lots): a
// fill is matched once and every view sees the same figures.
//
// Order records. There is one record per fill (OrderFilled), not one per
// order: a fill is the unit that changes balances, lots and pnl, and the
// derived fields below are "after this fill". Records of an order share its
// id; averagePrice tells the order's running average. Orders without fills
// have no record. Field definitions (all money in the pair's quote currency,
// which the spec's Gunbot-style names call "base"):
//
//	time           fill event time, ms
//	pair, type, id pair symbol, "buy"/"sell", order id
//	rate, amount   fill price and quantity
//	cost           rate × amount (gross value, as in state files)
//	fees           the fill's fee valued in quote (fold.ValueFee: as is in
//	               quote, × rate in the base, at the rate of the fill's time
//	               from the log in a third asset; 0 when unconverted)
//	feeAsset, feeAmount   the fee as the exchange charged it
//	feeQuote, feeRate, feeRateTime   its valuation: value in quote, 1
//	               feeAsset = feeRate quote, time of the (oldest) rate
//	               used; absent when unconverted
//	unconvertedFees  {asset: amount} of a fee in a third asset that had no
//	               rate within bot.FEE_RATE_MAX_AGE of the fill (present only
//	               then): not in fees, nor in any figure in quote
//	baseValue      what the fill cost or brought in quote, fees valued in
//	               (pnlmath.FeeValue.Net): cost + fees on buys (cost alone when
//	               the fee came out of the coins bought), cost − fees on sells
//	costProceed    −baseValue on buys, +baseValue on sells
//	averagePrice   Σcost ÷ Σamount over the order's fills up to this one (trade time)
//	pnlPrice       unit cost the fill is measured against: buys, the new
//	               lot's cost ÷ its quantity; sells, the consumed lots' cost ÷
//	               matched quantity (0 if nothing matched)
//	balance        the pair's base-asset position from logged fills after
//	               this fill: Σ quantities received by buys (amount less a
//	               fee charged in the base) − Σ sell amounts (negative when
//	               coins bought outside the log were sold)
//	baseBalance    the pair's quote cash flow after this fill: Σ costProceed
//	inventory_cost cost of the lots still held after this fill
//	ABP            inventory_cost ÷ quantity held in lots (0 when none)
//	pnl            realized pnl of the fill (sells; 0 on buys), pnlmath.Lots
//	unmatchedBaseValue  rate × quantity sold with no lot (sells; extra field)
//	toCancel       present (true) only while the order is still open
//	               (accepted, not fully filled, cancelled, rejected or
//	               expired): its remainder can still be cancelled
//	external       present (true) only on a trade on the account that the
//	               service did not place (domain.ExternalFill: by hand, by
//	               another bot): id 0, an acquisition or disposal like any
//	               other fill
//	key            "<exchange>/<pair>" (extra field)
//
// Ordering. A pair's records are kept sorted by (time, log position), so
// "newest first" is the reverse and stable under equal times. Every
// derived field follows that order, trade time (domain/fold): a fill whose
// time is older than the newest record (an imported history, a fill the
// exchange reported late) is inserted in place, and the pair is folded
// again from there before the next read (ledgerfold.go); its events are
// never rewritten.
type Ledger struct {
	// Method is the lot matching method (set before the first Apply).
	Method domain.PnlMethod
	// PageCacheBytes bounds the JSON of order records kept for the order
	// pages (orderjson.go); 0 keeps none. Set before the first read.
	PageCacheBytes int `snap:"-"`

	mu      sync.RWMutex            `snap:"-"`
	pairs   []*pairBook             // interned pair books, by index
	byKey   map[string]uint32       // pair key → index
	byName  map[pairName]uint32     // the same by exchange and pair: no key built per order
	orders  orderIndex              // order id → pair index | sideSell bit, for every order requested
	open    map[int64]orderState    // by value: no allocation per order
	quotes  map[string]*quoteSeries // per quote currency: every pair's slots summed
	strat   map[string]string       // pair key → strategy name (from config events)
	assets  assetBook
	conv    convBook                       // rates and PNL in other currencies (pnlconv.go)
	booksM  domain.PnlMethod               // bot.PNL_METHOD, the reports' default (books.go)
	booksS  domain.CostBasisScope          // bot.COST_BASIS_SCOPE, the reports' default (books.go)
	head    uint64                         // highest log position of an event applied (books.go)
	records int                            // number of order records, all pairs
	version uint64                         // counts applied changes; see Version
	intern  jsonscan.Interner              `snap:"-"` // used by Apply only (one goroutine, before the lock)
	pages   pageCache                      `snap:"-"`
	feeAsts map[string][]string            // exchange → third assets its fills' fees were charged in (fees.go)
	first   idIndex[uint32]                // order id → the second (unix, +1) of its first fill, or firstUnknown (ledgerfold.go)
	byCur   map[fold.CurrencyPair][]uint32 // pairs by currencies, every exchange: the rates of fills
	refolds uint64                         // pairs folded again so far (a measure, not state)
	frozen  uint64                         `snap:"-"` // freezes so far: series copied at an earlier one are shared with a frozen copy (ownSeries)
}

const sideSell = 1 << 31

// orderState is what the ledger keeps of an order while it is open: its
// amount and the quantity its fills (in log order) filled, which close it,
// and its figures in the fold (trade time).
type orderState struct {
	amount, filled decimal.Decimal
	fold           fold.Order
}

// pairBook is one pair key's state.
type pairBook struct {
	key, exchange, pair, quote, base string
	fold                             fold.Pair // lots, position, cash flow, last price, restart points
	recs                             recList   // ascending (time, pos)
	series                           series
	seriesAt                         uint64            `snap:"-"` // the freeze (Ledger.frozen) as of which series' slots are its own (ownSeries)
	prices                           []pricePoint      // assets.go
	pricesAt                         uint64            `snap:"-"` // as seriesAt, for prices
	gen                              uint64            // moves when cached JSON of its records may be void (orderjson.go)
	enc                              []*encodedBlock   `snap:"-"` // cached JSON by block, guarded by Ledger.pages.mu
	feeAssets                        []string          // fee assets other than quote and base, by fee code − 2
	feeOther                         map[uint64]string // the fee asset of records whose code is feeOverflow, by position
	fees                             []feeEntry        // valuations of fees in a third asset, ascending (time, pos): fees.go
}

// orderRecord is the compact stored form of a record (104 bytes).
//
// Its amounts are decimal.Compact (8 bytes, not a Decimal's 16: a record's
// size is most of the heap per order); a value too wide for one is kept in
// its recList's side table (recList.put and get convert). pnlPrice is not
// kept: it follows from the others (recordPnlPrice).
type orderRecord struct {
	time        int64
	posSide     uint64 // log position of the fill | fee code << feeShift | recSell for a sell
	id          int64
	rate        decimal.Compact
	amount      decimal.Compact
	fee         decimal.Compact // as charged, in the asset the fee code names
	avgPrice    decimal.Compact
	position    decimal.Compact
	cashFlow    decimal.Compact
	invCost     decimal.Compact
	abp         decimal.Compact
	pnl         decimal.Compact
	unmatchedQt decimal.Compact
}

// recSell marks a sell in orderRecord.posSide, recExternal a trade the
// service did not place (domain.ExternalFill, order 0); bits feeShift to
// 62 hold the fee code: 0 the fee is in the pair's quote (or there is
// none), 1 in its base, 2… the pair book's feeAssets[code−2], feeOverflow
// the asset in feeOther (past 125 third assets on one pair). Log positions
// stay far below 2⁵⁵.
const (
	recSell     = 1 << 63
	recExternal = 1 << 55
	feeShift    = 56
	feeOverflow = 127
	posMask     = recExternal - 1
)

// pos returns the log position of the record's fill.
func (r *orderRecord) pos() uint64 { return r.posSide & posMask }

// feeCode returns the code of the record's fee asset.
func (r *orderRecord) feeCode() uint64 { return r.posSide >> feeShift & feeOverflow }

// sell reports whether the record is a sell.
func (r *orderRecord) sell() bool { return r.posSide&recSell != 0 }

// external reports whether the record is a trade the service did not
// place.
func (r *orderRecord) external() bool { return r.posSide&recExternal != 0 }

// NewLedger returns an empty Ledger matching lots with method.
func NewLedger(method domain.PnlMethod) *Ledger {
	l := &Ledger{
		Method:         method,
		PageCacheBytes: DefaultPageCacheBytes,
		byKey:          map[string]uint32{},
		byName:         map[pairName]uint32{},
		open:           map[int64]orderState{},
		quotes:         map[string]*quoteSeries{},
		strat:          map[string]string{},
		assets:         newAssetBook(),
		intern:         jsonscan.Interner{},
		byCur:          map[fold.CurrencyPair][]uint32{},
	}
	l.conv.Rates.Fills = l
	return l
}

// Name implements Projection.
func (l *Ledger) Name() string { return "ledger" }

// Apply implements Projection: OrderRequested registers an order's pair and
// side; OrderFilled adds a record and updates lots, PNL aggregates, prices
// and marks; OrderCancelled/Rejected/Expired close an order; BalancesObserved
// adds an asset snapshot; RateObserved adds a currency rate (pnlconv.go);
// PairAdded and ConfigReplaced name pair strategies.
// Other events are ignored. A payload that does not decode is an EINVALID
// error and changes nothing.
func (l *Ledger) Apply(e *domain.Event) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.apply(e)
}

// ApplyBatch implements BatchApplier: Apply on each event, under one lock.
func (l *Ledger) ApplyBatch(events []domain.Event, onError func(*domain.Event, error)) {
	l.mu.Lock()
	applyEach(events, l.apply, onError)
	l.mu.Unlock()
}

// apply is Apply with l.mu held.
func (l *Ledger) apply(e *domain.Event) error {
	switch e.Type {
	case domain.TypeOrderRequested:
		// A predecoded payload is read in place, not copied.
		r, err := domain.PayloadInterned[domain.OrderRequested](e, l.intern)
		if err != nil {
			return err // EINVALID, naming the event
		}
		l.version++
		return l.applyRequested(r)
	case domain.TypeOrderFilled:
		id, ok := streams.OrderStreamID(e.Stream)
		if !ok {
			return domain.Errorf(domain.EINVALID, "OrderFilled in stream %q, not an order stream", e.Stream)
		}
		f, err := domain.PayloadInterned[domain.OrderFilled](e, l.intern)
		if err != nil {
			return err // EINVALID, naming the event
		}
		l.version++
		return l.applyFill(id, domain.FillTime(e, f), e.Position, f)
	case domain.TypeExternalFill:
		var x domain.ExternalFill
		if err := e.Decode(&x); err != nil {
			return err
		}
		t := x.Time
		if t == 0 {
			t = e.Time
		}
		l.version++
		return l.applyExternal(t, e.Position, &x)
	case domain.TypeDeposit, domain.TypeWithdrawal, domain.TypeConversion:
		l.version++
		return l.applyFlow(e)
	case domain.TypeOrderCancelled, domain.TypeOrderRejected, domain.TypeOrderExpired:
		if id, ok := streams.OrderStreamID(e.Stream); ok {
			delete(l.open, id)
			l.version++
		}
	case domain.TypeBalancesObserved:
		var b domain.BalancesObserved
		if err := e.Decode(&b); err != nil {
			return err
		}
		l.version++
		l.assets.observe(e.Time, &b)
	case domain.TypeRateObserved:
		var r domain.RateObserved
		if err := e.Decode(&r); err != nil {
			return err
		}
		l.version++
		l.head = max(l.head, e.Position)
		l.conv.Rates.Observe(r.Quote, r.Base, e.Time, e.Position, r.Rate)
		l.conv.RatePoint(fold.Key{Time: e.Time, Pos: e.Position}, -1)
	case domain.TypePairAdded, domain.TypePairRemoved, domain.TypeConfigReplaced:
		l.version++
		return l.applyConfig(e)
	}
	return nil
}

// pairName is an exchange's pair (Ledger.byName's key).
type pairName struct{ exchange, pair string }

// book returns the pair book of key, creating it.
func (l *Ledger) book(exchange, pair string) (uint32, *pairBook, error) {
	if i, ok := l.byName[pairName{exchange, pair}]; ok {
		return i, l.pairs[i], nil
	}
	key := domain.PairKey(exchange, pair)
	if i, ok := l.byKey[key]; ok {
		l.byName[pairName{exchange, pair}] = i
		return i, l.pairs[i], nil
	}
	quote, base, err := domain.SplitPair(pair)
	if err != nil {
		return 0, nil, err
	}
	b := &pairBook{key: key, exchange: exchange, pair: pair, quote: quote, base: base}
	b.fold = *fold.NewPair(quote, base, l.Method)
	i := uint32(len(l.pairs))
	l.pairs = append(l.pairs, b)
	l.byKey[key] = i
	l.byName[pairName{exchange, pair}] = i
	l.assets.addPair(exchange, quote, base, i)
	cp := fold.CurrencyPair{Quote: b.quote, Base: b.base}
	l.byCur[cp] = append(l.byCur[cp], i)
	l.conv.AddOn(&b.fold, exchange)
	return i, b, nil
}

func (l *Ledger) applyRequested(r *domain.OrderRequested) error {
	if r.Side != domain.Buy && r.Side != domain.Sell {
		return domain.Errorf(domain.EINVALID, "order %d: side %q", r.OrderID, r.Side)
	}
	i, _, err := l.book(r.Exchange, r.Pair)
	if err != nil {
		return err
	}
	v := i
	if r.Side == domain.Sell {
		v |= sideSell
	}
	if old, known := l.orders.get(r.OrderID); known {
		// The id's records, if any, may show toCancel again.
		l.pairs[old&^sideSell].gen++
	}
	l.orders.set(r.OrderID, v)
	l.open[r.OrderID] = orderState{amount: r.Amount}
	return nil
}

func (l *Ledger) applyFill(id, t int64, pos uint64, f *domain.OrderFilled) error {
	v, ok := l.orders.get(id)
	if !ok {
		return domain.Errorf(domain.EINVALID, "fill of order %d that was never requested", id)
	}
	if f.Quantity.Sign() <= 0 || f.Price.IsNeg() {
		return domain.Errorf(domain.EINVALID, "fill of order %d: quantity %s, price %s", id, f.Quantity, f.Price)
	}
	return l.addFill(v&^sideSell, id, false, v&sideSell != 0, t, pos, f)
}

// applyExternal adds a trade on the account that the service did not
// place (domain.ExternalFill) as a fill of no order (0) on its pair,
// marked external: an acquisition or disposal like any other.
func (l *Ledger) applyExternal(t int64, pos uint64, x *domain.ExternalFill) error {
	if err := x.Validate(); err != nil {
		return err // EINVALID, naming the trade
	}
	bi, _, err := l.book(x.Exchange, x.Pair)
	if err != nil {
		return err
	}
	return l.addFill(bi, 0, true, x.Side == domain.Sell, t, pos, &domain.OrderFilled{FillID: x.TradeID, Price: x.Price,
		Quantity: x.Quantity, Fee: x.Fee, FeeAsset: x.FeeAsset})
}

// applyFlow records a deposit's or withdrawal's status, or a conversion,
// among the account's flows (fold.Pairs: routed to the asset's home pair,
// transfers matched; folded before the next read).
func (l *Ledger) applyFlow(e *domain.Event) error {
	switch e.Type {
	case domain.TypeConversion:
		var c domain.Conversion
		if err := e.Decode(&c); err != nil {
			return err
		}
		if err := c.Validate(); err != nil {
			return err
		}
		l.conv.Convert(&c, e.Position)
	default:
		var t domain.Transfer
		if err := e.Decode(&t); err != nil {
			return err
		}
		if err := t.Validate(); err != nil {
			return err
		}
		l.conv.Transfer(e.Type == domain.TypeDeposit, &t, e.Position)
	}
	l.head = max(l.head, e.Position)
	return nil
}

// addFill adds a fill of order id (0 and external: a trade the service did
// not place) on pair bi at trade time t, recorded at log position pos.
func (l *Ledger) addFill(bi uint32, id int64, external, sell bool, t int64, pos uint64, f *domain.OrderFilled) error {
	b := l.pairs[bi]
	var st orderState
	isOpen := false
	if !external {
		st, isOpen = l.open[id] // open while requested and not filled, cancelled, rejected or expired (log order)
	}
	ff := fold.Fill{Key: fold.Key{Time: t, Pos: pos}, Order: id, Side: domain.Buy, Price: f.Price, Qty: f.Quantity,
		Fee: f.Fee, FeeAsset: f.FeeAsset}
	if sell {
		ff.Side = domain.Sell
	}
	// The fill's price is a rate at its time, recorded before its fee is
	// valued (the order every reader follows).
	l.conv.Rates.ObserveFill(b.quote, b.base, t, pos, f.Price)
	if !external {
		l.sawFill(id, t)
	}
	c := b.recs.put
	rec := orderRecord{time: t, posSide: pos | b.feeCode(f.FeeAsset, pos)<<feeShift, id: id, rate: c(f.Price), amount: c(f.Quantity),
		fee: c(f.Fee)}
	if sell {
		rec.posSide |= recSell
	}
	if external {
		rec.posSide |= recExternal
	}
	l.head = max(l.head, pos)
	l.records++
	st.filled = st.filled.Add(f.Quantity)
	if isOpen && st.amount.IsPos() && st.filled.Cmp(st.amount) >= 0 {
		delete(l.open, id)
	} else if isOpen {
		l.open[id] = st
	}
	late := !b.fold.InOrder(ff.Key)
	if !late {
		// The common case: folded at once. An order closed meanwhile (a
		// fill reported after its cancel) has its figures from its records.
		o := st.fold
		if !isOpen && !external {
			o = fold.OrderBefore(b.journal(l), id, ff.Key)
		}
		b.recs.push(rec) // first: the fill's price is a rate of its own time (LatestFill)
		var r fold.Result
		b.fold.Next(&ff, &o, &l.conv.Rates, &r)
		if st, open := l.open[id]; open && !external {
			st.fold = o
			l.open[id] = st
		}
		b.setDerived(b.recs.at(b.recs.len()-1), &r)
		if r.Fee.Third {
			b.addFee(t, pos, &r.Fee)
			l.sawFeeAsset(b.exchange, r.Fee.Asset)
			if !f.Fee.IsZero() {
				l.conv.Valued(int(bi))
			}
		}
		l.addToSeries(b, &ff, &r)
	} else {
		// Recorded late: in its place, folded again with every fill after
		// it before the next read (ledgerfold.go).
		out := fold.PendingOut(&ff)
		rec.pnl, rec.unmatchedQt = c(out.Pnl), c(out.Unmatched)
		b.insert(rec)
		if fold.FeeThird(f.FeeAsset, b.quote, b.base) {
			b.addFee(t, pos, &pnlmath.FeeValue{Asset: f.FeeAsset, Amount: f.Fee, Third: true})
			l.sawFeeAsset(b.exchange, f.FeeAsset)
		}
		l.conv.Late(int(bi), ff.Key)
	}
	ownSlice(&b.prices, &b.pricesAt, l.frozen)
	b.addPrice(t, f.Price, !late)
	// The fill's price is a rate: the pairs whose figures depend on rates
	// and went past its time are folded again from it.
	l.conv.RatePoint(ff.Key, int(bi))
	return nil
}

// setDerived sets the derived fields of rec, a record of b, from its
// fill's fold result.
func (b *pairBook) setDerived(rec *orderRecord, r *fold.Result) {
	c := b.recs.put
	rec.avgPrice, rec.position, rec.cashFlow = c(r.AvgPrice), c(r.Position), c(r.CashFlow)
	rec.invCost, rec.abp, rec.pnl, rec.unmatchedQt = c(r.InvCost), c(r.ABP), c(r.Pnl), c(r.Unmatched)
}

// insert keeps recs sorted by (time, pos).
func (b *pairBook) insert(rec orderRecord) {
	n := b.recs.len()
	if n == 0 || !recLess(&rec, b.recs.at(n-1)) {
		b.recs.push(rec)
		return
	}
	b.recs.insert(b.recs.search(func(r *orderRecord) bool { return recLess(&rec, r) }), rec)
	b.gen++ // later records moved
}

func recLess(a, b *orderRecord) bool {
	return a.time < b.time || (a.time == b.time && a.pos() < b.pos())
}

// OrderRecord is one order record as the API shows it (see Ledger for the
// definition of every field).
type OrderRecord struct {
	Key                string
	Time               int64
	Pair               string
	Type               domain.Side
	Rate, Amount       decimal.Decimal
	ID                 int64
	Cost, Fees         decimal.Decimal
	Fee                pnlmath.FeeValue // the fee as charged and its valuation (Fees is its Quote)
	BaseValue          decimal.Decimal
	CostProceed        decimal.Decimal
	AveragePrice       decimal.Decimal
	PnlPrice           decimal.Decimal
	Balance            decimal.Decimal
	BaseBalance        decimal.Decimal
	InventoryCost      decimal.Decimal
	ABP                decimal.Decimal
	Pnl                decimal.Decimal
	UnmatchedBaseValue decimal.Decimal
	ToCancel           bool
	External           bool   // a trade on the account the service did not place (ID 0)
	Position           uint64 // log position of the fill
	closing            bool   // a sell that matched at least one lot
}

func (l *Ledger) view(b *pairBook, r *orderRecord) OrderRecord {
	v := b.recs.get
	rate, amount := v(r.rate), v(r.amount)
	cost := rate.Mul(amount)
	o := OrderRecord{Key: b.key, Time: r.time, Pair: b.pair, Type: domain.Buy, Rate: rate, Amount: amount, ID: r.id,
		Cost: cost, AveragePrice: v(r.avgPrice), Balance: v(r.position),
		BaseBalance: v(r.cashFlow), InventoryCost: v(r.invCost), ABP: v(r.abp), Pnl: v(r.pnl), Position: r.pos()}
	o.Fee = b.feeOf(r)
	o.Fees = o.Fee.Quote
	var unmatched decimal.Decimal
	if r.sell() {
		unmatched = v(r.unmatchedQt)
		o.Type = domain.Sell
		o.UnmatchedBaseValue = rate.Mul(unmatched)
		o.closing = unmatched.Less(amount)
	}
	o.PnlPrice = recordPnlPrice(o.Type, rate, amount, cost, &o.Fee, unmatched, o.Pnl)
	o.BaseValue = o.Fee.Net(o.Type, cost)
	o.CostProceed = o.BaseValue
	if !r.sell() {
		o.CostProceed = o.BaseValue.Neg()
	}
	if r.external() {
		o.External = true
	} else {
		_, o.ToCancel = l.open[r.id]
	}
	return o
}

// recordPnlPrice returns the pnlPrice of a record (see Ledger): what
// pnlmath.Lots.ApplyFee gave its fill as the lot's cost ÷ the quantity
// matched, found again from what the record keeps. A buy's lot is its
// quantity received at its cost (value, plus the fee valued in quote unless
// it came out of the coins). A sell's pnl is value matched − its share of
// the fee − the consumed lots' cost, so that cost is value matched − fee
// share − pnl: exact, as long as the figures are within the Decimal's
// range (pnlmath.Lots.ApplyFillTraced's arithmetic, step for step).
func recordPnlPrice(side domain.Side, rate, amount, value decimal.Decimal, fee *pnlmath.FeeValue, unmatched, pnl decimal.Decimal) decimal.Decimal {
	feeQuote := decimal.Zero
	if fee.Valued {
		feeQuote = fee.Quote
	}
	var matched, lotCost decimal.Decimal
	switch {
	case side == domain.Sell:
		matched = amount.Sub(unmatched)
		if !matched.IsPos() {
			return decimal.Zero
		}
		lotCost = rate.Mul(matched).Sub(decimal.MulDiv(feeQuote, matched, amount)).Sub(pnl)
	case fee.InBase:
		matched, lotCost = fee.Received(side, amount), value
	default:
		matched, lotCost = amount, value.Add(feeQuote)
	}
	if !matched.IsPos() {
		return decimal.Zero
	}
	return lotCost.Div(matched)
}

// AppendJSON appends the record as the spec's JSON object (numbers as JSON
// numbers, toCancel only when true).
func (o *OrderRecord) AppendJSON(b []byte) []byte {
	b = append(b, `{"time":`...)
	b = strconv.AppendInt(b, o.Time, 10)
	b = append(b, `,"pair":`...)
	b = domain.AppendJSONString(b, o.Pair)
	b = append(b, `,"type":"`...)
	b = append(b, o.Type...)
	b = append(b, `","rate":`...)
	b = appendNumber(b, o.Rate)
	b = append(b, `,"amount":`...)
	b = appendNumber(b, o.Amount)
	b = append(b, `,"id":`...)
	b = strconv.AppendInt(b, o.ID, 10)
	b = append(b, `,"cost":`...)
	b = appendNumber(b, o.Cost)
	if o.ToCancel {
		b = append(b, `,"toCancel":true`...)
	}
	if o.External {
		b = append(b, `,"external":true`...)
	}
	b = append(b, `,"fees":`...)
	b = appendNumber(b, o.Fees)
	b = o.appendFeeJSON(b)
	b = append(b, `,"baseValue":`...)
	b = appendNumber(b, o.BaseValue)
	b = append(b, `,"costProceed":`...)
	b = appendNumber(b, o.CostProceed)
	b = append(b, `,"averagePrice":`...)
	b = appendNumber(b, o.AveragePrice)
	b = append(b, `,"pnlPrice":`...)
	b = appendNumber(b, o.PnlPrice)
	b = append(b, `,"balance":`...)
	b = appendNumber(b, o.Balance)
	b = append(b, `,"baseBalance":`...)
	b = appendNumber(b, o.BaseBalance)
	b = append(b, `,"inventory_cost":`...)
	b = appendNumber(b, o.InventoryCost)
	b = append(b, `,"ABP":`...)
	b = appendNumber(b, o.ABP)
	b = append(b, `,"pnl":`...)
	b = appendNumber(b, o.Pnl)
	b = append(b, `,"unmatchedBaseValue":`...)
	b = appendNumber(b, o.UnmatchedBaseValue)
	b = append(b, `,"key":`...)
	b = domain.AppendJSONString(b, o.Key)
	return append(b, '}')
}

// MarshalJSON implements json.Marshaler with AppendJSON.
func (o OrderRecord) MarshalJSON() ([]byte, error) { return o.AppendJSON(nil), nil }

// appendNumber appends d as a JSON number (decimal.Number's form).
func appendNumber(b []byte, d decimal.Decimal) []byte { return d.AppendTrimmed(b) }

// MaxPageSize bounds pageSize of the order pages (and MaxDayOrders the
// orders of orders/day).
const (
	MaxPageSize  = 1000
	MaxDayOrders = 5000
)

// HasKey reports whether any order was requested for key.
func (l *Ledger) HasKey(key string) bool {
	l.rlock()
	defer l.mu.RUnlock()
	_, ok := l.byKey[key]
	return ok
}

// Orders returns every record of key, newest first (none for an unknown key).
func (l *Ledger) Orders(key string) []OrderRecord {
	l.rlock()
	defer l.mu.RUnlock()
	i, ok := l.byKey[key]
	if !ok {
		return nil
	}
	b := l.pairs[i]
	out := make([]OrderRecord, 0, b.recs.len())
	for j := b.recs.len() - 1; j >= 0; j-- {
		out = append(out, l.view(b, b.recs.at(j)))
	}
	return out
}

// OrdersCursor marks where OrdersOlder stopped: the zero value starts at
// the newest record.
type OrdersCursor struct {
	time    int64
	pos     uint64
	started bool
}

// OrdersOlder returns up to n records of key, newest first, older than cur,
// and the cursor to continue from; no records means the end. Each call
// holds the lock only for its own records, so a long history goes out in
// bounded pieces without stopping the projection. Taken from the zero
// cursor on, the pieces list every record that existed at the first call
// exactly once, in order, and none added later unless it is older than the
// cursor (a late fill inserted in the past).
func (l *Ledger) OrdersOlder(key string, cur OrdersCursor, n int) ([]OrderRecord, OrdersCursor) {
	l.rlock()
	defer l.mu.RUnlock()
	i, ok := l.byKey[key]
	if !ok || n <= 0 {
		return nil, cur
	}
	b := l.pairs[i]
	end := b.recs.len() // records at [0, end) are older than the cursor
	if cur.started {
		c := orderRecord{time: cur.time, posSide: cur.pos}
		end = b.recs.search(func(r *orderRecord) bool { return !recLess(r, &c) })
	}
	out := make([]OrderRecord, 0, min(n, end))
	for j := end - 1; j >= 0 && len(out) < n; j-- {
		r := b.recs.at(j)
		out = append(out, l.view(b, r))
		cur = OrdersCursor{time: r.time, pos: r.pos(), started: true}
	}
	return out, cur
}

// FillRecord returns the record of the fill of key at time t (ms, the
// fill's trade time, domain.FillTime) and log position pos, and false when
// the ledger holds none (a fill it refused, or not applied yet).
func (l *Ledger) FillRecord(key string, t int64, pos uint64) (OrderRecord, bool) {
	l.rlock()
	defer l.mu.RUnlock()
	i, ok := l.byKey[key]
	if !ok {
		return OrderRecord{}, false
	}
	b := l.pairs[i]
	want := orderRecord{time: t, posSide: pos}
	j := b.recs.search(func(r *orderRecord) bool { return !recLess(r, &want) })
	if j == b.recs.len() || b.recs.at(j).time != t || b.recs.at(j).pos() != pos {
		return OrderRecord{}, false
	}
	return l.view(b, b.recs.at(j)), true
}

// FilledKeys returns the pair keys with at least one fill, sorted.
func (l *Ledger) FilledKeys() []string {
	l.rlock()
	defer l.mu.RUnlock()
	var keys []string
	for _, b := range l.pairs {
		if b.recs.len() > 0 {
			keys = append(keys, b.key)
		}
	}
	sort.Strings(keys)
	return keys
}

// Page returns page (from 0) of pageSize records of key, newest first, and
// the number of records of key. Out-of-range pages are empty. pageSize must
// be 1…MaxPageSize and page ≥ 0 (EINVALID otherwise).
func (l *Ledger) Page(key string, page, pageSize int) ([]OrderRecord, int, error) {
	out := []OrderRecord{}
	total, err := l.page(key, page, pageSize, func(b *pairBook, j int) {
		out = append(out, l.view(b, b.recs.at(j)))
	})
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// AppendPageJSON appends Page(key, page, pageSize)'s records to dst as the
// elements of a JSON array (AppendJSON's form, comma separated), and returns
// the number of records of key; errors are Page's. Most records' JSON comes
// from a cache (see orderjson.go).
func (l *Ledger) AppendPageJSON(dst []byte, key string, page, pageSize int) ([]byte, int, error) {
	var last encodedRef
	first := true
	total, err := l.page(key, page, pageSize, func(b *pairBook, j int) {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = l.recordJSON(dst, b, j, &last)
	})
	return dst, total, err
}

// page calls emit with the book and index of every record of the page,
// newest first, under the read lock, and returns the number of records of
// key.
func (l *Ledger) page(key string, page, pageSize int, emit func(b *pairBook, j int)) (int, error) {
	if err := checkPage(page, pageSize); err != nil {
		return 0, err
	}
	l.rlock()
	defer l.mu.RUnlock()
	i, ok := l.byKey[key]
	if !ok {
		return 0, nil
	}
	b := l.pairs[i]
	n := b.recs.len()
	if page > n/pageSize {
		return n, nil
	}
	top := n - 1 - page*pageSize
	for j := top; j >= 0 && j > top-pageSize; j-- {
		emit(b, j)
	}
	return n, nil
}

func checkPage(page, pageSize int) error {
	if page < 0 {
		return domain.Errorf(domain.EINVALID, "page must be ≥ 0")
	}
	if pageSize < 1 || pageSize > MaxPageSize {
		return domain.Errorf(domain.EINVALID, "pageSize must be between 1 and %d", MaxPageSize)
	}
	return nil
}

// PageMulti returns page (from 0) of pageSize records of the given keys
// merged newest first, and the number of records of those keys. Records of
// equal time are ordered by key (in the order given, duplicates ignored),
// then newest position first, so pages are stable and concatenate to the
// full list. Cost: O(k·log n·64) to find the page start plus O(pageSize·k).
func (l *Ledger) PageMulti(keys []string, page, pageSize int) ([]OrderRecord, int, error) {
	out := []OrderRecord{}
	total, err := l.pageMulti(keys, page, pageSize, func(b *pairBook, j int) {
		out = append(out, l.view(b, b.recs.at(j)))
	})
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// AppendPageMultiJSON is AppendPageJSON for PageMulti.
func (l *Ledger) AppendPageMultiJSON(dst []byte, keys []string, page, pageSize int) ([]byte, int, error) {
	var last encodedRef
	first := true
	total, err := l.pageMulti(keys, page, pageSize, func(b *pairBook, j int) {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = l.recordJSON(dst, b, j, &last)
	})
	return dst, total, err
}

// pageMulti is page for PageMulti.
func (l *Ledger) pageMulti(keys []string, page, pageSize int, emit func(b *pairBook, j int)) (int, error) {
	if err := checkPage(page, pageSize); err != nil {
		return 0, err
	}
	l.rlock()
	defer l.mu.RUnlock()
	books := l.booksOf(keys)
	total := 0
	for _, b := range books {
		total += b.recs.len()
	}
	off := page * pageSize
	if page > total/pageSize || off >= total {
		return total, nil
	}
	// ends[k] = index (exclusive, from the top) of the next record to emit
	// in book k; a record with time > T comes before every record at T.
	T := l.timeAtRank(books, off)
	ends := make([]int, len(books))
	skip := off
	for k, b := range books {
		e := b.recs.search(func(r *orderRecord) bool { return r.time > T })
		ends[k] = e
		skip -= b.recs.len() - e
	}
	// Now skip records at time T in key order, newest position first.
	for k, b := range books {
		for skip > 0 && ends[k] > 0 && b.recs.at(ends[k]-1).time == T {
			ends[k]--
			skip--
		}
	}
	for n := 0; n < pageSize; n++ {
		best := -1
		for k, b := range books {
			if ends[k] == 0 {
				continue
			}
			if best < 0 || b.recs.at(ends[k]-1).time > books[best].recs.at(ends[best]-1).time {
				best = k
			}
		}
		if best < 0 {
			break
		}
		ends[best]--
		emit(books[best], ends[best])
	}
	return total, nil
}

// timeAtRank returns the time of the record at rank off (0 = newest) of the
// books merged by descending time.
func (l *Ledger) timeAtRank(books []*pairBook, off int) int64 {
	lo, hi := int64(1<<62), int64(-1<<62)
	for _, b := range books {
		if n := b.recs.len(); n > 0 {
			lo, hi = min(lo, b.recs.at(0).time), max(hi, b.recs.at(n-1).time)
		}
	}
	// smallest t in [lo, hi] with count(time > t) ≤ off
	for lo < hi {
		mid := lo + (hi-lo)/2
		c := 0
		for _, b := range books {
			c += b.recs.len() - b.recs.search(func(r *orderRecord) bool { return r.time > mid })
		}
		if c <= off {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// booksOf returns the books of keys, in order, without duplicates or
// unknown keys.
func (l *Ledger) booksOf(keys []string) []*pairBook {
	var books []*pairBook
	seen := make(map[uint32]bool, len(keys))
	for _, k := range keys {
		if i, ok := l.byKey[k]; ok && !seen[i] {
			seen[i] = true
			books = append(books, l.pairs[i])
		}
	}
	return books
}

// DaySummary is one key's activity in a day (an element of orders/day's
// days): fills, buys, sells, volume (Σ rate×amount), realized pnl and
// unmatchedBaseValue of the day.
type DaySummary struct {
	Key                string         `json:"key"`
	Date               string         `json:"date"`
	NumberOfTrades     int            `json:"numberOfTrades"`
	BuyCount           int            `json:"buyCount"`
	SellCount          int            `json:"sellCount"`
	Volume             decimal.Number `json:"volume"`
	Pnl                decimal.Number `json:"pnl"`
	UnmatchedBaseValue decimal.Number `json:"unmatchedBaseValue"`
	Unit               string         `json:"unit"`
}

// Day returns, for the day [from, to) (ms; the caller computes the
// boundaries of "today" in the client's zone), one summary per key (in the
// order given), the records of the day across keys newest first (at most
// MaxDayOrders), and those of them that are closing trades (sells that
// matched a lot).
func (l *Ledger) Day(keys []string, date string, from, to int64) (days []DaySummary, orders, closes []OrderRecord) {
	l.rlock()
	defer l.mu.RUnlock()
	days = []DaySummary{}
	orders, closes = []OrderRecord{}, []OrderRecord{}
	// Each key's window [lo, next) of records not yet listed; the newest
	// MaxDayOrders are merged from their tops, so only they are viewed.
	type window struct {
		b        *pairBook
		lo, next int
	}
	var wins []window
	for _, key := range keys {
		s := DaySummary{Key: key, Date: date}
		if _, pair, err := domain.SplitPairKey(key); err == nil {
			s.Unit, _, _ = domain.SplitPair(pair)
		}
		if i, ok := l.byKey[key]; ok {
			b := l.pairs[i]
			lo, hi := b.timeRange(from, to)
			var vol, pnl, unm decimal.Decimal
			for j := lo; j < hi; j++ {
				r, v := b.recs.at(j), b.recs.get
				rate := v(r.rate)
				s.NumberOfTrades++
				if r.sell() {
					s.SellCount++
					unm = unm.Add(rate.Mul(v(r.unmatchedQt)))
				} else {
					s.BuyCount++
				}
				vol = vol.Add(rate.Mul(v(r.amount)))
				pnl = pnl.Add(v(r.pnl))
			}
			s.Volume, s.Pnl, s.UnmatchedBaseValue = decimal.Number(vol), decimal.Number(pnl), decimal.Number(unm)
			wins = append(wins, window{b, lo, hi})
		}
		days = append(days, s)
	}
	// Newest first; equal times in the order of keys, then newest position
	// first.
	for len(orders) < MaxDayOrders {
		best := -1
		for k, w := range wins {
			if w.next > w.lo && (best < 0 || w.b.recs.at(w.next-1).time > wins[best].b.recs.at(wins[best].next-1).time) {
				best = k
			}
		}
		if best < 0 {
			break
		}
		w := &wins[best]
		w.next--
		orders = append(orders, l.view(w.b, w.b.recs.at(w.next)))
	}
	for _, o := range orders {
		if o.closing {
			closes = append(closes, o)
		}
	}
	return days, orders, closes
}

// DayCounts counts, for each day [bounds[i], bounds[i+1]) (ms; the caller
// computes the days' boundaries in the client's zone), the orders of keys
// with at least one fill that day (orders) and those of them with a
// closing fill that day, a sell that matched a lot (closes). An order
// filled across two days counts on both. It costs one pass over the
// window's records, whatever MaxDayOrders.
func (l *Ledger) DayCounts(keys []string, bounds []int64) (orders, closes []int) {
	n := max(len(bounds)-1, 0)
	orders, closes = make([]int, n), make([]int, n)
	l.rlock()
	defer l.mu.RUnlock()
	// Sized for the busiest day at once: grown by inserts, the map of a
	// day of fills would be rebuilt a dozen times per request.
	most := 0
	for d := 0; d < n; d++ {
		fills := 0
		for _, key := range keys {
			if i, ok := l.byKey[key]; ok {
				lo, hi := l.pairs[i].timeRange(bounds[d], bounds[d+1])
				fills += hi - lo
			}
		}
		most = max(most, fills)
	}
	seen := make(map[int64]bool, most) // order id → counted as closing too
	for d := 0; d < n; d++ {
		clear(seen)
		for _, key := range keys {
			i, ok := l.byKey[key]
			if !ok {
				continue
			}
			b := l.pairs[i]
			lo, hi := b.timeRange(bounds[d], bounds[d+1])
			for j := lo; j < hi; j++ {
				r := b.recs.at(j)
				closing, counted := seen[r.id]
				if !counted {
					orders[d]++
				}
				if r.sell() && b.recs.get(r.unmatchedQt).Less(b.recs.get(r.amount)) && !closing {
					closes[d]++
					closing = true
				}
				seen[r.id] = closing
			}
		}
	}
	return orders, closes
}

// timeRange returns the index range [lo, hi) of records with from ≤ time < to.
func (b *pairBook) timeRange(from, to int64) (int, int) {
	lo := b.recs.search(func(r *orderRecord) bool { return r.time >= from })
	hi := b.recs.search(func(r *orderRecord) bool { return r.time >= to })
	return lo, max(lo, hi)
}

// Version returns a number that changes whenever an applied event changed
// the ledger, so that readers may cache what they computed from it.
func (l *Ledger) Version() uint64 {
	l.rlock()
	defer l.mu.RUnlock()
	return l.version
}

// RecordCount returns the number of order records across all pairs.
func (l *Ledger) RecordCount() int {
	l.rlock()
	defer l.mu.RUnlock()
	return l.records
}

// ABP returns the average unit cost of the lots held for exchange/pair (0
// when none), for core memory.
func (l *Ledger) ABP(exchange, pair string) decimal.Decimal {
	l.rlock()
	defer l.mu.RUnlock()
	if i, ok := l.byKey[domain.PairKey(exchange, pair)]; ok {
		return l.pairs[i].fold.Lots().ABP()
	}
	return decimal.Zero
}
