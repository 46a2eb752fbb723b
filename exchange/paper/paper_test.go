package paper_test

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/eventstore"
	"github.com/tradeledger/tradeledger/exchange/exchangetest"
	"github.com/tradeledger/tradeledger/exchange/paper"
	"github.com/tradeledger/tradeledger/projections"
)

var start = time.Date(2026, 3, 4, 5, 6, 0, 0, time.UTC)

func TestConformance(t *testing.T) {
	exchangetest.Run(t, func(t *testing.T) exchangetest.Harness {
		sim := paper.NewSimulator(domain.NewManualClock(start))
		x, err := sim.Exchange("binance")
		if err != nil {
			t.Fatal(err)
		}
		return exchangetest.Harness{
			Exchange: x, Pair: "USDT-BTC", Amount: decimal.MustDecimal("0.01"),
			SetPrice: func(pair string, p decimal.Decimal) error { return sim.SetPrice("binance", pair, p) },
			Faults: exchangetest.Faults{
				LoseNextPlacement: func(placed bool) { _ = sim.FailPlacements("binance", 1, placed) },
				// A 5xx places nothing: the same as a request lost on its way.
				ServerError: func() { _ = sim.FailPlacements("binance", 1, false) },
				Fill:        x.(*paper.Account).FillOrder,
			},
			NotApplicable: map[string]string{
				"RateLimitHonoured":           "the simulator runs in process and has no request limit",
				"ClockSkewCorrected":          "the simulator shares the service's clock and signs nothing",
				"FiltersAppliedBeforeSending": "the simulator lists no tick, step or minimum for its pairs (any precision is accepted)",
			},
		}
	})
}

func TestDeterministicSeededPaths(t *testing.T) {
	prices := func(seed int64) []decimal.Decimal {
		clock := domain.NewManualClock(start)
		sim := paper.NewSimulator(clock)
		sim.Seed = seed
		x, _ := sim.Exchange("kraken")
		var out []decimal.Decimal
		for i := 0; i < 30; i++ {
			clock.Advance(time.Minute)
			tk, err := x.Ticker(context.Background(), "USDT-ETH")
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, tk.Last)
		}
		return out
	}
	a, b, c := prices(7), prices(7), prices(8)
	same, moved := true, false
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("step %d: %v vs %v with the same seed", i, a[i], b[i])
		}
		same = same && a[i] == c[i]
		moved = moved || (i > 0 && a[i] != a[i-1])
	}
	if same || !moved {
		t.Fatalf("paths: different seeds equal=%v, path moves=%v", same, moved)
	}
	// Realistic volatility: 30 one-minute steps stay within a few percent.
	lo, hi := a[0], a[0]
	for _, p := range a {
		lo, hi = lo.Min(p), hi.Max(p)
	}
	if hi.Sub(lo).Div(lo).Cmp(decimal.MustDecimal("0.05")) > 0 {
		t.Fatalf("30-minute range %v..%v is more than 5%%", lo, hi)
	}
}

func TestMarketsHave24hStats(t *testing.T) {
	sim := paper.NewSimulator(domain.NewManualClock(start))
	x, _ := sim.Exchange("binance")
	ms, err := x.Markets(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != len(paper.DefaultPairs) {
		t.Fatalf("%d markets, want %d", len(ms), len(paper.DefaultPairs))
	}
	for _, m := range ms {
		if m.Volume24h.Sign() <= 0 || m.Low24h.Cmp(m.High24h) >= 0 {
			t.Fatalf("%s: volume %v low %v high %v: want a day of trading", m.Pair, m.Volume24h, m.Low24h, m.High24h)
		}
	}
}

func TestSettingsFeeBalancesAndUnknownExchange(t *testing.T) {
	sim := paper.NewSimulator(domain.NewManualClock(start))
	fee := decimal.MustDecimal("0.002")
	sim.Settings = func(name string) (paper.ExchangeSettings, bool) {
		if name != "kucoin" {
			return paper.ExchangeSettings{}, false
		}
		return paper.ExchangeSettings{Fee: &fee, Balances: map[string]decimal.Decimal{"USDT": decimal.MustDecimal("1000")}}, true
	}
	if _, err := sim.Exchange("binance"); domain.ErrorCode(err) != domain.ENOTFOUND {
		t.Fatalf("unsimulated exchange: err=%v, want ENOTFOUND", err)
	}
	x, err := sim.Account("kucoin")
	if err != nil {
		t.Fatal(err)
	}
	if err := x.SetPrice("USDT-SOL", decimal.MustDecimal("100")); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// 10 SOL at 100 = 1000 USDT + 0.2% fee = 1002: more than the balance.
	_, err = x.PlaceOrder(ctx, domain.PlaceOrderRequest{ClientOrderID: "a", Pair: "USDT-SOL", Side: domain.Buy, Kind: domain.KindLimit, Amount: decimal.MustDecimal("10"), Price: decimal.MustDecimal("100")})
	if domain.ErrorCode(err) != domain.EINVALID {
		t.Fatalf("buy over balance: err=%v, want EINVALID", err)
	}
	// 5 SOL resting at 99, then the price falls through it: filled at 99
	// with a 0.2% fee in USDT.
	if _, err := x.PlaceOrder(ctx, domain.PlaceOrderRequest{ClientOrderID: "b", Pair: "USDT-SOL", Side: domain.Buy, Kind: domain.KindLimit, Amount: decimal.MustDecimal("5"), Price: decimal.MustDecimal("99")}); err != nil {
		t.Fatal(err)
	}
	bal := func() map[string]domain.AssetBalance {
		bs, _ := x.Balances(ctx)
		m := map[string]domain.AssetBalance{}
		for _, b := range bs {
			m[b.Asset] = b
		}
		return m
	}
	if got, want := bal()["USDT"].OnOrder, decimal.MustDecimal("495.99"); got != want { // 495 + 0.99 fee
		t.Fatalf("on order %v, want %v", got, want)
	}
	if err := x.SetPrice("USDT-SOL", decimal.MustDecimal("98")); err != nil {
		t.Fatal(err)
	}
	b := bal()
	if b["USDT"].Available != decimal.MustDecimal("504.01") || !b["USDT"].OnOrder.IsZero() || b["SOL"].Available != decimal.MustDecimal("5") {
		t.Fatalf("after the fill: %+v", b)
	}
	fills, _ := x.FillsSince(ctx, 0, 0)
	if len(fills) == 0 || fills[0].Fee != decimal.MustDecimal("0.99") || fills[0].FeeAsset != "USDT" {
		t.Fatalf("fills %+v, want fee 0.99 USDT (0.2%% of 5×99)", fills)
	}
}

func TestLargeMarketOrderFillsPartially(t *testing.T) {
	sim := paper.NewSimulator(domain.NewManualClock(start))
	sim.Balances = map[string]decimal.Decimal{"BTC": decimal.MustDecimal("1000"), "ETH": decimal.MustDecimal("100")}
	x, _ := sim.Account("binance")
	ctx := context.Background()
	o, err := x.PlaceOrder(ctx, domain.PlaceOrderRequest{ClientOrderID: "big", Pair: "USDT-BTC", Side: domain.Sell, Kind: domain.KindMarket, Amount: decimal.MustDecimal("500")})
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != domain.StatusCancelled || o.Filled.Sign() <= 0 || o.Filled.Cmp(o.Amount) >= 0 {
		t.Fatalf("500 BTC market sell: %+v, want partly filled, rest cancelled", o)
	}
	fills, _ := x.FillsSince(ctx, 0, 0)
	if len(fills) < 2 {
		t.Fatalf("%d fills, want one per book level walked", len(fills))
	}
	bs, _ := x.Balances(ctx)
	for _, b := range bs {
		if b.Asset == "BTC" && (!b.OnOrder.IsZero() || b.Available != decimal.MustDecimal("1000").Sub(o.Filled)) {
			t.Fatalf("BTC after partial market sell: %+v, filled %v", b, o.Filled)
		}
	}
	// A large resting sell fills partially on one crossing, more later.
	r, err := x.PlaceOrder(ctx, domain.PlaceOrderRequest{ClientOrderID: "rest", Pair: "USDT-ETH", Side: domain.Sell, Kind: domain.KindLimit, Amount: decimal.MustDecimal("50"), Price: decimal.MustDecimal("4000")})
	if err != nil || r.Status != domain.StatusOpen {
		t.Fatalf("resting sell: %+v %v", r, err)
	}
	var filled []decimal.Decimal
	for i := 0; i < 2; i++ {
		if err := x.SetPrice("USDT-ETH", decimal.MustDecimal("4001")); err != nil {
			t.Fatal(err)
		}
		o, _ := x.Order(ctx, "USDT-ETH", "rest")
		filled = append(filled, o.Filled)
	}
	if filled[0].Sign() <= 0 || filled[1].Cmp(filled[0]) <= 0 || filled[1].Cmp(decimal.MustDecimal("50")) >= 0 {
		t.Fatalf("resting 50 ETH after two crossings filled %v: want partial fills growing", filled)
	}
}

func TestFailPlacements(t *testing.T) {
	sim := paper.NewSimulator(domain.NewManualClock(start))
	x, _ := sim.Exchange("binance")
	ctx := context.Background()
	req := domain.PlaceOrderRequest{ClientOrderID: "c1", Pair: "USDT-BTC", Side: domain.Buy, Kind: domain.KindLimit, Amount: decimal.MustDecimal("0.01"), Price: decimal.MustDecimal("1000")}
	_ = sim.FailPlacements("binance", 1, false)
	if _, err := x.PlaceOrder(ctx, req); domain.ErrorCode(err) != domain.EUNAVAILABLE {
		t.Fatalf("err=%v, want EUNAVAILABLE", err)
	}
	if _, err := x.Order(ctx, "USDT-BTC", "c1"); domain.ErrorCode(err) != domain.ENOTFOUND {
		t.Fatalf("a lost request placed the order: %v", err)
	}
	_ = sim.FailPlacements("binance", 1, true)
	if _, err := x.PlaceOrder(ctx, req); domain.ErrorCode(err) != domain.EUNAVAILABLE {
		t.Fatalf("err=%v, want EUNAVAILABLE", err)
	}
	o, err := x.Order(ctx, "USDT-BTC", "c1")
	if err != nil || o.Status != domain.StatusOpen {
		t.Fatalf("a lost answer: the order must exist: %+v %v", o, err)
	}
	again, err := x.PlaceOrder(ctx, req)
	if err != nil || again.ID != o.ID {
		t.Fatalf("retry: %+v %v, want the same order %s", again, err, o.ID)
	}
}

// A fee changed in the settings applies from the next use once their
// version moves; until it moves, the exchange keeps the fee it has.
func TestFeeFollowsSettingsVersion(t *testing.T) {
	sim := paper.NewSimulator(domain.NewManualClock(start))
	fee, version := decimal.MustDecimal("0.001"), int64(1)
	sim.Settings = func(string) (paper.ExchangeSettings, bool) {
		f := fee
		return paper.ExchangeSettings{Fee: &f}, true
	}
	sim.SettingsVersion = func() int64 { return version }
	rate := func() decimal.Decimal {
		t.Helper()
		x, err := sim.Account("binance")
		if err != nil {
			t.Fatal(err)
		}
		return x.FeeRate()
	}
	if got := rate(); got != decimal.MustDecimal("0.001") {
		t.Fatalf("fee %s, want 0.001", got)
	}
	fee = decimal.MustDecimal("0.0025")
	if got := rate(); got != decimal.MustDecimal("0.001") {
		t.Fatalf("fee %s before the version moved, want 0.001 still", got)
	}
	version++
	if got := rate(); got != decimal.MustDecimal("0.0025") {
		t.Fatalf("fee %s after the version moved, want 0.0025", got)
	}
}

// A refused order says what is missing in the order's own terms and the
// market's precision (at 60,000 USDT: amounts of BTC with 5 decimals,
// USDT with 2, grouped; what is needed rounded up, what is available
// down): the whole order's cost and the funds there are, and for a market
// buy larger than the book, what the part the book holds would cost, then,
// apart, that the book cannot fill the rest (never that part's cost as if
// it were the order's).
func TestRefusalsSayWhatIsMissing(t *testing.T) {
	sim := paper.NewSimulator(domain.NewManualClock(start))
	sim.Balances = map[string]decimal.Decimal{"USDT": decimal.MustDecimal("1000.005"), "BTC": decimal.MustDecimal("0.5")}
	x, _ := sim.Account("binance")
	if err := x.SetPrice("USDT-BTC", decimal.MustDecimal("60000")); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	book, err := x.OrderBook(ctx, "USDT-BTC", 0)
	if err != nil {
		t.Fatal(err)
	}
	// What the book holds, and its cost with the 0.1% fee, from the book
	// as the API shows it.
	var depth, cost, oneCost decimal.Decimal
	left := decimal.MustDecimal("1")
	for _, l := range book.Asks {
		depth, cost = depth.Add(l.Quantity), cost.Add(l.Quantity.Mul(l.Price))
		q := left.Min(l.Quantity)
		oneCost, left = oneCost.Add(q.Mul(l.Price)), left.Sub(q)
	}
	withFee := func(d decimal.Decimal) string { return usdtUp(d.Add(d.Mul(paper.DefaultFeeRate))) }
	if depth.Cmp(decimal.MustDecimal("100")) >= 0 || left.Sign() != 0 {
		t.Fatalf("the book holds %s BTC: the test wants less than 100 and more than 1", depth)
	}
	held := trim(depth)
	if i := strings.IndexByte(held, '.'); i < 0 || len(held)-i-1 < 5 {
		held = fmt.Sprintf("%.5f", depth.Float64()) // at least the market's 5 decimals
	}
	for _, c := range []struct {
		req  domain.PlaceOrderRequest
		want string
	}{
		{domain.PlaceOrderRequest{Side: domain.Buy, Kind: domain.KindMarket, Amount: decimal.MustDecimal("100")},
			"insufficient funds: the " + held + " BTC the book holds would cost " + withFee(cost) + " USDT with the fee; 1,000.00 USDT available. " +
				"Besides, the book cannot fill a market buy of 100.00000 BTC: it holds " + held + " BTC"},
		{domain.PlaceOrderRequest{Side: domain.Buy, Kind: domain.KindMarket, Amount: decimal.MustDecimal("1")},
			"insufficient funds: buying 1.00000 BTC at market needs " + withFee(oneCost) + " USDT with the fee at the book's prices; 1,000.00 USDT available"},
		{domain.PlaceOrderRequest{Side: domain.Buy, Kind: domain.KindLimit, Amount: decimal.MustDecimal("1"), Price: decimal.MustDecimal("59000")},
			"insufficient funds: buying 1.00000 BTC at 59,000.00 USDT needs 59,059.00 USDT with the fee; 1,000.00 USDT available"},
		{domain.PlaceOrderRequest{Side: domain.Buy, Kind: domain.KindLimit, Amount: decimal.MustDecimal("0.0223456"), Price: decimal.MustDecimal("59000.5")},
			"insufficient funds: buying 0.0223456 BTC at 59,000.50 USDT needs " + withFee(decimal.MustDecimal("0.0223456").Mul(decimal.MustDecimal("59000.5"))) + " USDT with the fee; 1,000.00 USDT available"},
		{domain.PlaceOrderRequest{Side: domain.Sell, Kind: domain.KindMarket, Amount: decimal.MustDecimal("2")},
			"insufficient funds: selling 2.00000 BTC needs 2.00000 BTC; 0.50000 BTC available"},
	} {
		c.req.ClientOrderID, c.req.Pair = "c-"+string(c.req.Side)+string(c.req.Kind)+c.req.Amount.String(), "USDT-BTC"
		_, err := x.PlaceOrder(ctx, c.req)
		if domain.ErrorCode(err) != domain.EINVALID || domain.ErrorMessage(err) != c.want {
			t.Errorf("%s %s %s: %v\nwant %s", c.req.Side, c.req.Kind, c.req.Amount, err, c.want)
		}
	}
}

// usdtUp writes d as USDT in the dashboard's terms: rounded up to the
// cent, grouped by thousands (computed here with the standard library, not
// with decimal.AmountText).
func usdtUp(d decimal.Decimal) string {
	cents := new(big.Rat)
	cents.SetString(d.String())
	cents.Mul(cents, big.NewRat(100, 1))
	n := new(big.Int).Quo(cents.Num(), cents.Denom())
	if new(big.Rat).SetInt(n).Cmp(cents) < 0 {
		n.Add(n, big.NewInt(1))
	}
	s := n.String()
	for len(s) < 3 {
		s = "0" + s
	}
	whole, frac := s[:len(s)-2], s[len(s)-2:]
	var b strings.Builder
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String() + "." + frac
}

// trim formats d without trailing zeros.
func trim(d decimal.Decimal) string {
	return strings.TrimRight(strings.TrimRight(d.String(), "0"), ".")
}

// TestAccountReconciled: the account suite on a paper account, its
// outside activity simulated (POST /api/v1/paper/activity's path).
func TestAccountReconciled(t *testing.T) {
	exchangetest.RunAccount(t, func(t *testing.T) exchangetest.AccountHarness {
		clock := domain.NewManualClock(start)
		var sim *paper.Simulator
		dec := decimal.MustDecimal
		simulate := func(t *testing.T, env *exchangetest.AccountEnv, p domain.PaperActivity) {
			t.Helper()
			p.Exchange = "binance"
			_, err := eventstore.Run(context.Background(), eventstore.NewCommands(env.Store, env.Runner), eventstore.Command[struct{}]{
				Stream: domain.PaperStream("binance"), Load: eventstore.NoState,
				Decide: func(struct{}) ([]domain.Event, error) { return sim.DecideActivity(clock, p) },
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		return exchangetest.AccountHarness{
			Exchange: func() domain.Exchange {
				sim = paper.NewSimulator(clock) // a new process: its state from the log
				x, err := sim.Exchange("binance")
				if err != nil {
					t.Fatal(err)
				}
				return x
			},
			Projections: func() []projections.Projection { return []projections.Projection{sim} },
			Before:      func() { _ = sim.SetPrice("binance", "USDT-BTC", dec("60000")) },
			Pair:        "USDT-BTC", Amount: dec("0.01"), Clock: clock,
			Outside: exchangetest.Outside{
				HandTrade: func(t *testing.T, env *exchangetest.AccountEnv) {
					simulate(t, env, domain.PaperActivity{Kind: domain.PaperTrade, Pair: "USDT-ETH", Side: domain.Buy, Amount: dec("0.1"), Price: dec("3000"), Fee: dec("0.3")})
				},
				Deposit: func(t *testing.T, env *exchangetest.AccountEnv) {
					simulate(t, env, domain.PaperActivity{Kind: domain.PaperDeposit, Asset: "SOL", Amount: dec("12.5")})
				},
				Withdraw: func(t *testing.T, env *exchangetest.AccountEnv) {
					simulate(t, env, domain.PaperActivity{Kind: domain.PaperWithdrawal, Asset: "USDT", Amount: dec("250"), Fee: dec("1")})
				},
				Dust: func(t *testing.T, env *exchangetest.AccountEnv) {
					simulate(t, env, domain.PaperActivity{Kind: domain.PaperConversion, Asset: "ETH", Amount: dec("0.0009"), ToAsset: "BNB", ToAmount: dec("0.000441"), Fee: dec("0.000009")})
				},
				Drift: func(t *testing.T, env *exchangetest.AccountEnv) (string, decimal.Decimal) {
					simulate(t, env, domain.PaperActivity{Kind: domain.PaperDrift, Asset: "USDC", Amount: dec("-3.5")})
					return "USDC", dec("-3.5")
				},
				DelayFills:       func(t *testing.T, n int) { _ = sim.DelayFills("binance", n) },
				ReleaseFills:     func(t *testing.T) { _ = sim.ReleaseFills("binance") },
				FailHistoryAfter: func(t *testing.T, n int) { _ = sim.FailHistory("binance", n) },
			},
		}
	})
}
