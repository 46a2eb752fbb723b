package paper

import (
	"sort"
	"strconv"
	"strings"

	"github.com/tradeledger/tradeledger/domain"
)

// The simulator keeps its state across a restart by deriving it from the
// log (its fills and orders are events already): registered as a
// projection, it follows the order streams during the replay and, when a
// simulated exchange is first used, starts it from its settings' balances
// plus every paper fill recorded for it, with the orders the log holds open
// on it resting again (their funds on order). Once an exchange is in use,
// the simulator itself is the truth and its events are no longer followed.
//
// A paper fill is recognised by its id (<exchange>-<digits>, as nextFill
// writes it), so fills of a real connector and imported history never
// move simulated balances. Imported orders (actor import) are ignored.

type restoreState struct {
	orders map[string]*domain.Order             // unfinished order streams
	deltas map[string]map[string]domain.Decimal // exchange → asset → Σ fills
	maxSeq map[string]uint64                    // exchange → last paper fill Seq
	maxID  map[string]int64                     // exchange → highest paper order id
}

// Name implements the projection contract (projections.Projection).
func (s *Simulator) Name() string { return "paper" }

// Apply follows order events so that an account first used after a
// restart starts from the log (restoreInto); events of exchanges already
// in use are ignored.
func (s *Simulator) Apply(e *domain.Event) error {
	if !strings.HasPrefix(e.Stream, "order-") {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.restore == nil {
		s.restore = &restoreState{orders: map[string]*domain.Order{}, deltas: map[string]map[string]domain.Decimal{},
			maxSeq: map[string]uint64{}, maxID: map[string]int64{}}
	}
	r := s.restore
	o := r.orders[e.Stream]
	if e.Type == domain.TypeOrderRequested {
		if e.Actor == domain.ActorImport {
			return nil
		}
		n := domain.NewOrder()
		o = &n
	}
	if o == nil {
		return nil // an imported or finished order
	}
	if _, live := s.accounts[o.Exchange]; live && e.Type != domain.TypeOrderRequested {
		delete(r.orders, e.Stream)
		return nil
	}
	if err := o.Apply(e); err != nil {
		return err
	}
	if e.Type == domain.TypeOrderRequested {
		if _, live := s.accounts[o.Exchange]; live {
			return nil
		}
		r.orders[e.Stream] = o
	}
	if e.Type == domain.TypeOrderFilled {
		var p domain.OrderFilled
		if err := e.Decode(&p); err != nil {
			return err
		}
		r.fill(o, p)
	}
	if e.Type == domain.TypeOrderAccepted {
		if id, err := strconv.ParseInt(o.ExchangeOrderID, 10, 64); err == nil && id > r.maxID[o.Exchange] {
			r.maxID[o.Exchange] = id
		}
	}
	if o.State.Done() {
		delete(r.orders, e.Stream)
	}
	return nil
}

// fill counts a paper fill of o into its exchange's balance deltas and
// fill cursor; other fills (a real connector's, imported ones) are not
// the simulator's.
func (r *restoreState) fill(o *domain.Order, p domain.OrderFilled) {
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
		d = map[string]domain.Decimal{}
		r.deltas[o.Exchange] = d
	}
	notional := p.Quantity.Mul(p.Price)
	if o.Side == domain.Buy {
		d[base] = d[base].Add(p.Quantity)
		d[quote] = d[quote].Sub(notional.Add(p.Fee))
	} else {
		d[base] = d[base].Sub(p.Quantity)
		d[quote] = d[quote].Add(notional.Sub(p.Fee))
	}
}

func paperFill(exchange, id string) bool {
	rest, ok := strings.CutPrefix(id, exchange+"-")
	if !ok || rest == "" {
		return false
	}
	_, err := strconv.ParseUint(rest, 10, 64)
	return err == nil
}

// restoreInto starts a from the log: balances moved by its paper fills and
// its open orders resting again. s.mu is held; a is not shared yet.
func (s *Simulator) restoreInto(a *Account) {
	r := s.restore
	if r == nil {
		return
	}
	for asset, d := range r.deltas[a.name] {
		b := a.bal(asset)
		b.available = b.available.Add(d)
	}
	delete(r.deltas, a.name)
	// Ids and fill sequences continue past those in the log, whatever the
	// clock says.
	if seq := r.maxSeq[a.name]; seq > a.fillBase {
		a.fillBase = seq
	}
	if id := r.maxID[a.name]; id > a.nextID {
		a.nextID = id
	}
	var open []*domain.Order
	for stream, o := range r.orders {
		if o.Exchange == a.name {
			delete(r.orders, stream)
			open = append(open, o)
		}
	}
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
