package strategy

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// Built-in strategy algorithms. A configured strategy (config.strategies.<name>)
// runs the algorithm named by its STRATEGY setting (or, as Gunbot configs
// have it, BUY_METHOD), else the algorithm with the strategy's own name.
const (
	StrategyGain     = "gain"
	StrategyStepGrid = "stepgrid"
	StrategyManual   = "manual"
)

// Defaults of the strategy parameters (see each strategy's doc comment).
var (
	DefaultTradingLimit    = decimal.DecimalFromInt(100) // quote units per buy
	DefaultBuyLevel        = decimal.MustDecimal("0.6")  // percent below the EMA
	DefaultGain            = decimal.DecimalFromInt(1)   // percent above ABP
	DefaultEMAPeriod       = 16                          // candles
	DefaultMinVolumeToSell = decimal.DecimalFromInt(10)  // quote units
	DefaultStep            = decimal.DecimalFromInt(1)   // percent
)

// PairState is what a strategy sees of one pair in one cycle. Balances are
// the available (not on order) amounts; OpenOrders are the pair's open
// orders on the exchange; Candles are oldest first.
type PairState struct {
	Exchange, Pair            string
	Quote, Base               string
	Ticker                    domain.Ticker
	Candles                   []domain.Candle
	ABP                       decimal.Decimal // average buy price of the held lots; 0 when unknown
	QuoteBalance, BaseBalance decimal.Decimal
	OpenOrders                []domain.ExchangeOrder
}

// StrategyDecision is a strategy's answer for one cycle: orders to place
// (limit orders without Exchange, Pair, Actor or idempotency key: the core
// fills those in), values to show in core memory, and a short note saying
// why it did what it did.
type StrategyDecision struct {
	Orders []domain.OrderRequest
	Memory map[string]decimal.Decimal
	Note   string
}

// Strategy is a pure trading rule: the same state and parameters always
// give the same decision. Decide returns EINVALID for bad parameters.
type Strategy interface {
	Name() string
	Decide(s PairState, p domain.StrategyParams) (StrategyDecision, error)
}

var builtinStrategies = map[string]Strategy{
	StrategyGain:     GainStrategy{},
	StrategyStepGrid: StepGridStrategy{},
	StrategyManual:   ManualStrategy{},
}

// BuiltinStrategies returns the names of the built-in algorithms, sorted.
func BuiltinStrategies() []string {
	names := make([]string, 0, len(builtinStrategies))
	for n := range builtinStrategies {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ResolveStrategy returns the algorithm a configured strategy runs: the one
// named by its STRATEGY setting, else by BUY_METHOD, else by the strategy's
// own name. A name with no built-in algorithm (e.g. a custom JavaScript
// strategy) is ENOTFOUND.
func ResolveStrategy(name string, settings map[string]any) (Strategy, error) {
	algo := name
	for _, key := range []string{"STRATEGY", "BUY_METHOD"} {
		if s, ok := settings[key].(string); ok && s != "" {
			algo = s
			break
		}
	}
	if s, ok := builtinStrategies[strings.ToLower(algo)]; ok {
		return s, nil
	}
	return nil, domain.Errorf(domain.ENOTFOUND, "strategy %q has no built-in algorithm %q (built-in: %s)", name, algo, strings.Join(BuiltinStrategies(), ", "))
}

// ManualStrategy never places an order: the pair is only watched (market
// data and core memory are collected) and traded through the API.
type ManualStrategy struct{}

// Name returns "manual".
func (ManualStrategy) Name() string { return StrategyManual }

// Decide returns an empty decision.
func (ManualStrategy) Decide(PairState, domain.StrategyParams) (StrategyDecision, error) {
	return StrategyDecision{Note: "manual: no automatic orders"}, nil
}

// GainStrategy buys a dip below the EMA and sells at a fixed gain above the
// average buy price (ABP). Parameters:
//
//	TRADING_LIMIT       quote amount spent per buy (default 100)
//	BUYLVL              percent below the EMA the ask must reach to buy (default 0.6)
//	GAIN                percent above ABP at which the position is sold (default 1)
//	EMA_PERIOD          EMA length in candles, over candle closes (default 16)
//	MIN_VOLUME_TO_SELL  quote value (base balance × bid) below which the base
//	                    balance is dust, i.e. no position is held (default 10)
//	BUY_ENABLED         place buys (default true)
//	SELL_ENABLED        place sells (default true)
//
// Each cycle, with no open order on the pair:
//   - holding a position (base value ≥ MIN_VOLUME_TO_SELL) with a known ABP:
//     a limit sell of the whole available base balance at ABP × (1 + GAIN/100);
//   - not holding: when ask ≤ EMA × (1 − BUYLVL/100) and the quote balance
//     covers TRADING_LIMIT, a limit buy at the ask of TRADING_LIMIT/ask
//     (rounded down to 8 decimals, so the cost never exceeds the limit).
//
// With an open order it waits. Holding base with an unknown ABP (0) it never
// sells, since it cannot know the gain.
type GainStrategy struct{}

// Name returns "gain".
func (GainStrategy) Name() string { return StrategyGain }

// Decide applies the rule above.
func (GainStrategy) Decide(s PairState, p domain.StrategyParams) (StrategyDecision, error) {
	var d StrategyDecision
	r := params{p: p}
	limit := r.positive("TRADING_LIMIT", DefaultTradingLimit)
	buyLvl := r.nonNegative("BUYLVL", DefaultBuyLevel)
	gain := r.nonNegative("GAIN", DefaultGain)
	minSell := r.nonNegative("MIN_VOLUME_TO_SELL", DefaultMinVolumeToSell)
	period := r.int("EMA_PERIOD", DefaultEMAPeriod)
	r.check(period >= 1, "strategy parameter EMA_PERIOD must be at least 1, not %d", period)
	buyOn, sellOn := r.sides()
	if r.err != nil {
		return d, r.err
	}

	d.Memory = map[string]decimal.Decimal{}
	ema := EMA(Closes(s.Candles), period)
	emaNow, emaOK := decimal.Decimal(decimal.Zero), false
	if len(ema) > 0 {
		emaNow, emaOK = RoundDecimal(ema[len(ema)-1])
	}
	buyPrice := decimal.Decimal(decimal.Zero)
	if emaOK {
		d.Memory["EMA"] = emaNow
		buyPrice = emaNow.Sub(emaNow.Mul(buyLvl).DivInt(100))
		d.Memory["buyPrice"] = buyPrice
	}
	sellPrice := decimal.Decimal(decimal.Zero)
	if s.ABP.IsPos() {
		sellPrice = s.ABP.Add(s.ABP.Mul(gain).DivInt(100))
		d.Memory["sellPrice"] = sellPrice
	}

	if len(s.OpenOrders) > 0 {
		d.Note = "gain: waiting for the open order"
		return d, nil
	}
	holding := holdsBase(s, minSell)
	switch {
	case holding && s.ABP.Sign() <= 0:
		d.Note = "gain: holding base with unknown ABP, not selling"
	case holding && !sellOn:
		d.Note = "gain: holding, sells disabled"
	case holding:
		d.Orders = append(d.Orders, domain.OrderRequest{Side: domain.Sell, Kind: domain.KindLimit, Amount: s.BaseBalance, Price: sellPrice})
		d.Note = "gain: selling at ABP + GAIN%"
	case !buyOn:
		d.Note = "gain: buys disabled"
	case !emaOK:
		d.Note = fmt.Sprintf("gain: waiting for %d candles to compute the EMA", period)
	case s.Ticker.Ask.Sign() <= 0 || buyPrice.Less(s.Ticker.Ask):
		d.Note = "gain: ask above the buy level"
	case s.QuoteBalance.Less(limit):
		d.Note = "gain: quote balance below TRADING_LIMIT"
	default:
		d.Orders = append(d.Orders, domain.OrderRequest{Side: domain.Buy, Kind: domain.KindLimit, Amount: amountFor(limit, s.Ticker.Ask), Price: s.Ticker.Ask})
		d.Note = "gain: buying below the EMA"
	}
	return d, nil
}

// StepGridStrategy keeps one buy order a step below and one sell order a
// step above the last price, so it buys dips and sells rises step by step.
// Parameters:
//
//	TRADING_LIMIT       quote amount per step (default 100)
//	STEP                grid spacing in percent of the last price (default 1)
//	MIN_VOLUME_TO_SELL  quote value below which the base balance is dust (default 10)
//	BUY_ENABLED         place buys (default true)
//	SELL_ENABLED        place sells (default true)
//
// Each cycle:
//   - without an open buy and with quote balance ≥ TRADING_LIMIT: a limit buy
//     at last × (1 − STEP/100) of TRADING_LIMIT/price (rounded down);
//   - without an open sell and holding base worth ≥ MIN_VOLUME_TO_SELL: a
//     limit sell at last × (1 + STEP/100), raised to ABP × (1 + STEP/100) when
//     the ABP is known and higher (it never sells a step below cost), of
//     TRADING_LIMIT/price base, or the whole available base if less.
//
// Orders already resting are not moved when the price runs away; cancel
// them through the API to re-centre the grid.
type StepGridStrategy struct{}

// Name returns "stepgrid".
func (StepGridStrategy) Name() string { return StrategyStepGrid }

// Decide applies the rule above.
func (StepGridStrategy) Decide(s PairState, p domain.StrategyParams) (StrategyDecision, error) {
	var d StrategyDecision
	r := params{p: p}
	limit := r.positive("TRADING_LIMIT", DefaultTradingLimit)
	step := r.positive("STEP", DefaultStep)
	r.check(step.Cmp(decimal.DecimalFromInt(100)) < 0, "strategy parameter STEP must be below 100 (percent), not %s", step)
	minSell := r.nonNegative("MIN_VOLUME_TO_SELL", DefaultMinVolumeToSell)
	buyOn, sellOn := r.sides()
	if r.err != nil {
		return d, r.err
	}
	last := s.Ticker.Last
	if last.Sign() <= 0 {
		d.Note = "stepgrid: no last price yet"
		return d, nil
	}
	buyPrice := last.Sub(last.Mul(step).DivInt(100))
	sellPrice := last.Add(last.Mul(step).DivInt(100))
	if s.ABP.IsPos() {
		sellPrice = sellPrice.Max(s.ABP.Add(s.ABP.Mul(step).DivInt(100)))
	}
	d.Memory = map[string]decimal.Decimal{"buyPrice": buyPrice, "sellPrice": sellPrice}

	var openBuy, openSell bool
	for _, o := range s.OpenOrders {
		switch o.Side {
		case domain.Buy:
			openBuy = true
		case domain.Sell:
			openSell = true
		}
	}
	var notes []string
	if buyOn && !openBuy {
		if s.QuoteBalance.Cmp(limit) >= 0 && buyPrice.IsPos() {
			d.Orders = append(d.Orders, domain.OrderRequest{Side: domain.Buy, Kind: domain.KindLimit, Amount: amountFor(limit, buyPrice), Price: buyPrice})
			notes = append(notes, "buy a step below")
		} else {
			notes = append(notes, "quote balance below TRADING_LIMIT")
		}
	}
	holding := holdsBase(s, minSell)
	if sellOn && !openSell && holding {
		amt := amountFor(limit, sellPrice).Min(s.BaseBalance)
		d.Orders = append(d.Orders, domain.OrderRequest{Side: domain.Sell, Kind: domain.KindLimit, Amount: amt, Price: sellPrice})
		notes = append(notes, "sell a step above")
	}
	if len(notes) == 0 {
		notes = append(notes, "orders in place")
	}
	d.Note = "stepgrid: " + strings.Join(notes, ", ")
	return d, nil
}

// amountFor returns quote/price in base units, rounded down to 8 decimals
// (the quantity precision of the strategies: the market's step filter
// rounds further), so that amount × price never exceeds quote.
func amountFor(quote, price decimal.Decimal) decimal.Decimal {
	unit := decimal.NewDecimal(1, -8)
	a := quote.Div(price)
	a = a.Sub(a.Rem(unit))
	for a.IsPos() && quote.Less(a.Mul(price)) {
		a = a.Sub(unit)
	}
	return a
}

// holdsBase reports whether s holds base worth at least minSell at the bid
// (below it the balance is dust).
func holdsBase(s PairState, minSell decimal.Decimal) bool {
	return s.BaseBalance.IsPos() && s.BaseBalance.Mul(s.Ticker.Bid).Cmp(minSell) >= 0
}

// params reads a strategy's parameters in turn, keeping the first error:
// once it has one, the reads that follow are not made and give their
// defaults (or zero), so one check of err after the reads returns the
// error the first failing read or check found.
type params struct {
	p   domain.StrategyParams
	err error
}

// check records an EINVALID with the message format gives unless ok or
// an earlier error is kept.
func (r *params) check(ok bool, format string, args ...any) {
	if !ok && r.err == nil {
		r.err = domain.Errorf(domain.EINVALID, format, args...)
	}
}

// decimal reads a decimal parameter (def when unset).
func (r *params) decimal(name string, def decimal.Decimal) decimal.Decimal {
	if r.err != nil {
		return def
	}
	d, err := r.p.Decimal(name, def)
	r.err = err
	return d
}

// positive reads a decimal parameter that must be greater than 0.
func (r *params) positive(name string, def decimal.Decimal) decimal.Decimal {
	d := r.decimal(name, def)
	r.check(d.Sign() > 0, "strategy parameter %s must be greater than 0, not %s", name, d)
	return d
}

// nonNegative reads a decimal parameter that must not be negative.
func (r *params) nonNegative(name string, def decimal.Decimal) decimal.Decimal {
	d := r.decimal(name, def)
	r.check(!d.IsNeg(), "strategy parameter %s must not be negative, not %s", name, d)
	return d
}

// int reads a whole-number parameter (def when unset).
func (r *params) int(name string, def int) int {
	if r.err != nil {
		return def
	}
	n, err := r.p.Int(name, def)
	r.err = err
	return n
}

// sides reads BUY_ENABLED and SELL_ENABLED (both default true).
func (r *params) sides() (buyOn, sellOn bool) {
	if r.err != nil {
		return false, false
	}
	if buyOn, r.err = r.p.Bool("BUY_ENABLED", true); r.err != nil {
		return false, false
	}
	sellOn, r.err = r.p.Bool("SELL_ENABLED", true)
	return buyOn, sellOn
}
