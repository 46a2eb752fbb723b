package clickhouse

import (
	"slices"
	"sort"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/fold"
	"github.com/tradeledger/tradeledger/domain/pnlread"
	"github.com/tradeledger/tradeledger/domain/streams"
)

// state is what the sink must remember of the log to turn the next event
// into rows: the orders (through the domain's order fold), each pair's
// fold (domain/fold: lots, fees, the order of trade time), its fills and
// slots, and the bookkeeping the PNL reads need (open orders, strategies,
// snapshot numbers, rates). It is rebuilt at every start by replaying the
// log, so the rows it produces are a function of the log alone: writing
// them again gives the same rows.
//
// The PNL side is the fold the in-memory Ledger runs (domain/fold), fed the
// same fills: every figure is in trade time, and a fill recorded late
// makes its pair dirty; before the next flush (settle) the pair is folded
// again from its nearest restart point and every row derived from the
// fills from there — fills, slots, hours, days, figures in other
// currencies, orders' pnl, the pair's inventory — is written again with
// the position then reached as its version, so that it replaces the rows
// it corrects. Events are never rewritten.
type state struct {
	method   domain.PnlMethod
	orders   map[int64]*order
	books    map[pairKey]*book
	list     []*book            // the books in the order they were made
	pnlOrder map[int64]pnlOrder // order id → its pair's book and side, for every order requested
	open     map[int64]*openOrder
	strat    map[pairKey]string
	snaps    map[string]uint64 // exchange → snapshots so far
	folds    fold.Pairs        // every rate of the log, the currencies quotes convert into, the books to fold again (conv.go)
	conv     map[convKey]*fold.ConvSeries[int64]
	report   string // the reporting currency last written
}

// pnlOrder is what a fill of an order needs of its request: its pair's
// book and whether it sells (one map for both: the start's replay looks
// them up for every order and fill of the log).
type pnlOrder struct {
	bk   *book
	sell bool
}

// order is an order's fold and what the orders table shows beside it.
type order struct {
	domain.Order
	created int64  // time of OrderRequested, ms
	actor   string // who requested it
	fills   uint32
}

// book is one pair's fold and what was derived from it.
type book struct {
	key         pairKey
	quote, base string
	fold        fold.Pair
	fills       fold.List // its fills in trade-time order
	fillIDs     []fillID  // the exchange's fill ids in log order (fillID)
	series      fold.Series[int64]
	hours       map[int64]*hourRow // daily figures per UTC hour (pnl_overview9's day and hour rows)
	pos         uint64             // position of the last event that changed the pair
	index       int                // in state.list and state.folds
	pendingHour int64              // an hour the replay changed and that is not summed yet (emitSlot), when pending
	pendingPos  uint64             // the position of its last change
	pending     bool
	moved       bool     // it held moves of the account's flows (fold's move.go): a re-fold may empty slots
	convs       []string // the currencies it has figures in (state.conv), in the order first converted into
}

// fillID is the exchange's id of the fill recorded at log position pos.
type fillID struct {
	pos uint64
	id  string
}

// addFillID records the exchange's id of the fill at log position pos.
// Fills come in log order, so the ids stay sorted by position with an
// append (a slice: at start the sink replays every fill of the log, and a
// map's inserts cost it about a fifth of the fills' CPU).
func (bk *book) addFillID(pos uint64, id string) {
	n := len(bk.fillIDs)
	if n == 0 || bk.fillIDs[n-1].pos < pos {
		bk.fillIDs = append(bk.fillIDs, fillID{pos, id})
		return
	}
	i := sort.Search(n, func(i int) bool { return bk.fillIDs[i].pos >= pos })
	if i < n && bk.fillIDs[i].pos == pos {
		bk.fillIDs[i].id = id
		return
	}
	bk.fillIDs = slices.Insert(bk.fillIDs, i, fillID{pos, id})
}

// fillID returns the exchange's id of the fill at log position pos ("" if
// none was recorded).
func (bk *book) fillID(pos uint64) string {
	i := sort.Search(len(bk.fillIDs), func(i int) bool { return bk.fillIDs[i].pos >= pos })
	if i < len(bk.fillIDs) && bk.fillIDs[i].pos == pos {
		return bk.fillIDs[i].id
	}
	return ""
}

// hourKey is one hour of a book.
type hourKey struct {
	bk   *book
	hour int64
}

// openOrder is what is kept of an order while it is open (log order): its
// amount and the quantity filled, which close it, and its figures in the
// fold.
type openOrder struct {
	amount, filled decimal.Decimal
	fold           fold.Order
}

func newState(method domain.PnlMethod) *state {
	return &state{
		method:   method,
		orders:   make(map[int64]*order),
		books:    make(map[pairKey]*book),
		pnlOrder: make(map[int64]pnlOrder),
		open:     make(map[int64]*openOrder),
		strat:    make(map[pairKey]string),
		snaps:    make(map[string]uint64),
		conv:     make(map[convKey]*fold.ConvSeries[int64]),
	}
}

// apply folds e into the state and, when b is not nil, adds the rows it
// produces to b. Events of other types are ignored; a payload that does not
// decode is EINVALID.
func (st *state) apply(e *domain.Event, b *batch) error {
	switch e.Type {
	case domain.TypeOrderRequested, domain.TypeOrderAccepted, domain.TypeOrderRejected,
		domain.TypeOrderFilled, domain.TypeOrderCancelRequested, domain.TypeOrderCancelled,
		domain.TypeOrderExpired, domain.TypeStopTriggered, domain.TypeTrailingStopMoved:
		return st.applyOrder(e, b)
	case domain.TypeBalancesObserved:
		var p domain.BalancesObserved
		if err := e.Decode(&p); err != nil {
			return err
		}
		st.snaps[p.Exchange]++
		seq := st.snaps[p.Exchange]
		if b == nil {
			return nil
		}
		b.snapshots = append(b.snapshots, snapshotRow{Exchange: p.Exchange, Seq: seq, TimeMs: e.Time, Position: e.Position})
		for _, a := range p.Balances {
			b.balances = append(b.balances, balanceRow{
				Exchange: p.Exchange, Seq: seq, Asset: a.Asset, TimeMs: e.Time,
				Available: a.Available, OnOrder: a.OnOrder, Position: e.Position,
			})
		}
	case domain.TypeRateObserved:
		var r domain.RateObserved
		if err := e.Decode(&r); err != nil {
			return err
		}
		st.folds.Rates.Observe(r.Quote, r.Base, e.Time, e.Position, r.Rate)
		st.observed(r.Quote, r.Base, e.Position, b)
		st.folds.RatePoint(fold.Key{Time: e.Time, Pos: e.Position}, -1)
	case domain.TypePairAdded, domain.TypePairRemoved, domain.TypeConfigReplaced:
		return st.applyConfig(e, b)
	case domain.TypeExternalFill:
		var x domain.ExternalFill
		if err := e.Decode(&x); err != nil {
			return err
		}
		if err := x.Validate(); err != nil {
			return nil // the Ledger refuses it too
		}
		bk := st.book(x.Exchange, x.Pair, e.Position, b)
		if bk == nil {
			return nil
		}
		t := x.Time
		if t == 0 {
			t = e.Time
		}
		st.addFill(bk, 0, true, x.Side == domain.Sell, t, e, &domain.OrderFilled{FillID: x.TradeID, Price: x.Price,
			Quantity: x.Quantity, Fee: x.Fee, FeeAsset: x.FeeAsset}, b)
	case domain.TypeDeposit, domain.TypeWithdrawal:
		var t domain.Transfer
		if err := e.Decode(&t); err != nil {
			return err
		}
		if t.Validate() == nil { // the Ledger refuses the others too
			st.folds.Transfer(e.Type == domain.TypeDeposit, &t, e.Position) // folded at the next settle
		}
	case domain.TypeConversion:
		var c domain.Conversion
		if err := e.Decode(&c); err != nil {
			return err
		}
		if c.Validate() == nil {
			st.folds.Convert(&c, e.Position)
		}
	}
	return nil
}

func (st *state) applyConfig(e *domain.Event, b *batch) error {
	set := func(k pairKey, strategy string) {
		if strategy == "" {
			delete(st.strat, k)
		} else {
			st.strat[k] = strategy
		}
		if b != nil {
			b.strategies[k] = strategyRow{pairKey: k, Strategy: strategy, Position: e.Position}
		}
	}
	switch e.Type {
	case domain.TypePairAdded:
		var p domain.PairAdded
		if err := e.Decode(&p); err != nil {
			return err
		}
		set(pairKey{p.Exchange, p.Pair}, p.Strategy)
	case domain.TypePairRemoved:
		var p domain.PairRemoved
		if err := e.Decode(&p); err != nil {
			return err
		}
		set(pairKey{p.Exchange, p.Pair}, "")
	case domain.TypeConfigReplaced:
		c, ok := domain.DecodePnlConfig(e.Data)
		if !ok {
			return nil // as the Ledger: strategies stay as they were
		}
		st.folds.Rates.SetReporting(c.Reporting)
		st.folds.FeeMaxAge(c.FeeRateMaxAge) // fees in third assets valued again under a new bound
		st.folds.Targets("")                // a new reporting currency: the books converted into it are folded again
		st.reporting(e.Position, b)
		next := map[pairKey]string{}
		for _, p := range c.Strategies {
			next[pairKey{p.Exchange, p.Pair}] = p.Strategy
		}
		for k := range st.strat {
			if _, ok := next[k]; !ok {
				set(k, "")
			}
		}
		for k, s := range next {
			set(k, s)
		}
	}
	return nil
}

func (st *state) applyOrder(e *domain.Event, b *batch) error {
	id, ok := streams.OrderStreamID(e.Stream)
	if !ok {
		return nil
	}
	o := st.orders[id]
	if o == nil {
		if e.Type != domain.TypeOrderRequested {
			return domain.Errorf(domain.EINVALID, "event %s/%d (%s): order was never requested", e.Stream, e.Version, e.Type)
		}
		o = &order{Order: domain.NewOrder(), created: e.Time, actor: e.Actor}
	}
	var fill domain.OrderFilled
	if e.Type == domain.TypeOrderFilled {
		if err := e.Decode(&fill); err != nil {
			return err
		}
	}
	if err := o.Apply(e); err != nil {
		return err
	}
	o.FillIDs = nil // not needed here; saves memory on big logs
	st.orders[id] = o
	switch e.Type {
	case domain.TypeOrderRequested:
		st.requested(&o.OrderRequested, e, b)
	case domain.TypeOrderFilled:
		o.fills++
		st.applyFill(id, e, &fill, b)
	case domain.TypeOrderCancelled, domain.TypeOrderRejected, domain.TypeOrderExpired:
		delete(st.open, id)
	}
	if b != nil {
		b.orders[id] = orderRow{
			OrderID: id, Exchange: o.Exchange, Pair: o.Pair, Side: string(o.Side), Kind: string(o.Kind),
			Status: string(o.State), Amount: o.Amount, Price: o.Price,
			StopPrice: o.StopPrice, Filled: o.Filled, Value: o.Cost,
			Fees: o.Fees, Fills: o.fills, CreatedMs: o.created, UpdatedMs: e.Time,
			Actor: o.actor, Reason: o.Reason, Position: e.Position,
		}
	}
	return nil
}

// book returns the pair book of exchange's pair, making it (nil for a
// pair that is not QUOTE-BASE).
func (st *state) book(exchange, pair string, pos uint64, b *batch) *book {
	k := pairKey{exchange, pair}
	bk := st.books[k]
	if bk == nil {
		quote, base, err := domain.SplitPair(pair)
		if err != nil {
			return nil
		}
		bk = &book{key: k, quote: quote, base: base, hours: make(map[int64]*hourRow)}
		bk.fold = *fold.NewPair(quote, base, st.method)
		st.books[k] = bk
		bk.index = st.folds.AddOn(&bk.fold, exchange) // the home of its base's flows on the account, maybe
		st.list = append(st.list, bk)
		st.emitPair(bk, pos, b)
	}
	return bk
}

// requested registers the order's pair book and opens the order.
func (st *state) requested(r *domain.OrderRequested, e *domain.Event, b *batch) {
	if r.Side != domain.Buy && r.Side != domain.Sell {
		return
	}
	bk := st.book(r.Exchange, r.Pair, e.Position, b)
	if bk == nil {
		return
	}
	st.pnlOrder[r.OrderID] = pnlOrder{bk, r.Side == domain.Sell}
	st.open[r.OrderID] = &openOrder{amount: r.Amount}
}

// emitPair queues the pair's inventory row and its pnl_overview9 pair row.
func (st *state) emitPair(bk *book, pos uint64, b *batch) {
	bk.pos = pos
	if b == nil {
		return
	}
	b.books[bk] = struct{}{}
	b.pairs[bk.key] = pairRow{pairKey: bk.key, LotsQty: bk.fold.Lots().Qty(), LotsCost: bk.fold.Lots().Cost(),
		LastPrice: bk.fold.LastPrice(), Balance: bk.fold.Position(), Position: pos}
}

// applyFill folds the fill in its pair (at once when it comes in trade
// order, else before the next flush) and queues its rows.
func (st *state) applyFill(id int64, e *domain.Event, f *domain.OrderFilled, b *batch) {
	po := st.pnlOrder[id]
	bk := po.bk
	if bk == nil || f.Quantity.Sign() <= 0 || f.Price.IsNeg() {
		return // the Ledger refuses these fills too
	}
	st.addFill(bk, id, false, po.sell, domain.FillTime(e, f), e, f, b) // trade time: the exchange's, as the Ledger uses
}

// addFill folds a fill of order id (0 and external: a trade the service
// did not place) on bk at trade time t, recorded by e, and queues its
// rows.
func (st *state) addFill(bk *book, id int64, external, sell bool, t int64, e *domain.Event, f *domain.OrderFilled, b *batch) {
	ff := fold.Fill{Key: fold.Key{Time: t, Pos: e.Position}, Order: id, Side: domain.Buy, Price: f.Price, Qty: f.Quantity,
		Fee: f.Fee, FeeAsset: f.FeeAsset}
	if sell {
		ff.Side = domain.Sell
	}
	bk.addFillID(e.Position, f.FillID)
	st.folds.Rates.ObserveFill(bk.quote, bk.base, t, e.Position, f.Price)
	st.observed(bk.quote, bk.base, e.Position, b)
	st.reporting(e.Position, b)
	oo, isOpen := st.open[id]
	isOpen = isOpen && !external
	if isOpen {
		oo.filled = oo.filled.Add(f.Quantity)
		if oo.amount.IsPos() && oo.filled.Cmp(oo.amount) >= 0 {
			delete(st.open, id)
		}
	}
	if !bk.fold.InOrder(ff.Key) {
		bk.fills.Insert(ff, fold.PendingOut(&ff))
		st.folds.Late(bk.index, ff.Key)
	} else {
		var o fold.Order
		if isOpen {
			o = oo.fold
		} else if !external { // a fill of an order closed meanwhile: its figures from its fills
			o = fold.OrderBefore(&bk.fills, id, ff.Key)
		}
		var r fold.Result
		bk.fold.Next(&ff, &o, &st.folds.Rates, &r)
		if isOpen {
			oo.fold = o
		}
		i := bk.fills.Insert(ff, r.Out())
		st.emitFill(bk, i, &ff, &r, e.Position, b)
		if r.Closing && !external {
			st.emitOrderPnl(bk, id, &o, e.Position, b)
		}
		agg := r.Agg(&ff)
		for _, to := range st.folds.Targets(bk.quote) {
			st.convOf(bk, to).Add(&st.folds.Rates, bk.quote, to, ff.Key, &agg, r.Unique)
			st.emitConv(bk, to, fold.SlotOf(t), e.Position, b)
			if r.Unique.From != r.Unique.To {
				st.emitConv(bk, to, r.Unique.Slot, e.Position, b)
			}
		}
		bk.series.Add(&agg)
		bk.series.Move(r.Unique)
		st.emitSlot(bk, fold.SlotOf(t), e.Position, b)
		if r.Unique.From != r.Unique.To {
			st.emitSlot(bk, r.Unique.Slot, e.Position, b)
		}
		if r.Fee.Third && !f.Fee.IsZero() {
			st.folds.Valued(bk.index)
		}
	}
	st.emitPrice(bk, t, e.Position, b)
	st.folds.RatePoint(ff.Key, bk.index)
	st.emitPair(bk, e.Position, b)
}

// emitFill queues fill i of bk's rows: the fill, and its fee when it was
// charged in a third asset.
func (st *state) emitFill(bk *book, i int, f *fold.Fill, r *fold.Result, pos uint64, b *batch) {
	if b == nil {
		return
	}
	b.fill(fillRow{
		Exchange: bk.key.Exchange, Pair: bk.key.Pair, TimeMs: f.Time, OrderID: f.Order, FillID: bk.fillID(f.Pos),
		Side: string(f.Side), Price: f.Price, Quantity: f.Qty,
		Value: r.Value, Fee: r.FillPnl.Fee, FeeAsset: f.FeeAsset,
		Pnl: r.Pnl, Cost: r.LotCost, Unmatched: r.Unmatched,
		UnmVal: r.UnmatchedValue, Net: r.Net, Closing: b2u(r.Closing), First: b2u(r.First),
		Position: f.Pos, Version: pos,
	})
	if r.Fee.Third {
		fr := feeRow{pairKey: bk.key, timeMs: f.Time, orderID: f.Order, asset: r.Fee.Asset, amount: r.Fee.Amount, quote: r.Fee.Quote,
			rate: r.Fee.Rate, rateMs: r.Fee.RateTime, position: f.Pos, version: pos}
		if r.Fee.Valued {
			fr.valued = 1
		}
		b.fee(fr)
	}
}

// emitOrderPnl queues a sell order's row of realized pnl.
func (st *state) emitOrderPnl(bk *book, id int64, o *fold.Order, pos uint64, b *batch) {
	if b == nil || !o.Closed {
		return
	}
	b.orderPnl[id] = orderPnlRow{pairKey: bk.key, OrderID: id, FirstCloseMs: o.CloseT, Pnl: o.Pnl, Position: pos}
}

// emitSlot sets the hour of bk's slot (pnl_overview9's figures, summed
// from its slots) and queues the rows of the slot: its aggregate, its hour
// and its UTC day summed from its slots.
//
// Without a batch (the start's replay of events whose rows are stored) the
// hour is only noted as pending and summed once a fill of another hour
// comes, or before the book's next rows: a replay's fills come an hour
// after another, so each hour is summed once instead of at every fill.
// The hours are read only for books with rows in a batch
// (batch.prepare), whose pending hour is summed by then.
func (st *state) emitSlot(bk *book, slot int64, pos uint64, b *batch) {
	h := pnlread.FloorDiv(slot, 4)
	if bk.pending && bk.pendingHour != h {
		bk.sumHour(bk.pendingHour, bk.pendingPos)
	}
	if b == nil {
		bk.pending, bk.pendingHour, bk.pendingPos = true, h, pos
		return
	}
	bk.pending = false
	bk.sumHour(h, pos)
	s := bk.series.Slots
	b.hours[hourKey{bk, h}] = struct{}{}
	if i := bk.series.SlotIndex(slot); i >= 0 {
		b.buckets[bucketKey{bk.key, slot}] = bucketRow{bucketKey: bucketKey{bk.key, slot}, PnlAgg: s[i].PnlAgg, Position: pos}
	}
	k := dailyKey{Exchange: bk.key.Exchange, Pair: bk.key.Pair, Day: pnlread.FloorDiv(slot, 96)}
	b.daily[k] = dailyRow{dailyKey: k, Position: pos} // its figures summed at the flush (batch.prepare)
	b.dayBooks[k] = bk
}

// sumHour sets bk's UTC hour h from its slots; pos is the position of
// the last event that changed it.
func (bk *book) sumHour(h int64, pos uint64) {
	hr := &hourRow{Position: pos}
	s := bk.series.Slots
	for i := sort.Search(len(s), func(i int) bool { return s[i].Slot >= 4*h }); i < len(s) && s[i].Slot < 4*h+4; i++ {
		a := &s[i].PnlAgg
		hr.Trades += a.Trades
		hr.Volume, hr.Pnl = hr.Volume.Add(a.Volume), hr.Pnl.Add(a.Pnl)
		hr.Unmatched, hr.Invested = hr.Unmatched.Add(a.Unmatched), hr.Invested.Add(a.Invested)
	}
	bk.hours[h] = hr
}

// day returns bk's figures of UTC day d (its slots summed).
func (bk *book) day(d *dailyRow) {
	s := bk.series.Slots
	for i := sort.Search(len(s), func(i int) bool { return s[i].Slot >= d.Day*96 }); i < len(s) && s[i].Slot < (d.Day+1)*96; i++ {
		a := &s[i].PnlAgg
		d.Trades += uint32(a.Trades)
		d.Buys += uint32(a.Buys)
		d.Sells += uint32(a.Sells)
		d.Wins += uint32(a.Wins)
		d.Losses += uint32(a.Losses)
		d.Volume, d.Pnl, d.Fees, d.UnmVal = d.Volume.Add(a.Volume), d.Pnl.Add(a.Pnl), d.Fees.Add(a.Fees), d.UnmVal.Add(a.Unmatched)
	}
}

// emitPrice queues the price row of the slot of t: the price of the
// slot's last fill in trade-time order.
func (st *state) emitPrice(bk *book, t int64, pos uint64, b *batch) {
	if b == nil {
		return
	}
	slot := fold.SlotOf(t)
	j := bk.fills.Search(fold.Key{Time: (slot + 1) * fold.SlotMs})
	if j == 0 {
		return
	}
	f, _ := bk.fills.At(j - 1)
	k := priceKey{bk.key, slot}
	b.prices[k] = priceRow{priceKey: k, Price: f.Price, Position: pos}
}

func b2u(v bool) uint8 {
	if v {
		return 1
	}
	return 0
}
