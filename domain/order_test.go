package domain_test

import (
	"slices"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

var orderClock = domain.NewManualClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))

func ordDec(s string) decimal.Decimal { return decimal.MustDecimal(s) }

// stream numbers events as a store would.
func ordStream(evs ...domain.Event) []domain.Event {
	for i := range evs {
		evs[i].Version = int64(i)
	}
	return evs
}

func ordRequested(kind domain.OrderKind, side domain.Side, amount, price, stop, limit string) domain.Event {
	p := domain.OrderRequested{OrderID: 7, Exchange: "binance", Pair: "USDT-BTC", Side: side, Kind: kind, Amount: ordDec(amount), ClientOrderID: "tlx"}
	if price != "" {
		p.Price = ordDec(price)
	}
	if stop != "" {
		p.StopPrice = ordDec(stop)
	}
	if limit != "" {
		p.LimitPrice = ordDec(limit)
	}
	return domain.NewEvent(orderClock, domain.TypeOrderRequested, p)
}

func TestOrderFoldLifecycle(t *testing.T) {
	evs := ordStream(
		ordRequested(domain.KindLimit, domain.Buy, "2", "100", "", ""),
		domain.NewEvent(orderClock, domain.TypeOrderAccepted, domain.OrderAccepted{ExchangeOrderID: "X1"}),
		domain.NewEvent(orderClock, domain.TypeOrderFilled, domain.OrderFilled{FillID: "f1", Price: ordDec("100"), Quantity: ordDec("0.5"), Fee: ordDec("0.05")}),
	)
	o, err := foldOrder(evs)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := o.State, domain.OrderStateAccepted; got != want {
		t.Fatalf("state=%v, want %v", got, want)
	}
	if got, want := o.Remaining(), ordDec("1.5"); got != want {
		t.Fatalf("remaining=%v, want %v", got, want)
	}
	// The same fill again is no event; another fill completes the order.
	if evs := o.DecideFill(orderClock, domain.Fill{ID: "f1", Quantity: ordDec("0.5")}); len(evs) != 0 {
		t.Fatalf("duplicate fill decided %d events", len(evs))
	}
	fill := o.DecideFill(orderClock, domain.Fill{ID: "f2", Price: ordDec("100"), Quantity: ordDec("1.5"), Seq: 9})
	if len(fill) != 1 || fill[0].ID != domain.DerivedEventID("binance", "fill", "f2") {
		t.Fatalf("fill events=%v, want one with a derived id", fill)
	}
	fill[0].Version = 3
	if err := o.Apply(&fill[0]); err != nil {
		t.Fatal(err)
	}
	if err := o.Apply(&fill[0]); err != nil { // applying twice is harmless
		t.Fatal(err)
	}
	if got, want := o.State, domain.OrderStateFilled; got != want {
		t.Fatalf("state=%v, want %v", got, want)
	}
	if got, want := o.Filled, ordDec("2"); got != want {
		t.Fatalf("filled=%v, want %v", got, want)
	}
	if _, err := o.DecideCancel(orderClock, ""); domain.ErrorCode(err) != domain.ECONFLICT {
		t.Fatalf("cancel filled: err=%v, want ECONFLICT", err)
	}
}

func TestDecideCancel(t *testing.T) {
	empty := domain.NewOrder()
	if _, err := empty.DecideCancel(orderClock, ""); domain.ErrorCode(err) != domain.ENOTFOUND {
		t.Fatalf("cancel unknown: err=%v, want ENOTFOUND", err)
	}
	cases := []struct {
		name  string
		kind  domain.OrderKind
		types []string
	}{
		{"limit needs the exchange", domain.KindLimit, []string{domain.TypeOrderCancelRequested}},
		{"untriggered stop is cancelled at once", domain.KindStopLimit, []string{domain.TypeOrderCancelRequested, domain.TypeOrderCancelled}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, err := foldOrder(ordStream(ordRequested(c.kind, domain.Sell, "1", "100", "90", "89"),
				domain.NewEvent(orderClock, domain.TypeOrderAccepted, domain.OrderAccepted{})))
			if err != nil {
				t.Fatal(err)
			}
			evs, err := o.DecideCancel(orderClock, "user")
			if err != nil {
				t.Fatal(err)
			}
			if got, want := ordTypes(evs), c.types; !slices.Equal(got, want) {
				t.Fatalf("events=%v, want %v", got, want)
			}
		})
	}
}

func TestStopReached(t *testing.T) {
	cases := []struct {
		side        domain.Side
		stop, price string
		want        bool
	}{
		{domain.Buy, "110", "109.99", false},
		{domain.Buy, "110", "110", true},
		{domain.Buy, "110", "120", true},
		{domain.Sell, "90", "90.01", false},
		{domain.Sell, "90", "90", true},
		{domain.Sell, "90", "80", true},
	}
	for _, c := range cases {
		if got := domain.StopReached(c.side, ordDec(c.stop), ordDec(c.price)); got != c.want {
			t.Errorf("StopReached(%s, stop %s, price %s)=%v, want %v", c.side, c.stop, c.price, got, c.want)
		}
	}
}

func TestTrail(t *testing.T) {
	// Each case drives one trailing stop through a price path; extreme 0
	// means not armed yet.
	//
	// The SDK's buy: price 50000, stopPrice 49900 → activation 49900,
	// distance 100. It waits through 50000 and 49950, arms at 49900 (stop
	// 50000), follows the low to 49700 (stop 49800), ignores the bounce to
	// 49750 and fires on the recovery to 49800.
	// The SDK's sell: price 52500, stopPrice 52550 → activation 52550,
	// distance 50. It waits through 52500, arms at 52600 (stop 52550),
	// follows the high to 52700 (stop 52650) and fires at 52650.
	// Today's buy form: price 100 (the market), stopPrice 105: activation
	// 100, distance 5. Waits at 101, arms at 90 (stop 95), bounces to 94,
	// 88 (stop 93), fires at 93.
	// Today's sell form: price 100, stopPrice 95: arms at 100 (stop 95),
	// rises to 110 (stop 105), dips to 106, fires at 105.
	type step struct {
		price, stop, extreme string
		moved, fire, armed   bool
	}
	cases := []struct {
		name            string
		side            domain.Side
		reference, stop string
		steps           []step
	}{
		{"sdk buy", domain.Buy, "50000", "49900", []step{
			{"50000", "49900", "0", false, false, false},
			{"49950", "49900", "0", false, false, false},
			{"49900", "50000", "49900", true, false, true},
			{"49700", "49800", "49700", true, false, true},
			{"49750", "49800", "49700", false, false, true},
			{"49800", "49800", "49700", false, true, true},
		}},
		{"sdk sell", domain.Sell, "52500", "52550", []step{
			{"52500", "52550", "0", false, false, false},
			{"52600", "52550", "52600", true, false, true},
			{"52700", "52650", "52700", true, false, true},
			{"52660", "52650", "52700", false, false, true},
			{"52650", "52650", "52700", false, true, true},
		}},
		{"buy, stop above price", domain.Buy, "100", "105", []step{
			{"101", "105", "0", false, false, false},
			{"90", "95", "90", true, false, true},
			{"94", "95", "90", false, false, true},
			{"88", "93", "88", true, false, true},
			{"93", "93", "88", false, true, true},
		}},
		{"sell, stop below price", domain.Sell, "100", "95", []step{
			{"99", "95", "0", false, false, false},
			{"100", "95", "100", true, false, true},
			{"110", "105", "110", true, false, true},
			{"106", "105", "110", false, false, true},
			{"105", "105", "110", false, true, true},
		}},
		{"equal prices never arm", domain.Buy, "100", "100", []step{
			{"90", "100", "0", false, false, false},
		}},
	}
	for _, c := range cases {
		stop, extreme := ordDec(c.stop), decimal.Zero
		for i, s := range c.steps {
			m := domain.Trail(c.side, ordDec(c.reference), stop, extreme, ordDec(s.price))
			if m.Moved != s.moved || m.Fire != s.fire || m.Armed != s.armed || m.Stop != ordDec(s.stop) || m.Extreme != ordDec(s.extreme) {
				t.Fatalf("%s step %d price %s: got %+v, want stop %s extreme %s moved %v fire %v armed %v", c.name, i, s.price, m, s.stop, s.extreme, s.moved, s.fire, s.armed)
			}
			stop, extreme = m.Stop, m.Extreme
		}
	}
}

func TestDecideTickTrailingThenFire(t *testing.T) {
	o, err := foldOrder(ordStream(ordRequested(domain.KindTrailingStop, domain.Sell, "1", "100", "95", ""),
		domain.NewEvent(orderClock, domain.TypeOrderAccepted, domain.OrderAccepted{})))
	if err != nil {
		t.Fatal(err)
	}
	apply := func(evs []domain.Event) {
		for i := range evs {
			evs[i].Version = o.Version + 1
			if err := o.Apply(&evs[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	evs := o.DecideTick(orderClock, ordDec("110"), ordDec("109.9"), ordDec("110.1"))
	if got, want := ordTypes(evs), []string{domain.TypeTrailingStopMoved}; !slices.Equal(got, want) {
		t.Fatalf("rise: %v, want %v", got, want)
	}
	apply(evs)
	if got, want := o.StopPrice, ordDec("105"); got != want {
		t.Fatalf("stop=%v, want %v", got, want)
	}
	evs = o.DecideTick(orderClock, ordDec("104"), ordDec("103.9"), ordDec("104.1"))
	if got, want := ordTypes(evs), []string{domain.TypeStopTriggered}; !slices.Equal(got, want) {
		t.Fatalf("decline: %v, want %v", got, want)
	}
	var st domain.StopTriggered
	if err := evs[0].Decode(&st); err != nil {
		t.Fatal(err)
	}
	if st.LimitPrice != ordDec("103.9") || st.MarketPrice != ordDec("104") {
		t.Fatalf("trigger=%+v, want limit at the bid 103.9, market 104", st)
	}
	apply(evs)
	if o.State != domain.OrderStateTriggered || len(o.DecideTick(orderClock, ordDec("50"), decimal.Zero, decimal.Zero)) != 0 {
		t.Fatalf("a triggered stop must not decide again (state %v)", o.State)
	}
}

func TestOcoLegRule(t *testing.T) {
	c := domain.NewOco()
	placed := domain.NewEvent(orderClock, domain.TypeOcoPlaced, domain.OcoPlaced{OcoID: 3, LimitOrderID: 4, StopOrderID: 5})
	if err := c.Apply(&placed); err != nil {
		t.Fatal(err)
	}
	evs := c.DecideLegExecuted(orderClock, 5, false)
	var p domain.OcoLegCancelled
	if len(evs) != 1 || evs[0].Decode(&p) != nil || p.OrderID != 4 || p.FilledLegID != 5 {
		t.Fatalf("stop leg executed: %v (%+v), want OcoLegCancelled of 4", evs, p)
	}
	evs[0].Version = 1
	if err := c.Apply(&evs[0]); err != nil {
		t.Fatal(err)
	}
	if len(c.DecideLegExecuted(orderClock, 5, false)) != 0 || len(c.DecideLegExecuted(orderClock, 4, false)) != 0 {
		t.Fatal("a cancelled leg must not be cancelled again, nor cancel the other")
	}
	fresh := domain.NewOco()
	_ = fresh.Apply(&placed)
	if len(fresh.DecideLegExecuted(orderClock, 4, true)) != 0 {
		t.Fatal("a finished other leg needs no cancel")
	}
	if len(fresh.DecideLegExecuted(orderClock, 99, false)) != 0 {
		t.Fatal("an order that is no leg decides nothing")
	}
}

func TestClientOrderIDDerivedFromEvent(t *testing.T) {
	id := "01890a5d-ac96-774b-bcce-b302099a8057"
	if got, want := domain.ClientOrderID(id), "tl01890a5dac96774bbcceb302099a8057"; got != want {
		t.Fatalf("ClientOrderID=%q, want %q", got, want)
	}
	first, again, joined := domain.DerivedEventID("a", "b"), domain.DerivedEventID("a", "b"), domain.DerivedEventID("ab")
	if first != again || first == joined {
		t.Fatal("DerivedEventID must be a function of its parts, with separators")
	}
}

func ordTypes(evs []domain.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

// foldOrder applies a stream's events, in order, to a new aggregate.
func foldOrder(events []domain.Event) (domain.Order, error) {
	o := domain.NewOrder()
	for i := range events {
		if err := o.Apply(&events[i]); err != nil {
			return o, err
		}
	}
	return o, nil
}
