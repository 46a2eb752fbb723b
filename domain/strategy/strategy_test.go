package strategy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

func flatCandles(n int, close string) []domain.Candle {
	out := make([]domain.Candle, n)
	for i := range out {
		c := decimal.MustDecimal(close)
		out[i] = domain.Candle{Time: int64(i) * 60000, Open: c, High: c, Low: c, Close: c}
	}
	return out
}

func ordersString(os []domain.OrderRequest) string {
	s := ""
	for _, o := range os {
		s += string(o.Side) + " " + o.Amount.String() + "@" + o.Price.String() + ";"
	}
	return s
}

func TestGainStrategy(t *testing.T) {
	base := PairState{
		Exchange: "binance", Pair: "USDT-BTC", Quote: "USDT", Base: "BTC",
		Candles:      flatCandles(16, "100"), // EMA16 = 100
		QuoteBalance: decimal.MustDecimal("1000"),
	}
	tick := func(bid, ask string) domain.Ticker {
		return domain.Ticker{Bid: decimal.MustDecimal(bid), Ask: decimal.MustDecimal(ask), Last: decimal.MustDecimal(bid)}
	}
	for _, c := range []struct {
		name   string
		mod    func(*PairState)
		params domain.StrategyParams
		want   string
	}{
		// buy level 100·(1-0.6/100) = 99.4; 100/99 = 1.01010101 (×99 = 99.99999999)
		{"buys below EMA", func(s *PairState) { s.Ticker = tick("98.9", "99") }, domain.StrategyParams{}, "buy 1.01010101@99.00000000;"},
		{"no buy above level", func(s *PairState) { s.Ticker = tick("99.4", "99.5") }, domain.StrategyParams{}, ""},
		{"BUYLVL from settings", func(s *PairState) { s.Ticker = tick("99.4", "99.5") },
			domain.StrategyParams{Settings: map[string]any{"BUYLVL": 0.5}}, "buy 1.00502512@99.50000000;"},
		{"TRADING_LIMIT override", func(s *PairState) { s.Ticker = tick("49", "50") },
			domain.StrategyParams{Override: map[string]any{"TRADING_LIMIT": "10"}, Settings: map[string]any{"TRADING_LIMIT": 500}}, "buy 0.20000000@50.00000000;"},
		{"quote too low", func(s *PairState) { s.Ticker = tick("98", "99"); s.QuoteBalance = decimal.MustDecimal("99.99") }, domain.StrategyParams{}, ""},
		{"buys disabled", func(s *PairState) { s.Ticker = tick("98", "99") }, domain.StrategyParams{Override: map[string]any{"BUY_ENABLED": false}}, ""},
		{"not enough candles", func(s *PairState) { s.Ticker = tick("98", "99"); s.Candles = s.Candles[:15] }, domain.StrategyParams{}, ""},
		// ABP 90, GAIN 1 → 90.9; the whole base balance
		{"sells at gain", func(s *PairState) {
			s.Ticker = tick("95", "96")
			s.BaseBalance = decimal.MustDecimal("0.5")
			s.ABP = decimal.MustDecimal("90")
		},
			domain.StrategyParams{}, "sell 0.50000000@90.90000000;"},
		// override GAIN 2 wins over settings GAIN 5: 90·1.02 = 91.8
		{"GAIN override wins", func(s *PairState) {
			s.Ticker = tick("95", "96")
			s.BaseBalance = decimal.MustDecimal("0.5")
			s.ABP = decimal.MustDecimal("90")
		},
			domain.StrategyParams{Override: map[string]any{"GAIN": "2"}, Settings: map[string]any{"GAIN": 5}}, "sell 0.50000000@91.80000000;"},
		{"unknown ABP never sells", func(s *PairState) { s.Ticker = tick("95", "96"); s.BaseBalance = decimal.MustDecimal("0.5") }, domain.StrategyParams{}, ""},
		// 0.1 × 95 = 9.5 < 10: dust, so it looks to buy instead (ask 96 > 99.4? no: buys)
		{"dust is not a position", func(s *PairState) {
			s.Ticker = tick("95", "96")
			s.BaseBalance = decimal.MustDecimal("0.1")
			s.ABP = decimal.MustDecimal("90")
		},
			domain.StrategyParams{}, "buy 1.04166666@96.00000000;"},
		{"waits for open order", func(s *PairState) {
			s.Ticker = tick("98", "99")
			s.OpenOrders = []domain.ExchangeOrder{{Side: domain.Sell}}
		}, domain.StrategyParams{}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := base
			c.mod(&s)
			d, err := GainStrategy{}.Decide(s, c.params)
			if err != nil {
				t.Fatal(err)
			}
			if got := ordersString(d.Orders); got != c.want {
				t.Fatalf("orders = %q, want %q (note %q)", got, c.want, d.Note)
			}
			for _, o := range d.Orders {
				if o.Kind != domain.KindLimit {
					t.Fatalf("kind = %s, want limit", o.Kind)
				}
			}
			if d.Note == "" {
				t.Fatal("no note")
			}
		})
	}
}

func TestGainStrategyMemory(t *testing.T) {
	d, err := GainStrategy{}.Decide(PairState{Candles: flatCandles(16, "100"), ABP: decimal.MustDecimal("50")}, domain.StrategyParams{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d.Memory["EMA"].String(), "100.00000000"; got != want {
		t.Fatalf("EMA=%s, want %s", got, want)
	}
	if got, want := d.Memory["buyPrice"].String(), "99.40000000"; got != want {
		t.Fatalf("buyPrice=%s, want %s", got, want)
	}
	if got, want := d.Memory["sellPrice"].String(), "50.50000000"; got != want {
		t.Fatalf("sellPrice=%s, want %s", got, want)
	}
}

func TestStrategyBadParams(t *testing.T) {
	for _, c := range []struct {
		s      Strategy
		params map[string]any
		want   string
	}{
		{GainStrategy{}, map[string]any{"GAIN": "lots"}, "strategy parameter GAIN must be a number, not lots"},
		{GainStrategy{}, map[string]any{"TRADING_LIMIT": 0}, "strategy parameter TRADING_LIMIT must be greater than 0, not 0.00000000"},
		{GainStrategy{}, map[string]any{"BUYLVL": -1}, "strategy parameter BUYLVL must not be negative, not -1.00000000"},
		{GainStrategy{}, map[string]any{"EMA_PERIOD": 2.5}, "strategy parameter EMA_PERIOD must be a whole number, not 2.50000000"},
		{GainStrategy{}, map[string]any{"EMA_PERIOD": 0}, "strategy parameter EMA_PERIOD must be at least 1, not 0"},
		{GainStrategy{}, map[string]any{"SELL_ENABLED": "maybe"}, "strategy parameter SELL_ENABLED must be true or false, not maybe"},
		{StepGridStrategy{}, map[string]any{"STEP": 100}, "strategy parameter STEP must be below 100 (percent), not 100.00000000"},
		{StepGridStrategy{}, map[string]any{"STEP": []any{1}}, "strategy parameter STEP must be a number, not [1]"},
		// The first bad parameter, in the order Decide reads them, is the one named.
		{StepGridStrategy{}, map[string]any{"STEP": 100, "MIN_VOLUME_TO_SELL": -1, "BUY_ENABLED": "x"}, "strategy parameter STEP must be below 100 (percent), not 100.00000000"},
		{GainStrategy{}, map[string]any{"GAIN": -1, "EMA_PERIOD": 0}, "strategy parameter GAIN must not be negative, not -1.00000000"},
		{GainStrategy{}, map[string]any{"EMA_PERIOD": 0, "BUY_ENABLED": "x"}, "strategy parameter EMA_PERIOD must be at least 1, not 0"},
		{GainStrategy{}, map[string]any{"BUY_ENABLED": "x", "SELL_ENABLED": "y"}, "strategy parameter BUY_ENABLED must be true or false, not x"},
	} {
		_, err := c.s.Decide(PairState{Ticker: domain.Ticker{Last: decimal.DecimalFromInt(1)}}, domain.StrategyParams{Override: c.params})
		if domain.ErrorCode(err) != domain.EINVALID || domain.ErrorMessage(err) != c.want {
			t.Errorf("%s %v: err = %v, want EINVALID %q", c.s.Name(), c.params, err, c.want)
		}
	}
}

func TestStepGridStrategy(t *testing.T) {
	base := PairState{
		Ticker:       domain.Ticker{Bid: decimal.MustDecimal("99.9"), Ask: decimal.MustDecimal("100.1"), Last: decimal.MustDecimal("100")},
		QuoteBalance: decimal.MustDecimal("1000"),
	}
	for _, c := range []struct {
		name   string
		mod    func(*PairState)
		params domain.StrategyParams
		want   string
	}{
		// 100·0.99 = 99; 100/99 = 1.01010101
		{"buy a step below", func(*PairState) {}, domain.StrategyParams{}, "buy 1.01010101@99.00000000;"},
		// sell at 101: 100/101 = 0.99009901 rounds up (×101 = 100.00000001), so 0.99009900
		{"buy and sell", func(s *PairState) { s.BaseBalance = decimal.MustDecimal("5") }, domain.StrategyParams{}, "buy 1.01010101@99.00000000;sell 0.99009900@101.00000000;"},
		// ABP 105 → sell no lower than 105·1.01 = 106.05; whole balance 0.2 when less than a step
		{"sell above ABP", func(s *PairState) { s.BaseBalance = decimal.MustDecimal("0.2"); s.ABP = decimal.MustDecimal("105") },
			domain.StrategyParams{Override: map[string]any{"BUY_ENABLED": "false"}}, "sell 0.20000000@106.05000000;"},
		// STEP 2.5 from settings: 97.5 and 102.5
		{"STEP from settings", func(s *PairState) { s.BaseBalance = decimal.MustDecimal("5") },
			domain.StrategyParams{Settings: map[string]any{"STEP": 2.5, "TRADING_LIMIT": 195}}, "buy 2.00000000@97.50000000;sell 1.90243902@102.50000000;"},
		{"open buy: only sell", func(s *PairState) {
			s.BaseBalance = decimal.MustDecimal("5")
			s.OpenOrders = []domain.ExchangeOrder{{Side: domain.Buy}}
		}, domain.StrategyParams{}, "sell 0.99009900@101.00000000;"},
		{"both open: nothing", func(s *PairState) {
			s.BaseBalance = decimal.MustDecimal("5")
			s.OpenOrders = []domain.ExchangeOrder{{Side: domain.Buy}, {Side: domain.Sell}}
		}, domain.StrategyParams{}, ""},
		{"no quote", func(s *PairState) { s.QuoteBalance = decimal.Zero }, domain.StrategyParams{}, ""},
		{"no price", func(s *PairState) { s.Ticker = domain.Ticker{} }, domain.StrategyParams{}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := base
			c.mod(&s)
			d, err := StepGridStrategy{}.Decide(s, c.params)
			if err != nil {
				t.Fatal(err)
			}
			if got := ordersString(d.Orders); got != c.want {
				t.Fatalf("orders = %q, want %q (note %q)", got, c.want, d.Note)
			}
		})
	}
}

func TestManualStrategy(t *testing.T) {
	d, err := ManualStrategy{}.Decide(PairState{Ticker: domain.Ticker{Ask: decimal.NewDecimal(1, -8), Bid: decimal.NewDecimal(1, -8), Last: decimal.NewDecimal(1, -8)}, QuoteBalance: decimal.DecimalFromInt(1e6)}, domain.StrategyParams{})
	if err != nil || len(d.Orders) != 0 {
		t.Fatalf("manual decided %v, %v", d.Orders, err)
	}
}

func TestResolveStrategy(t *testing.T) {
	for _, c := range []struct {
		name     string
		settings map[string]any
		want     string
	}{
		{"gain", nil, "gain"},
		{"stepgrid", map[string]any{}, "stepgrid"},
		{"manual", nil, "manual"},
		{"mine", map[string]any{"STRATEGY": "stepgrid"}, "stepgrid"},
		{"gunbot", map[string]any{"BUY_METHOD": "GAIN", "SELL_METHOD": "gain"}, "gain"},
	} {
		s, err := ResolveStrategy(c.name, c.settings)
		if err != nil || s.Name() != c.want {
			t.Errorf("ResolveStrategy(%q) = %v, %v; want %s", c.name, s, err, c.want)
		}
	}
	if _, err := ResolveStrategy("custom.js", nil); domain.ErrorCode(err) != domain.ENOTFOUND {
		t.Fatalf("unknown algorithm: err = %v, want ENOTFOUND", err)
	}
}

func TestStrategyParamsJSONNumber(t *testing.T) {
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(`{"GAIN": 1.25}`))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	d, err := domain.StrategyParams{Settings: m}.Decimal("GAIN", decimal.Zero)
	if err != nil || d.String() != "1.25000000" {
		t.Fatalf("GAIN = %s, %v", d, err)
	}
}
