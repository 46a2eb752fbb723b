package paper

import (
	"sort"
	"strconv"
	"strings"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/streams"
)

// The simulator keeps its state across a restart by deriving it from the
// log (its fills and orders are events already): registered as a
// projection, it folds the order streams into what a simulated exchange
// needs to start again — each exchange's balances moved by its paper fills,
// its fill and order id cursors, and the orders the log holds open on it —
// and, when a simulated exchange is first used, starts it from its
// settings' balances plus that fold, with those orders resting again
// (their funds on order). Once an exchange is in use the simulator itself
// is the truth; the fold goes on, so that it is at every moment what a
// start would compute from the log, and a read-model snapshot can hold it.
//
// A paper fill is recognised by its id (<exchange>-<digits>, as nextFill
// writes it), so fills of a real connector and imported history never
// move simulated balances. Imported orders (actor import) are ignored.

type restoreState struct {
	orders streams.StreamMap[*domain.Order]      // unfinished order streams
	deltas map[string]map[string]decimal.Decimal // exchange → asset → Σ fills
	maxSeq map[string]uint64                     // exchange → last paper fill Seq
	maxID  map[string]int64                      // exchange → highest paper order id
	// history is each exchange's simulated activity but drifts
	// (activity.go), in log order: what its account lists.
	history map[string][]simActivity
	// free holds orders that left orders (finished, or of an exchange in
	// use), for the next order streams: a replay's orders open and finish
	// one after the other, so a few are reused instead of one allocated
	// per order.
	free []*domain.Order
}

// maxFree bounds restoreState.free.
const maxFree = 64

// newOrder returns an empty order aggregate, a reused one when it can.
func (r *restoreState) newOrder() *domain.Order {
	if n := len(r.free); n > 0 {
		o := r.free[n-1]
		r.free = r.free[:n-1]
		return o
	}
	o := domain.NewOrder()
	return &o
}

// recycle takes back an order nothing refers to any more.
func (r *restoreState) recycle(o *domain.Order) {
	if len(r.free) < maxFree {
		ids := o.FillIDs[:0]
		*o = domain.NewOrder()
		o.FillIDs = ids
		r.free = append(r.free, o)
	}
}

// Name implements the projection contract (projections.Projection).
func (s *Simulator) Name() string { return "paper" }

// Apply folds order events (restore.go's comment says into what) and
// the activity simulated on each exchange (activity.go).
func (s *Simulator) Apply(e *domain.Event) error {
	if _, ok := streams.OrderStreamID(e.Stream); !ok {
		if e.Type == domain.TypePaperActivity && strings.HasPrefix(e.Stream, "paper-") {
			s.mu.Lock()
			defer s.mu.Unlock()
			return s.applyActivity(e)
		}
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.restoreState()
	requested := e.Type == domain.TypeOrderRequested
	var o *domain.Order
	if requested {
		if e.Actor == domain.ActorImport {
			return nil
		}
		o = r.newOrder()
	} else if o, _ = r.orders.Get(e.Stream); o == nil {
		return nil // an imported or finished order
	}
	if err := o.Apply(e); err != nil {
		if requested {
			r.recycle(o)
		}
		return err
	}
	if requested {
		r.orders.Put(e.Stream, o)
	}
	switch e.Type {
	case domain.TypeOrderFilled:
		p, err := domain.Payload[domain.OrderFilled](e)
		if err != nil {
			return err
		}
		r.fill(o, p)
	case domain.TypeOrderAccepted:
		if id, ok := parseID(o.ExchangeOrderID); ok && id > r.maxID[o.Exchange] {
			r.maxID[o.Exchange] = id
		}
	}
	if o.State.Done() {
		r.orders.Delete(e.Stream)
		r.recycle(o)
	}
	return nil
}

// restoreState returns the fold, made on first use (s.mu held).
func (s *Simulator) restoreState() *restoreState {
	if s.restore == nil {
		s.restore = newRestoreState()
	}
	return s.restore
}

func newRestoreState() *restoreState {
	return &restoreState{orders: streams.NewStreamMap[*domain.Order](), deltas: map[string]map[string]decimal.Decimal{},
		maxSeq: map[string]uint64{}, maxID: map[string]int64{}, history: map[string][]simActivity{}}
}

// parseID is strconv.ParseInt(s, 10, 64) without the error's allocation
// for the ids that are not numbers (another exchange's, on a replay).
func parseID(s string) (int64, bool) {
	d := s
	if d != "" && (d[0] == '+' || d[0] == '-') {
		d = d[1:]
	}
	if !digits(d) {
		return 0, false
	}
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil
}

// digits reports whether s is one or more ASCII digits.
func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// fill counts a paper fill of o into its exchange's balance deltas and
// fill cursor; other fills (a real connector's, imported ones) are not
// the simulator's.
func (r *restoreState) fill(o *domain.Order, p *domain.OrderFilled) {
	if !paperFill(o.Exchange, p.FillID) {
		return
	}
	if p.Seq > r.maxSeq[o.Exchange] {
		r.maxSeq[o.Exchange] = p.Seq
	}
	quote, base, err := domain.SplitPair(o.Pair)
	if err != nil {
		return
	}
	d := r.deltas[o.Exchange]
	if d == nil {
		d = map[string]decimal.Decimal{}
		r.deltas[o.Exchange] = d
	}
	notional := p.Quantity.Mul(p.Price)
	if o.Side == domain.Buy {
		d[base] = d[base].Add(p.Quantity)
		d[quote] = d[quote].Sub(notional)
	} else {
		d[base] = d[base].Sub(p.Quantity)
		d[quote] = d[quote].Add(notional)
	}
	asset := p.FeeAsset // as Account.fill charged it
	if asset == "" {
		asset = quote
	}
	d[asset] = d[asset].Sub(p.Fee)
}

// paperFill reports whether id is a paper fill id of exchange:
// <exchange>-<digits> (digits that fit a uint64).
func paperFill(exchange, id string) bool {
	n := len(exchange)
	if len(id) < n+2 || id[n] != '-' || id[:n] != exchange {
		return false
	}
	rest := id[n+1:]
	if !digits(rest) {
		return false
	}
	_, err := strconv.ParseUint(rest, 10, 64)
	return err == nil
}

// restoreInto starts a from the log: balances moved by its paper fills and
// its open orders resting again. s.mu is held; a is not shared yet. The
// fold is read, not consumed.
func (s *Simulator) restoreInto(a *Account) {
	r := s.restore
	if r == nil {
		return
	}
	for asset, d := range r.deltas[a.name] {
		b := a.bal(asset)
		b.available = b.available.Add(d)
	}
	// Ids and fill sequences continue past those in the log, whatever the
	// clock says.
	if seq := r.maxSeq[a.name]; seq > a.fillBase {
		a.fillBase = seq
	}
	if id := r.maxID[a.name]; id > a.nextID {
		a.nextID = id
	}
	var open []*domain.Order
	r.orders.Each(func(_ int64, _ string, o *domain.Order) {
		if o.Exchange == a.name {
			open = append(open, o)
		}
	})
	sort.Slice(open, func(i, j int) bool { return open[i].OrderID < open[j].OrderID })
	for _, o := range open {
		a.restOpen(o)
	}
}

// restOpen rests again an order the log holds open on a, its funds on
// order; an order that never reached the exchange, a market order or
// one on a pair a does not list is not the simulator's to keep.
func (a *Account) restOpen(o *domain.Order) {
	if o.State != domain.OrderStateAccepted || !o.OnExchange() || o.ExchangeOrderID == "" || o.Kind == domain.KindMarket {
		return
	}
	m, ok := a.markets[o.Pair]
	if !ok {
		return
	}
	price := o.Price
	if o.Emulated() {
		price = o.LimitPrice
	}
	ro := &order{quote: m.quote, base: m.base, ExchangeOrder: domain.ExchangeOrder{
		ID: o.ExchangeOrderID, ClientOrderID: o.ClientOrderID, Pair: o.Pair, Side: o.Side, Kind: domain.KindLimit,
		Price: price, Amount: o.Amount, Filled: o.Filled, Status: domain.StatusOpen,
	}}
	left := o.Amount.Sub(o.Filled)
	asset, need := m.base, left
	if o.Side == domain.Buy {
		asset, need = m.quote, a.withFee(left.Mul(price))
	}
	b := a.bal(asset)
	b.available, b.onOrder = b.available.Sub(need), b.onOrder.Add(need)
	ro.reserved = need
	a.orders[ro.ID] = ro
	a.byClient[ro.ClientOrderID] = ro
	a.resting[o.Pair] = append(a.resting[o.Pair], ro)
	if id, err := strconv.ParseInt(ro.ID, 10, 64); err == nil && id > a.nextID {
		a.nextID = id
	}
}
