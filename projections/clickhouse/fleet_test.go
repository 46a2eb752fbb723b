package clickhouse

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
	"github.com/tradeledger/tradeledger/projections"
)

// eurOrders appends n orders of binance/EUR-BTC, one fill each, buying and
// selling in turn around a price that walks, from order id first.
func eurOrders(tb testing.TB, store domain.EventStore, clock *domain.ManualClock, first int64, n int) {
	tb.Helper()
	for i := 0; i < n; i++ {
		clock.Advance(37 * time.Minute)
		id := first + int64(i)
		side := domain.Buy
		if i%3 == 2 {
			side = domain.Sell
		}
		price := domain.MustDecimal(fmt.Sprintf("%d.25", 40000+(i*7919)%3000))
		qty := domain.MustDecimal(fmt.Sprintf("0.0%d", 1+i%7))
		_, err := store.Append(context.Background(), domain.OrderStream(id), domain.NoStream,
			domain.NewEvent(clock, domain.TypeOrderRequested, domain.OrderRequested{OrderID: id, Exchange: "binance", Pair: "EUR-BTC",
				Side: side, Kind: domain.KindLimit, Amount: qty, Price: price, ClientOrderID: fmt.Sprint("e", id)}),
			domain.NewEvent(clock, domain.TypeOrderFilled, domain.OrderFilled{FillID: fmt.Sprint("ef", id), Price: price, Quantity: qty,
				Fee: price.Mul(qty).DivInt(1000), FeeAsset: "EUR"}))
		if err != nil {
			tb.Fatal(err)
		}
	}
}

// ownFigures is what an instance's own Ledger answers over all its pairs,
// seen in currency: its overview's total when the overview is in currency
// (a mixed one converted by the Ledger), else, for an instance whose pairs
// are all quoted in another currency, everything unconverted in that one.
// invested comes from pnl/sum over the same scope.
func ownFigures(t *testing.T, mem *projections.Ledger, currency string, now time.Time) (domain.FleetFigures, domain.Number) {
	t.Helper()
	all := projections.PnlScope{Keys: []string{"All"}}
	o, err := mem.Overview(projections.OverviewQuery{Scope: all, Loc: time.UTC, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	s, err := mem.Sum(all, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	tot := o.Total
	f := domain.FleetFigures{Pnl: tot.Pnl, BuyBaseValue: tot.BuyBaseValue, SellBaseValue: tot.SellBaseValue,
		UnmatchedBaseValue: tot.UnmatchedValue, NumberOfTrades: tot.NumberOfTrades, BuyCount: tot.BuyCount, SellCount: tot.SellCount,
		Winning: tot.Winning, Losing: tot.Losing, Breakeven: tot.Breakeven, WinRate: tot.WinRate,
		Invested: domain.Number(s.Invested), Unconverted: o.Unconverted, UnconvertedFees: o.UnconvertedFees}
	if f.Unconverted == nil {
		f.Unconverted = map[string]domain.Unconverted{}
	}
	switch {
	case o.Unit == currency:
		return f, tot.BuyPnl
	case o.PerQuote == nil: // one quote, not the currency: nothing converts
		u := domain.Unconverted{Pnl: tot.Pnl, Invested: domain.Number(s.Invested), Trades: tot.NumberOfTrades, UnrealizedPnl: tot.BuyPnl}
		f.Pnl, f.Invested, f.BuyBaseValue, f.SellBaseValue, f.UnmatchedBaseValue = domain.Number{}, domain.Number{}, domain.Number{}, domain.Number{}, domain.Number{}
		f.Unconverted = map[string]domain.Unconverted{o.Unit: u}
		return f, domain.Number{}
	}
	t.Fatalf("the Ledger answers in %s over several quotes: not comparable with the fleet in %s", o.Unit, currency)
	return f, domain.Number{}
}

// sameFigures fails unless the fleet's entry has the figures want (fees
// aside: the overview's total has none).
func sameFigures(t *testing.T, what string, got domain.FleetFigures, gotUnr domain.Number, want domain.FleetFigures, wantUnr domain.Number) {
	t.Helper()
	got.Fees, want.Fees = domain.Number{}, domain.Number{}
	if a, b := mustJSON(t, []any{got, gotUnr}, nil), mustJSON(t, []any{want, wantUnr}, nil); a != b {
		t.Fatalf("%s:\nfleet      %s\nown answer %s", what, a, b)
	}
}

// The fleet over three instances in one database: each instance's entry is
// its own Ledger's answer in the fleet's currency (converted fill by fill
// at its own rates by the same fold), the total is their sum, and an
// instance quoted in EUR is listed unconverted until its log has a rate
// into USDT, converted from then on. The realized report's pairs are each
// pair's pnl/total, and over a range the instances' pnl/sum.
func TestFleetAnswersEachInstanceAsItsOwnLedger(t *testing.T) {
	url := testURL(t)
	ctx := context.Background()
	stores := map[string]*sqlite.Store{}
	clocks := map[string]*domain.ManualClock{}
	for _, name := range []string{"bot-a", "bot-b"} {
		st := openStore(t)
		g := newLogGen()
		g.fees = name == "bot-a" // BNB fees, KCS fees without a rate, an EUR pair converted through BTC
		addConfig(t, st, g)
		g.orders(t, st, map[string]int{"bot-a": 120, "bot-b": 45}[name])
		stores[name], clocks[name] = st, g.clock
	}
	eur := openStore(t)
	eurClock := domain.NewManualClock(time.Date(2024, 4, 1, 0, 0, 0, 0, time.UTC))
	eurOrders(t, eur, eurClock, 1, 30)
	stores["bot-eur"], clocks["bot-eur"] = eur, eurClock
	export := func() {
		t.Helper()
		for name, st := range stores {
			s := NewSink(url, st)
			s.Instance = name
			if _, err := s.Export(ctx); err != nil {
				t.Fatalf("export %s: %v", name, err)
			}
		}
	}
	export()
	f := NewFleet(url)
	if err := f.Open(); err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	check := func(phase string) *domain.FleetOverview {
		t.Helper()
		o, err := f.Overview(ctx, domain.FleetQuery{Currency: "USDT", Method: domain.LOFO})
		if err != nil {
			t.Fatal(err)
		}
		if len(o.Instances) != 3 || o.Total.Instances != 3 || o.Currency != "USDT" || o.Method != "lofo" {
			t.Fatalf("%s: %d instances (%d current), %s %s; want 3 in USDT, lofo", phase, len(o.Instances), o.Total.Instances, o.Currency, o.Method)
		}
		var sum domain.FleetFigures
		sum.Unconverted = map[string]domain.Unconverted{}
		var sumUnr domain.Decimal
		for _, in := range o.Instances {
			mem := ledgerOf(t, stores[in.Name], domain.LOFO)
			want, wantUnr := ownFigures(t, mem, "USDT", clocks[in.Name].Now())
			sameFigures(t, phase+": "+in.Name, in.FleetFigures, in.UnrealizedPnl, want, wantUnr)
			if h := head(t, stores[in.Name]); in.Status != domain.FleetCurrent || in.Position != h || in.UpdatedAt == 0 {
				t.Fatalf("%s: %s is %s at %d (updated %d); want current at %d", phase, in.Name, in.Status, in.Position, in.UpdatedAt, h)
			}
			// The sum, by hand: money, counts, and unconverted per currency.
			sum.Pnl = domain.Number(domain.Decimal(sum.Pnl).Add(domain.Decimal(want.Pnl)))
			sum.Invested = domain.Number(domain.Decimal(sum.Invested).Add(domain.Decimal(want.Invested)))
			sum.BuyBaseValue = domain.Number(domain.Decimal(sum.BuyBaseValue).Add(domain.Decimal(want.BuyBaseValue)))
			sum.SellBaseValue = domain.Number(domain.Decimal(sum.SellBaseValue).Add(domain.Decimal(want.SellBaseValue)))
			sum.UnmatchedBaseValue = domain.Number(domain.Decimal(sum.UnmatchedBaseValue).Add(domain.Decimal(want.UnmatchedBaseValue)))
			sum.NumberOfTrades += want.NumberOfTrades
			sum.BuyCount += want.BuyCount
			sum.SellCount += want.SellCount
			sum.Winning += want.Winning
			sum.Losing += want.Losing
			sum.Breakeven += want.Breakeven
			sumUnr = sumUnr.Add(domain.Decimal(wantUnr))
			for c, u := range want.Unconverted {
				s := sum.Unconverted[c]
				s.Pnl = domain.Number(domain.Decimal(s.Pnl).Add(domain.Decimal(u.Pnl)))
				s.Invested = domain.Number(domain.Decimal(s.Invested).Add(domain.Decimal(u.Invested)))
				s.Trades += u.Trades
				s.UnrealizedPnl = domain.Number(domain.Decimal(s.UnrealizedPnl).Add(domain.Decimal(u.UnrealizedPnl)))
				sum.Unconverted[c] = s
			}
			for a, x := range want.UnconvertedFees {
				if sum.UnconvertedFees == nil {
					sum.UnconvertedFees = map[string]domain.Number{}
				}
				sum.UnconvertedFees[a] = domain.Number(domain.Decimal(sum.UnconvertedFees[a]).Add(domain.Decimal(x)))
			}
		}
		sum.WinRate = domain.WinRate(sum.Winning, sum.Losing, sum.Breakeven)
		sameFigures(t, phase+": the total", o.Total.FleetFigures, o.Total.UnrealizedPnl, sum, domain.Number(sumUnr))
		return o
	}
	o := check("no EUR rate")
	eurEntry := o.Instances[2]
	if eurEntry.Name != "bot-eur" || eurEntry.Unconverted["EUR"].Trades != 30 || !domain.Decimal(eurEntry.Pnl).IsZero() || eurEntry.NumberOfTrades != 30 {
		t.Fatalf("bot-eur without a rate: %+v; want its 30 fills unconverted in EUR, counted", eurEntry)
	}

	// A rate EUR → USDT in bot-eur's log, the reporting currency USDT,
	// then more fills: those after the rate convert, the first 30 stay
	// unconverted (no rate at their time).
	cfg := domain.NewEvent(eurClock, domain.TypeConfigReplaced, map[string]any{"config": map[string]any{
		"bot": map[string]any{"REPORTING_CURRENCY": "USDT"}, "pairs": map[string]any{}}})
	if _, err := eur.Append(ctx, domain.StreamConfig, domain.Any, cfg); err != nil {
		t.Fatal(err)
	}
	eurClock.Advance(time.Minute)
	rate := domain.NewEvent(eurClock, domain.TypeRateObserved, domain.RateObserved{Exchange: "binance", Base: "EUR", Quote: "USDT", Rate: domain.MustDecimal("1.0825")})
	if _, err := eur.Append(ctx, domain.RateStream("binance"), domain.Any, rate); err != nil {
		t.Fatal(err)
	}
	eurOrders(t, eur, eurClock, 31, 20)
	// An order of a USDT pair, without fills: the instance's own overview
	// over all its pairs spans two quotes and is answered in USDT.
	if _, err := eur.Append(ctx, domain.OrderStream(99), domain.NoStream, domain.NewEvent(eurClock, domain.TypeOrderRequested,
		domain.OrderRequested{OrderID: 99, Exchange: "binance", Pair: "USDT-ETH", Side: domain.Buy, Kind: domain.KindLimit,
			Amount: domain.MustDecimal("1"), Price: domain.MustDecimal("1000"), ClientOrderID: "e99"})); err != nil {
		t.Fatal(err)
	}
	export()
	o = check("an EUR rate")
	eurEntry = o.Instances[2]
	if u := eurEntry.Unconverted["EUR"]; u.Trades != 30 || eurEntry.NumberOfTrades != 50 || !domain.Decimal(eurEntry.BuyBaseValue).IsPos() {
		t.Fatalf("bot-eur with a rate: %+v; want 30 fills unconverted, 20 converted", eurEntry)
	}

	// The realized report: every pair's figures are its pnl/total, each
	// instance's over all time its overview's; over a range, its pnl/sum.
	rep, err := f.Realized(ctx, domain.FleetQuery{Currency: "USDT", Method: domain.LOFO})
	if err != nil {
		t.Fatal(err)
	}
	for i, in := range rep.Instances {
		mem := ledgerOf(t, stores[in.Name], domain.LOFO)
		want, _ := ownFigures(t, mem, "USDT", clocks[in.Name].Now())
		got := in.FleetFigures
		sameFigures(t, "realized "+in.Name, got, domain.Number{}, want, domain.Number{})
		if mustJSON(t, got, nil) != mustJSON(t, o.Instances[i].FleetFigures, nil) {
			t.Fatalf("realized %s over all time differs from its overview entry", in.Name)
		}
		for _, p := range in.Pairs {
			pt, err := mem.Total(p.Key)
			if err != nil {
				t.Fatal(err)
			}
			if p.Pnl != pt.Pnl || p.NumberOfTrades != pt.NumberOfTrades || p.Fees != pt.Fees || p.Invested != pt.Invested ||
				p.UnmatchedBaseValue != pt.UnmatchedBaseValue || p.Unit != pt.Unit {
				t.Fatalf("realized %s %s: %+v; pnl/total %+v", in.Name, p.Key, p, pt)
			}
		}
	}
	day := int64(86_400_000)
	for _, in := range []string{"bot-a", "bot-eur"} {
		now := clocks[in].Now().UnixMilli()
		from, to := now-20*day-3_600_000, now-2*day
		rep, err := f.Realized(ctx, domain.FleetQuery{Currency: "USDT", Method: domain.LOFO, From: from, To: to})
		if err != nil {
			t.Fatal(err)
		}
		var got domain.FleetFigures
		for _, x := range rep.Instances {
			if x.Name == in {
				got = x.FleetFigures
			}
		}
		mem := ledgerOf(t, stores[in], domain.LOFO)
		s, err := mem.Sum(projections.PnlScope{Keys: []string{"All"}}, from, to)
		if err != nil {
			t.Fatal(err)
		}
		if s.Unit != "USDT" || got.Pnl != domain.Number(s.Pnl) || got.Invested != domain.Number(s.Invested) ||
			mustJSON(t, got.Unconverted, nil) != mustJSON(t, orEmpty(s.Unconverted), nil) {
			t.Fatalf("realized %s over a range: %+v; pnl/sum %+v", in, got, s)
		}
	}
	if _, err := f.Overview(ctx, domain.FleetQuery{Method: domain.LOFO}); domain.ErrorCode(err) != domain.EINVALID {
		t.Fatalf("overview without a currency: %v, want EINVALID", err)
	}
}

func orEmpty(m map[string]domain.Unconverted) map[string]domain.Unconverted {
	if m == nil {
		return map[string]domain.Unconverted{}
	}
	return m
}
