package domain_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// applied folds evs (numbered from the order's next version) into o.
func applied(t *testing.T, o *domain.Order, evs []domain.Event) {
	t.Helper()
	for i := range evs {
		evs[i].Version = o.Version + 1
		if err := o.Apply(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDecideRequestDerivesTheClientOrderID(t *testing.T) {
	req := domain.OrderRequest{Exchange: "binance", Pair: "USDT-BTC", Side: domain.Buy, Kind: domain.KindLimit,
		Amount: ordDec("1"), Price: ordDec("100"), IdempotencyKey: "k1"}
	o := domain.NewOrder()
	evs, err := o.DecideRequest(orderClock, req.Requested(7, 3, "fp"))
	if err != nil || len(evs) != 1 {
		t.Fatalf("new order: %v, %v", evs, err)
	}
	var p domain.OrderRequested
	if err := evs[0].Decode(&p); err != nil {
		t.Fatal(err)
	}
	if p.ClientOrderID != domain.ClientOrderID(evs[0].ID) || p.OrderID != 7 || p.OcoID != 3 || p.IdempotencyFingerprint != "fp" || p.Price.Cmp(ordDec("100")) != 0 {
		t.Fatalf("payload %+v of event %s", p, evs[0].ID)
	}
	applied(t, &o, evs)
	if _, err := o.DecideRequest(orderClock, req.Requested(7, 0, "")); domain.ErrorCode(err) != domain.ECONFLICT {
		t.Fatalf("an existing order requested again: %v, want ECONFLICT", err)
	}
	req.IdempotencyKey = ""
	if p := req.Requested(7, 0, "fp"); p.IdempotencyFingerprint != "" {
		t.Fatalf("a fingerprint without a key: %+v", p)
	}
}

func TestDecideHold(t *testing.T) {
	req := domain.OrderRequest{Exchange: "binance", Pair: "USDT-BTC", Side: domain.Sell, Kind: domain.KindStopLimit,
		Amount: ordDec("1"), StopPrice: ordDec("90"), LimitPrice: ordDec("89")}
	o := domain.NewOrder()
	evs, err := o.DecideHold(orderClock, req.Requested(8, 0, ""), "")
	if err != nil || !slices.Equal(ordTypes(evs), []string{domain.TypeOrderRequested, domain.TypeOrderAccepted}) {
		t.Fatalf("held: %v, %v", ordTypes(evs), err)
	}
	applied(t, &o, evs)
	if o.State != domain.OrderStateAccepted || o.OnExchange() {
		t.Fatalf("held order: %s, on exchange %v", o.State, o.OnExchange())
	}
	o = domain.NewOrder()
	evs, _ = o.DecideHold(orderClock, req.Requested(8, 0, ""), "insufficient funds")
	applied(t, &o, evs)
	if o.State != domain.OrderStateRejected || o.Reason != "insufficient funds" {
		t.Fatalf("refused hold: %s %q", o.State, o.Reason)
	}
}

func TestDecideExchangeAnswers(t *testing.T) {
	o := domain.NewOrder()
	if _, err := o.DecideAnswer(orderClock, domain.ExchangeOrder{ID: "X"}); domain.ErrorCode(err) != domain.ENOTFOUND {
		t.Fatalf("answer for no order: %v", err)
	}
	base := ordStream(ordRequested(domain.KindLimit, domain.Buy, "1", "100", "", ""))
	for _, c := range []struct {
		name   string
		decide func(o *domain.Order) ([]domain.Event, error)
		state  domain.OrderState
		reason string
		exID   string
	}{
		{"accepted", func(o *domain.Order) ([]domain.Event, error) {
			return o.DecideAnswer(orderClock, domain.ExchangeOrder{ID: "X9", Status: domain.StatusOpen})
		}, domain.OrderStateAccepted, "", "X9"},
		{"rejected by status", func(o *domain.Order) ([]domain.Event, error) {
			return o.DecideAnswer(orderClock, domain.ExchangeOrder{Status: domain.StatusRejected, Reason: "min notional"})
		}, domain.OrderStateRejected, "min notional", ""},
		{"rejected by error", func(o *domain.Order) ([]domain.Event, error) { return o.DecideRejected(orderClock, "bad lot") },
			domain.OrderStateRejected, "bad lot", ""},
		{"outcome unknown", func(o *domain.Order) ([]domain.Event, error) { return o.DecideOutcomeUnknown(orderClock, "timeout") },
			domain.OrderStateRequested, "", ""},
	} {
		o, err := foldOrder(append([]domain.Event(nil), base...))
		if err != nil {
			t.Fatal(err)
		}
		evs, err := c.decide(&o)
		if err != nil || len(evs) != 1 {
			t.Fatalf("%s: %v, %v", c.name, evs, err)
		}
		applied(t, &o, evs)
		if o.State != c.state || o.Reason != c.reason || o.ExchangeOrderID != c.exID {
			t.Fatalf("%s: state %s reason %q exchange id %q", c.name, o.State, o.Reason, o.ExchangeOrderID)
		}
	}
}

func TestDecideResendOnceThenExpire(t *testing.T) {
	o, err := foldOrder(ordStream(ordRequested(domain.KindLimit, domain.Buy, "1", "100", "", "")))
	if err != nil {
		t.Fatal(err)
	}
	evs, err := o.DecideResend(orderClock, "not found", 1)
	if err != nil || len(evs) != 1 {
		t.Fatalf("first resend: %v, %v", evs, err)
	}
	applied(t, &o, evs)
	if _, err := o.DecideResend(orderClock, "not found", 2); domain.ErrorCode(err) != domain.ECONFLICT {
		t.Fatalf("second resend: %v, want ECONFLICT", err)
	}
	evs = o.DecideExpire(orderClock, "never received")
	applied(t, &o, evs)
	if o.State != domain.OrderStateExpired || len(o.DecideExpire(orderClock, "again")) != 0 {
		t.Fatalf("expired: %s, and a finished order expires again", o.State)
	}
}

func TestDecideOcoPlacedOnce(t *testing.T) {
	c := domain.NewOco()
	evs, err := c.DecideOcoPlaced(orderClock, domain.OcoPlaced{OcoID: 4, LimitOrderID: 5, StopOrderID: 6})
	if err != nil || len(evs) != 1 {
		t.Fatalf("new OCO: %v, %v", evs, err)
	}
	evs[0].Version = 0
	if err := c.Apply(&evs[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DecideOcoPlaced(orderClock, domain.OcoPlaced{OcoID: 4}); domain.ErrorCode(err) != domain.ECONFLICT {
		t.Fatalf("OCO placed twice: %v", err)
	}
}

func TestDecideBalancesObserved(t *testing.T) {
	seen := []domain.AssetBalance{{Asset: "BTC", Available: ordDec("1")}, {Asset: "USDT", Available: ordDec("50")}}
	now := []domain.AssetBalance{seen[1], seen[0]}
	if evs := domain.DecideBalancesObserved(orderClock, "paper", seen, true, now); len(evs) != 0 {
		t.Fatalf("the same balances in another order appended %v", evs)
	}
	if now[0].Asset != "USDT" {
		t.Fatal("the decision sorted its input")
	}
	evs := domain.DecideBalancesObserved(orderClock, "paper", nil, false, now)
	var p domain.BalancesObserved
	if len(evs) != 1 || evs[0].Decode(&p) != nil || p.Exchange != "paper" || p.Balances[0].Asset != "BTC" {
		t.Fatalf("first observation: %v %+v", evs, p)
	}
	now[1].Available = ordDec("2")
	if evs := domain.DecideBalancesObserved(orderClock, "paper", seen, true, now); len(evs) != 1 {
		t.Fatal("a changed balance was not observed")
	}
}

// A number the ledger cannot hold never becomes an OrderFilled: a fill the
// connector could not read, or one whose value is beyond the range, is
// OrderNeedsAttention (once: the fill id is remembered), and so is an
// answer with such a number beside its OrderAccepted; clearing it is
// OrderAttentionCleared, once.
func TestDecideNeedsAttention(t *testing.T) {
	o, err := foldOrder(ordStream(ordRequested(domain.KindLimit, domain.Buy, "1", "100", "", "")))
	if err != nil {
		t.Fatal(err)
	}
	evs, err := o.DecideAnswer(orderClock, domain.ExchangeOrder{ID: "X1", Status: domain.StatusOpen,
		Problem: &domain.NumberProblem{Field: "executedQty", Raw: "1e30", Reason: "not a decimal"}})
	if err != nil || len(evs) != 2 || evs[0].Type != domain.TypeOrderAccepted || evs[1].Type != domain.TypeOrderNeedsAttention {
		t.Fatalf("answer with a problem: %v %v", evs, err)
	}
	applied(t, &o, evs)
	if o.State != domain.OrderStateAccepted || !strings.Contains(o.Attention, `executedQty "1e30"`) {
		t.Fatalf("state %s attention %q", o.State, o.Attention)
	}
	big := decimal.MustDecimal("100000000000000000000") // 10^20 × 10^20 is beyond the range
	for _, f := range []domain.Fill{
		{ID: "f1", Seq: 7, Price: decimal.MustDecimal("100"), Problem: &domain.NumberProblem{Field: "qty", Raw: "0.0000000000001", Reason: "13 decimals"}},
		{ID: "f2", Seq: 8, Price: big, Quantity: big},
	} {
		evs := o.DecideFill(orderClock, f)
		var p domain.OrderNeedsAttention
		if len(evs) != 1 || evs[0].Type != domain.TypeOrderNeedsAttention || evs[0].Decode(&p) != nil || p.FillID != f.ID || p.Seq != f.Seq {
			t.Fatalf("fill %s: %v", f.ID, evs)
		}
		applied(t, &o, evs)
		if again := o.DecideFill(orderClock, f); len(again) != 0 {
			t.Fatalf("fill %s read again: %v", f.ID, again)
		}
	}
	if !o.Filled.IsZero() {
		t.Fatalf("filled %s, want nothing recorded", o.Filled)
	}
	evs, err = o.DecideClearAttention(orderClock, "booked by hand")
	if err != nil || len(evs) != 1 || evs[0].Type != domain.TypeOrderAttentionCleared {
		t.Fatalf("clear: %v %v", evs, err)
	}
	applied(t, &o, evs)
	if _, err := o.DecideClearAttention(orderClock, ""); domain.ErrorCode(err) != domain.ECONFLICT {
		t.Fatalf("second clear: %v, want ECONFLICT", err)
	}
}
