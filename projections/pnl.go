package projections

import (
	"time"

	"github.com/tradeledger/tradeledger/domain"
)

// The PNL queries of the Ledger: pnl/overview, pnl/daily, pnl/sum and
// pnl/total (the aggregates they read are in pnlbucket.go, scopes in
// pnlscope.go, days and zones in pnldays.go, currency conversion in
// pnlconv.go).

// PnlReader is the one PNL read contract: what the PNL routes and
// assets/total read. *Ledger implements it from memory; the ClickHouse
// reader (projections/clickhouse.Reader) implements it from the analytics
// tables with the same answers for the same log, except that it refuses a
// selection over several quote currencies (EINVALID asking for quote).
type PnlReader interface {
	Overview(q OverviewQuery) (*Overview, error)
	Daily(q DailyQuery) ([]DayPnl, domain.Decimal, string, error)
	Sum(scope PnlScope, fromMs, toMs int64) (SumResult, error)
	Total(key string) (PairTotal, error)
	AssetHistory(exchange, base string, start, end int64) []AssetPoint
}

var _ PnlReader = (*Ledger)(nil)

func (l *Ledger) applyConfig(e *domain.Event) error {
	switch e.Type {
	case domain.TypePairAdded:
		var p domain.PairAdded
		if err := e.Decode(&p); err != nil {
			return err
		}
		l.strat[domain.PairKey(p.Exchange, p.Pair)] = p.Strategy
	case domain.TypePairRemoved:
		var p domain.PairRemoved
		if err := e.Decode(&p); err != nil {
			return err
		}
		delete(l.strat, domain.PairKey(p.Exchange, p.Pair))
	case domain.TypeConfigReplaced:
		c, ok := domain.DecodePnlConfig(e.Data)
		if !ok {
			return nil // the config projection reports bad documents; strategies stay as they were
		}
		l.conv.reporting = c.Reporting
		l.strat = map[string]string{}
		for _, p := range c.Strategies {
			l.strat[domain.PairKey(p.Exchange, p.Pair)] = p.Strategy
		}
	}
	return nil
}

// PeriodPnl is a period's pnl; PerPair is set where the spec has it.
type PeriodPnl struct {
	Pnl     domain.Number            `json:"pnl"`
	PerPair map[string]domain.Number `json:"perPair,omitempty"`
}

// TradeRef is a hero or fuckup trade.
type TradeRef struct {
	Pnl  domain.Number `json:"pnl"`
	Time int64         `json:"time"`
}

// PnlTotal is the overview's total section (definitions in domain/pnl.go):
// pnl is realized pnl; numberOfTrades counts fills; winning/losing/breakeven
// count closing trades; buyPnl is the unrealized pnl of the lots still held
// (valued at each pair's last fill price, as of now, whatever the range);
// sellPnl is the realized pnl (= pnl); buyBaseValue and sellBaseValue are
// Σ baseValue of buy and sell records.
type PnlTotal struct {
	Pnl            domain.Number `json:"pnl"`
	NumberOfTrades int64         `json:"numberOfTrades"`
	HeroTrade      TradeRef      `json:"heroTrade"`
	FuckupTrade    TradeRef      `json:"fuckupTrade"`
	AveragePnl     domain.Number `json:"averagePnl"`
	SellCount      int64         `json:"sellCount"`
	BuyCount       int64         `json:"buyCount"`
	Winning        int64         `json:"winning"`
	Losing         int64         `json:"losing"`
	Breakeven      int64         `json:"breakeven"`
	WinRate        string        `json:"winRate"`
	BuyPnl         domain.Number `json:"buyPnl"`
	SellPnl        domain.Number `json:"sellPnl"`
	BuyBaseValue   domain.Number `json:"buyBaseValue"`
	SellBaseValue  domain.Number `json:"sellBaseValue"`
	UnmatchedValue domain.Number `json:"unmatchedBaseValue"`
}

// KeyPnl is an element of pnlsPerPair.
type KeyPnl struct {
	Key string        `json:"key"`
	Pnl domain.Number `json:"pnl"`
}

// PairDetail is an element of detailedPerPair. cumulative_loss is the
// (negative) sum of losing trades' pnl; cumulative_costproceed_wins/losses
// sum the costProceed of winning/losing closing trades; profit_count and
// loss_count count closing trades, unique_profit_count/unique_loss_count
// sell orders by the sign of their summed pnl; unique_buy_count and
// unique_sell_count count orders with fills; unrealized_pnl values the lots
// held at the last fill price (now, whatever the range).
type PairDetail struct {
	Strategy                  string        `json:"strategy"`
	CumulativePnl             domain.Number `json:"cumulative_pnl"`
	CumulativeProfit          domain.Number `json:"cumulative_profit"`
	CumulativeLoss            domain.Number `json:"cumulative_loss"`
	CumulativeFees            domain.Number `json:"cumulative_fees"`
	CumulativeCostProceedWins domain.Number `json:"cumulative_costproceed_wins"`
	CumulativeCostProceedLoss domain.Number `json:"cumulative_costproceed_losses"`
	ProfitCount               int64         `json:"profit_count"`
	LossCount                 int64         `json:"loss_count"`
	UniqueProfitCount         int64         `json:"unique_profit_count"`
	UniqueLossCount           int64         `json:"unique_loss_count"`
	BuyCount                  int64         `json:"buy_count"`
	SellCount                 int64         `json:"sell_count"`
	UniqueBuyCount            int64         `json:"unique_buy_count"`
	UniqueSellCount           int64         `json:"unique_sell_count"`
	CumulativeBuyValue        domain.Number `json:"cumulative_buy_value"`
	CumulativeSellValue       domain.Number `json:"cumulative_sell_value"`
	UnrealizedPnl             domain.Number `json:"unrealized_pnl"`
	DailyPnlPerThousand       string        `json:"daily_pnl_per_thousand"`
	Key                       string        `json:"key"`
}

// Overview is the body of POST pnl/overview.
type Overview struct {
	Today           PeriodPnl    `json:"today"`
	Yesterday       PeriodPnl    `json:"yesterday"`
	WeekAgo         PeriodPnl    `json:"weekAgo"`
	MonthAgo        PeriodPnl    `json:"monthAgo"`
	LastYear        PeriodPnl    `json:"lastYear"`
	YearAgo         PeriodPnl    `json:"yearAgo"`
	Total           PnlTotal     `json:"total"`
	DailyHistory    []DayPnl     `json:"dailyHistory"`
	PnlsPerPair     []KeyPnl     `json:"pnlsPerPair"`
	DetailedPerPair []PairDetail `json:"detailedPerPair"`
	Unit            string       `json:"unit"`
	// Over several quote currencies only (pnlconv.go): each quote's own
	// total in its own currency, and per currency what had no rate.
	PerQuote    map[string]PnlTotal    `json:"perQuote,omitempty"`
	Unconverted map[string]Unconverted `json:"unconverted,omitempty"`
}

// OverviewQuery is a pnl/overview request. From/To (ms) bound total,
// dailyHistory, pnlsPerPair and detailedPerPair (0: unbounded); the period
// figures are relative to Now in Loc:
//
//	today      [midnight today, midnight tomorrow)
//	yesterday  [midnight yesterday, midnight today)
//	weekAgo    [midnight 7 days ago, midnight tomorrow)  — the last 7 days and today
//	monthAgo   [midnight one calendar month ago, midnight tomorrow)
//	yearAgo    [midnight one calendar year ago, midnight tomorrow), with perPair
//	lastYear   the previous calendar year, [1 Jan last year, 1 Jan this year)
//
// A range bound is rounded down to its 15-minute bucket.
type OverviewQuery struct {
	Scope    PnlScope
	Loc      *time.Location
	Now      time.Time
	From, To int64
}

// Overview computes the PNL overview, or EINVALID for bad keys. Over
// several quote currencies, total, the periods and dailyHistory are in the
// reporting currency (unit; pnlconv.go), pnlsPerPair, detailedPerPair and
// the periods' perPair in each pair's own quote, perQuote has each quote's
// total in its own currency and unconverted what had no rate.
func (l *Ledger) Overview(q OverviewQuery) (*Overview, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	sc, err := l.resolve(q.Scope)
	if err != nil {
		return nil, err
	}
	from, to := rangeSeconds(q.From, q.To)
	var mv *mixedView
	var ss []*series
	if len(sc.quotes) > 1 {
		mv = l.mixed(&sc)
		ss = mv.conv
		sc.unit = mv.unit
	} else {
		ss = l.seriesOf(&sc)
	}
	o := &Overview{Unit: sc.unit, DailyHistory: []DayPnl{}, PnlsPerPair: []KeyPnl{}, DetailedPerPair: []PairDetail{}}

	today := midnight(q.Now, q.Loc)
	tomorrow := today.AddDate(0, 0, 1).Unix()
	y0 := time.Date(today.Year()-1, 1, 1, 0, 0, 0, 0, q.Loc).Unix()
	y1 := time.Date(today.Year(), 1, 1, 0, 0, 0, 0, q.Loc).Unix()
	period := func(a, b int64) domain.Decimal {
		var s domain.Decimal
		for _, x := range ss {
			s = s.Add(x.rangePnl(a, b))
		}
		return s
	}
	o.Today.Pnl = domain.Number(period(today.Unix(), tomorrow))
	o.Yesterday.Pnl = domain.Number(period(today.AddDate(0, 0, -1).Unix(), today.Unix()))
	o.WeekAgo.Pnl = domain.Number(period(today.AddDate(0, 0, -7).Unix(), tomorrow))
	o.MonthAgo.Pnl = domain.Number(period(today.AddDate(0, -1, 0).Unix(), tomorrow))
	o.YearAgo.Pnl = domain.Number(period(today.AddDate(-1, 0, 0).Unix(), tomorrow))
	o.LastYear.Pnl = domain.Number(period(y0, y1))
	o.Today.PerPair = map[string]domain.Number{}
	o.YearAgo.PerPair = map[string]domain.Number{}

	var tot bucket
	var unrealized domain.Decimal
	for _, x := range ss {
		s := x.sum(from, to)
		tot.merge(&s)
	}
	perQuote := map[string]*quoteTotal{}
	for i, key := range sc.keys {
		b := sc.books[i]
		var s bucket
		var unr domain.Decimal
		var pt, py domain.Decimal
		if b != nil {
			s = b.series.sum(from, to)
			unr = b.unrealized()
			pt = b.series.rangePnl(today.Unix(), tomorrow)
			py = b.series.rangePnl(today.AddDate(-1, 0, 0).Unix(), tomorrow)
		}
		if mv == nil {
			unrealized = unrealized.Add(unr)
		} else {
			qt := perQuote[b.quoteOr(key)]
			if qt == nil {
				qt = &quoteTotal{}
				perQuote[b.quoteOr(key)] = qt
			}
			qt.b.merge(&s)
			qt.unrealized = qt.unrealized.Add(unr)
			if b != nil {
				unrealized = unrealized.Add(l.unrealizedIn(mv, b.quote, unr))
			}
		}
		o.Today.PerPair[key] = domain.Number(pt)
		o.YearAgo.PerPair[key] = domain.Number(py)
		o.PnlsPerPair = append(o.PnlsPerPair, KeyPnl{Key: key, Pnl: domain.Number(s.pnl)})
		o.DetailedPerPair = append(o.DetailedPerPair, PairDetail{
			Strategy:                  l.strat[key],
			CumulativePnl:             domain.Number(s.pnl),
			CumulativeProfit:          domain.Number(s.profit),
			CumulativeLoss:            domain.Number(s.loss),
			CumulativeFees:            domain.Number(s.fees),
			CumulativeCostProceedWins: domain.Number(s.cpWins),
			CumulativeCostProceedLoss: domain.Number(s.cpLosses),
			ProfitCount:               int64(s.wins),
			LossCount:                 int64(s.losses),
			UniqueProfitCount:         int64(s.uWins),
			UniqueLossCount:           int64(s.uLosses),
			BuyCount:                  int64(s.buys),
			SellCount:                 int64(s.sells),
			UniqueBuyCount:            int64(s.uBuys),
			UniqueSellCount:           int64(s.uSells),
			CumulativeBuyValue:        domain.Number(s.buyValue),
			CumulativeSellValue:       domain.Number(s.sellValue),
			UnrealizedPnl:             domain.Number(unr),
			DailyPnlPerThousand:       domain.DailyPnlPerThousand(s.pnl, s.invested, daySpan(s.firstT, s.lastT, q.Loc)),
			Key:                       key,
		})
	}
	o.Total = totalOf(&tot, unrealized)
	if days := foldDays(ss, from, to, q.Loc); days != nil {
		o.DailyHistory = days
	}
	if mv != nil {
		o.PerQuote = map[string]PnlTotal{}
		for _, qc := range sc.quotes {
			qt := perQuote[qc]
			if qt == nil {
				qt = &quoteTotal{}
			}
			o.PerQuote[qc] = totalOf(&qt.b, qt.unrealized)
		}
		mv.fold(from, to)
		o.Unconverted = mv.result()
	}
	return o, nil
}

// quoteTotal sums one quote currency's pairs of a mixed-quote overview.
type quoteTotal struct {
	b          bucket
	unrealized domain.Decimal
}

// quoteOr returns b's quote, or key's for a pair without fills (b nil).
func (b *pairBook) quoteOr(key string) string {
	if b != nil {
		return b.quote
	}
	q, _, _ := splitKey(key)
	return q
}

func totalOf(t *bucket, unrealized domain.Decimal) PnlTotal {
	closes := int64(t.wins + t.losses + t.evens)
	out := PnlTotal{
		Pnl:            domain.Number(t.pnl),
		NumberOfTrades: int64(t.trades),
		AveragePnl:     domain.Number(domain.AveragePnl(t.pnl, closes)),
		SellCount:      int64(t.sells),
		BuyCount:       int64(t.buys),
		Winning:        int64(t.wins),
		Losing:         int64(t.losses),
		Breakeven:      int64(t.evens),
		WinRate:        domain.WinRate(int64(t.wins), int64(t.losses), int64(t.evens)),
		BuyPnl:         domain.Number(unrealized),
		SellPnl:        domain.Number(t.pnl),
		BuyBaseValue:   domain.Number(t.buyValue),
		SellBaseValue:  domain.Number(t.sellValue),
		UnmatchedValue: domain.Number(t.unmatched),
	}
	if closes > 0 {
		out.HeroTrade = TradeRef{Pnl: domain.Number(t.hero), Time: t.heroT}
		out.FuckupTrade = TradeRef{Pnl: domain.Number(t.fuck), Time: t.fuckT}
	}
	return out
}

// unrealized values the lots held at the last fill price: qty×last − cost.
func (b *pairBook) unrealized() domain.Decimal {
	if b.lots.Qty() <= 0 {
		return 0
	}
	return b.lots.Qty().Mul(b.lastPrice).Sub(b.lots.Cost())
}

// DailyQuery selects days of one scope.
type DailyQuery struct {
	Scope    PnlScope
	Loc      *time.Location
	From, To int64 // ms, 0: unbounded
}

// Daily returns the daily history of the scope in [From, To), oldest first,
// with Σ unmatchedBaseValue over the range, and the unit.
func (l *Ledger) Daily(q DailyQuery) ([]DayPnl, domain.Decimal, string, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	sc, err := l.resolve(q.Scope)
	if err != nil {
		return nil, 0, "", err
	}
	ss := l.seriesOf(&sc)
	from, to := rangeSeconds(q.From, q.To)
	days := foldDays(ss, from, to, q.Loc)
	var unm domain.Decimal
	for _, x := range ss {
		s := x.sum(from, to)
		unm = unm.Add(s.unmatched)
	}
	if days == nil {
		days = []DayPnl{}
	}
	return days, unm, sc.unit, nil
}

// PairSum is an element of pnl/sum's data: realized pnl and invested (cost
// of the lots consumed by closing trades) of one pair in the range.
type PairSum struct {
	Key      string        `json:"key"`
	Pnl      domain.Number `json:"pnl"`
	Invested domain.Number `json:"invested"`
	Trades   int64         `json:"numberOfTrades"`
	Unit     string        `json:"unit"`
}

// SumResult is a pnl/sum answer: per pair figures (each in its pair's
// quote), their sums Pnl and Invested in Unit, and, over several quote
// currencies, each quote's sums in its own currency (PerQuote) and what
// had no rate (Unconverted).
type SumResult struct {
	Pairs         []PairSum
	Pnl, Invested domain.Decimal
	Unit          string
	PerQuote      map[string]QuoteSum
	Unconverted   map[string]Unconverted
}

// Sum returns per-pair pnl and invested in [from, to) (ms, 0: unbounded),
// their sums and the unit; over several quote currencies the sums are in
// the reporting currency (pnlconv.go).
func (l *Ledger) Sum(scope PnlScope, fromMs, toMs int64) (SumResult, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	sc, err := l.resolve(scope)
	if err != nil {
		return SumResult{}, err
	}
	from, to := rangeSeconds(fromMs, toMs)
	var mv *mixedView
	if len(sc.quotes) > 1 {
		mv = l.mixed(&sc)
		sc.unit = mv.unit
	}
	out := SumResult{Pairs: []PairSum{}, Unit: sc.unit}
	perQuote := map[string]QuoteSum{}
	for i, key := range sc.keys {
		var s bucket
		b := sc.books[i]
		if b != nil {
			s = b.series.sum(from, to)
		}
		q := b.quoteOr(key)
		out.Pairs = append(out.Pairs, PairSum{Key: key, Pnl: domain.Number(s.pnl), Invested: domain.Number(s.invested), Trades: int64(s.trades), Unit: q})
		if mv == nil {
			out.Pnl, out.Invested = out.Pnl.Add(s.pnl), out.Invested.Add(s.invested)
			continue
		}
		qs := perQuote[q]
		qs.Pnl = domain.Number(domain.Decimal(qs.Pnl).Add(s.pnl))
		qs.Invested = domain.Number(domain.Decimal(qs.Invested).Add(s.invested))
		qs.Trades += int64(s.trades)
		perQuote[q] = qs
		if b != nil {
			c, _ := l.inCurrency(b, mv.unit)
			cs := c.sum(from, to)
			out.Pnl, out.Invested = out.Pnl.Add(cs.pnl), out.Invested.Add(cs.invested)
		}
	}
	if mv != nil {
		mv.fold(from, to)
		out.PerQuote, out.Unconverted = perQuote, mv.result()
	}
	return out, nil
}

// PairTotal is the body of pnl/total: one pair's all-time figures.
type PairTotal struct {
	Key                string        `json:"key"`
	Pnl                domain.Number `json:"pnl"`
	NumberOfTrades     int64         `json:"numberOfTrades"`
	BuyCount           int64         `json:"buyCount"`
	SellCount          int64         `json:"sellCount"`
	Winning            int64         `json:"winning"`
	Losing             int64         `json:"losing"`
	Fees               domain.Number `json:"fees"`
	Invested           domain.Number `json:"invested"`
	UnmatchedBaseValue domain.Number `json:"unmatchedBaseValue"`
	UnrealizedPnl      domain.Number `json:"unrealizedPnl"`
	Balance            domain.Number `json:"balance"`
	InventoryCost      domain.Number `json:"inventory_cost"`
	ABP                domain.Number `json:"ABP"`
	Method             string        `json:"method"`
	Unit               string        `json:"unit"`
}

// Total returns key's all-time figures (zeros for a key without fills), or
// EINVALID for a malformed key.
func (l *Ledger) Total(key string) (PairTotal, error) {
	q, _, err := splitKey(key)
	if err != nil {
		return PairTotal{}, err
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := PairTotal{Key: key, Unit: q, Method: l.Method.String()}
	i, ok := l.byKey[key]
	if !ok {
		return out, nil
	}
	b := l.pairs[i]
	t := &b.series.total
	out.Pnl, out.NumberOfTrades = domain.Number(t.pnl), int64(t.trades)
	out.BuyCount, out.SellCount, out.Winning, out.Losing = int64(t.buys), int64(t.sells), int64(t.wins), int64(t.losses)
	out.Fees, out.Invested, out.UnmatchedBaseValue = domain.Number(t.fees), domain.Number(t.invested), domain.Number(t.unmatched)
	out.UnrealizedPnl, out.Balance = domain.Number(b.unrealized()), domain.Number(b.position)
	out.InventoryCost, out.ABP = domain.Number(b.lots.Cost()), domain.Number(b.lots.ABP())
	return out, nil
}
