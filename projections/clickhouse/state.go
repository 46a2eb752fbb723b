package clickhouse

import (
	"github.com/tradeledger/tradeledger/domain"
)

// state is what the sink must remember of the log to turn the next event
// into rows: the orders (through the domain's order fold), each pair's lots
// (through domain.Lots, the same lot matching as the in-memory Ledger),
// the running daily aggregates, and the bookkeeping the PNL reads need
// (open orders' realized pnl, strategies, snapshot numbers). It is rebuilt
// at every start by replaying the log, so the rows it produces are a
// function of the log alone: writing them again gives the same rows.
//
// The PNL side follows projections.Ledger's rules event for event (an
// order opens at OrderRequested and closes when filled, cancelled,
// rejected or expired; a late fill of a closed order counts on its own; a
// fill with quantity ≤ 0 or a negative price is refused), so that reads
// from ClickHouse equal the in-memory ones.
type state struct {
	method   domain.PnlMethod
	orders   map[int64]*order
	books    map[pairKey]*book
	pnlOrder map[int64]*book // order id → its pair's book, for every order requested
	sells    map[int64]bool
	open     map[int64]*openOrder
	daily    map[dailyKey]*dailyRow
	buckets  map[bucketKey]*bucketRow
	strat    map[pairKey]string
	snaps    map[string]uint64 // exchange → snapshots so far
	rates    domain.RateBook   // as the Ledger's: fee valuation and conversions (conv.go)
	conv     map[convKey]*convState
	report   string // the reporting currency last written
}

// order is an order's fold and what the orders table shows beside it.
type order struct {
	domain.Order
	created int64  // time of OrderRequested, ms
	actor   string // who requested it
	fills   uint32
}

// book is one pair's inventory.
type book struct {
	key               pairKey
	quote, base       string
	lots              domain.Lots
	lastPrice, posQty domain.Decimal
	total             bucketRow          // every fill's aggregate (pnl_overview7's pair row)
	hours             map[int64]*hourRow // daily figures per UTC hour (pnl_overview7's day and hour rows)
	pos               uint64             // position of the last event that changed the pair
}

// hourKey is one hour of a book.
type hourKey struct {
	bk   *book
	hour int64
}

// openOrder is what is kept of an order while it is open.
type openOrder struct {
	amount, filled domain.Decimal
	pnl            domain.Decimal
	fills          int32
	firstClose     int64
	closed         bool  // has had a closing fill
	uniqueSlot     int64 // slot where the order counts as a unique win/loss
	uniqueSign     int8  // 0: not counted yet; else the counted sign + 2
}

func newState(method domain.PnlMethod) *state {
	return &state{
		method:   method,
		orders:   make(map[int64]*order),
		books:    make(map[pairKey]*book),
		pnlOrder: make(map[int64]*book),
		sells:    make(map[int64]bool),
		open:     make(map[int64]*openOrder),
		daily:    make(map[dailyKey]*dailyRow),
		buckets:  make(map[bucketKey]*bucketRow),
		strat:    make(map[pairKey]string),
		snaps:    make(map[string]uint64),
		conv:     make(map[convKey]*convState),
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
		st.rates.Observe(r.Quote, r.Base, e.Time, r.Rate)
		st.observed(r.Quote, r.Base, e.Position, b)
	case domain.TypePairAdded, domain.TypePairRemoved, domain.TypeConfigReplaced:
		return st.applyConfig(e, b)
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
		st.rates.SetReporting(c.Reporting)
		st.rates.FeeMaxAge = c.FeeRateMaxAge
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
	id, ok := domain.OrderStreamID(e.Stream)
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

// requested registers the order's pair book and opens the order.
func (st *state) requested(r *domain.OrderRequested, e *domain.Event, b *batch) {
	if r.Side != domain.Buy && r.Side != domain.Sell {
		return
	}
	k := pairKey{r.Exchange, r.Pair}
	bk := st.books[k]
	if bk == nil {
		quote, base, err := domain.SplitPair(r.Pair)
		if err != nil {
			return
		}
		bk = &book{key: k, quote: quote, base: base, hours: make(map[int64]*hourRow)}
		bk.total.pairKey = k
		bk.lots.Method = st.method
		st.books[k] = bk
		st.emitPair(bk, e, b)
	}
	st.pnlOrder[r.OrderID] = bk
	st.sells[r.OrderID] = r.Side == domain.Sell
	st.open[r.OrderID] = &openOrder{amount: r.Amount}
}

func (st *state) emitPair(bk *book, e *domain.Event, b *batch) {
	bk.pos = e.Position
	if b == nil {
		return
	}
	b.books[bk] = struct{}{}
	b.pairs[bk.key] = pairRow{pairKey: bk.key, LotsQty: bk.lots.Qty(), LotsCost: bk.lots.Cost(),
		LastPrice: bk.lastPrice, Balance: bk.posQty, Position: e.Position}
}

// applyFill runs the fill through the pair's lots and the aggregates.
func (st *state) applyFill(id int64, e *domain.Event, f *domain.OrderFilled, b *batch) {
	bk := st.pnlOrder[id]
	if bk == nil || f.Quantity.Sign() <= 0 || f.Price.IsNeg() {
		return // the Ledger refuses these fills too
	}
	sell := st.sells[id]
	side := domain.Buy
	if sell {
		side = domain.Sell
	}
	oo, isOpen := st.open[id]
	if !isOpen { // a late fill of an order already closed counts on its own
		oo = &openOrder{}
	}
	t := domain.FillTime(e, f) // trade time: the exchange's, as the Ledger uses
	fv := st.rates.Fill(bk.quote, bk.base, t, f.Price, f.Fee, f.FeeAsset)
	st.observed(bk.quote, bk.base, e.Position, b)
	st.reporting(e.Position, b)
	if fv.Third && b != nil {
		fr := feeRow{pairKey: bk.key, timeMs: t, orderID: id, asset: fv.Asset, amount: fv.Amount, quote: fv.Quote,
			rate: fv.Rate, rateMs: fv.RateTime, position: e.Position}
		if fv.Valued {
			fr.valued = 1
		}
		b.fees = append(b.fees, fr)
	}
	r := bk.lots.ApplyFee(side, f.Price, f.Quantity, &fv)
	oo.fills++
	oo.filled = oo.filled.Add(f.Quantity)
	if isOpen && oo.amount.IsPos() && oo.filled.Cmp(oo.amount) >= 0 {
		delete(st.open, id)
	}
	net := fv.Net(side, r.Value)
	if sell {
		bk.posQty = bk.posQty.Sub(f.Quantity)
	} else {
		bk.posQty = bk.posQty.Add(r.Matched)
	}
	bk.lastPrice = f.Price
	closing := sell && r.Matched.IsPos()
	fx := domain.PnlFill{T: t, Sell: sell, Closing: closing, First: oo.fills == 1, Sign: int8(r.Pnl.Sign()), Value: r.Value,
		Net: net, Fee: r.Fee, Pnl: r.Pnl, Unmatched: r.UnmatchedValue}
	uFrom, uTo := int8(2), int8(2)
	if closing {
		fx.Invested = r.LotCost
		oo.pnl = oo.pnl.Add(r.Pnl)
		if !oo.closed {
			oo.closed, oo.firstClose = true, t
		}
		sign := int8(oo.pnl.Sign())
		if oo.uniqueSign == 0 {
			oo.uniqueSlot = slotOf(t)
			uTo = sign
		} else if old := oo.uniqueSign - 2; old != sign {
			uFrom, uTo = old, sign
		}
		oo.uniqueSign = sign + 2
	}
	st.convert(bk, &fx, uFrom, uTo, oo.uniqueSlot, e.Position, b) // before bk's own buckets: see convert
	bkt := st.bucket(bk.key, slotOf(t))
	bkt.Add(&fx)
	bkt.Position = e.Position
	var ubkt *bucketRow
	if uFrom != uTo {
		ubkt = st.bucket(bk.key, oo.uniqueSlot)
		ubkt.Unique(uFrom, uTo)
		ubkt.Position = e.Position
	}
	bk.total.Add(&fx)
	if uFrom != uTo {
		bk.total.Unique(uFrom, uTo)
	}
	bk.total.Position = e.Position
	h := domain.FloorDiv(slotOf(t), 4)
	hr := bk.hours[h]
	if hr == nil {
		hr = &hourRow{}
		bk.hours[h] = hr
	}
	hr.add(&fx)
	hr.Position = e.Position
	if b != nil {
		b.hours[hourKey{bk, h}] = struct{}{}
		b.buckets[bkt.bucketKey] = *bkt
		if ubkt != nil {
			b.buckets[ubkt.bucketKey] = *ubkt
		}
	}

	dk := dailyKey{Exchange: bk.key.Exchange, Pair: bk.key.Pair, Day: dayOf(t)}
	d := st.daily[dk]
	if d == nil {
		d = &dailyRow{dailyKey: dk}
		st.daily[dk] = d
	}
	d.Trades++
	if sell {
		d.Sells++
	} else {
		d.Buys++
	}
	if closing {
		switch r.Pnl.Sign() {
		case 1:
			d.Wins++
		case -1:
			d.Losses++
		}
	}
	d.Volume = d.Volume.Add(r.Value)
	d.Pnl = d.Pnl.Add(r.Pnl)
	d.Fees = d.Fees.Add(r.Fee)
	d.UnmVal = d.UnmVal.Add(r.UnmatchedValue)
	d.Position = e.Position
	st.emitPair(bk, e, b)
	if b == nil {
		return
	}
	b.daily[dk] = *d
	b.prices[priceKey{bk.key, slotOf(t)}] = priceRow{priceKey: priceKey{bk.key, slotOf(t)}, Price: f.Price, Position: e.Position}
	if closing {
		k := orderPnlKey{OrderID: id, FirstCloseMs: oo.firstClose}
		b.orderPnl[k] = orderPnlRow{pairKey: bk.key, orderPnlKey: k, Pnl: oo.pnl, Position: e.Position}
	}
	b.fills = append(b.fills, fillRow{
		Exchange: bk.key.Exchange, Pair: bk.key.Pair, TimeMs: t, OrderID: id, FillID: f.FillID,
		Side: string(side), Price: f.Price, Quantity: f.Quantity,
		Value: r.Value, Fee: r.Fee, FeeAsset: f.FeeAsset,
		Pnl: r.Pnl, Cost: r.LotCost, Unmatched: r.Unmatched,
		UnmVal: r.UnmatchedValue, Net: net, Closing: b2u(closing), First: b2u(oo.fills == 1),
		Position: e.Position,
	})
}

// bucket returns the aggregate of key's slot, creating it.
func (st *state) bucket(key pairKey, slot int64) *bucketRow {
	k := bucketKey{key, slot}
	b := st.buckets[k]
	if b == nil {
		b = &bucketRow{bucketKey: k}
		st.buckets[k] = b
	}
	return b
}

func b2u(v bool) uint8 {
	if v {
		return 1
	}
	return 0
}
