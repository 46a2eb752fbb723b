package projections

import (
	"encoding/json"
	"sort"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // zones on a bare machine (DESIGN §4)

	"github.com/tradeledger/tradeledger/domain"
)

// PNL aggregates. Every fill is added, as it is applied, to a bucket of 15
// UTC minutes in its pair's series and in its quote currency's series (the
// sum of every pair with that quote). A day in any IANA zone is a run of
// whole buckets, since every zone offset in use is a multiple of 15 minutes
// (30- and 45-minute zones included); for the historical local-mean-time
// offsets that are not, a bucket belongs to the day its start falls in. So
// no request ever rescans fills: it folds at most one bucket per 15 minutes
// of history per series, and sums of pnl over a period use per-bucket
// prefix sums (O(log n)).
//
// Units. Amounts are in a pair's quote currency. A query over pairs of
// different quotes is answered in the reporting currency, at rates from
// the log (pnlconv.go), unless it names one quote to restrict to; nothing
// ever adds USDT to BTC without converting it.

// BucketSeconds is the width of a PNL bucket.
const BucketSeconds = 900

// bucket aggregates the fills of one 15-minute slot (or, as a series'
// total, of all time).
type bucket struct {
	slot                        int64          // unix seconds / BucketSeconds
	cum                         domain.Decimal // Σ pnl of this and every earlier bucket
	trades, buys, sells         int32
	wins, losses, evens         int32 // closing trades by pnl sign
	priced                      int32 // closing trades whose pnl is in the bucket (all but unconverted ones)
	uBuys, uSells               int32 // orders by their first fill
	uWins, uLosses              int32 // sell orders by the sign of their summed pnl
	pnl, profit, loss, fees     domain.Decimal
	cpWins, cpLosses            domain.Decimal // Σ costProceed of winning / losing closing trades
	buyValue, sellValue, volume domain.Decimal // Σ baseValue of buys / sells; Σ rate×amount
	unmatched, invested         domain.Decimal // Σ unmatchedBaseValue; Σ cost of consumed lots
	hero, fuck                  domain.Decimal
	heroT, fuckT                int64
	firstT, lastT               int64 // first and last fill time (ms)
}

// series is a time-ordered run of buckets and their total.
type series struct {
	b     []bucket
	total bucket
}

// fillFx is what one fill adds to a bucket.
type fillFx struct {
	t                    int64
	sell, closing, first bool
	noMoney              bool // an unconverted fill: counted, no money (pnlconv.go)
	sign                 int8 // the sign of the fill's pnl in its own currency
	value, net, fee, pnl domain.Decimal
	unmatched, invested  domain.Decimal
	uniqueFrom, uniqueTo int8 // unique win/loss: counted sign before and after (2: none)
	uniqueSlot           int64
}

func (b *bucket) add(fx *fillFx) {
	if b.trades == 0 || fx.t < b.firstT {
		b.firstT = fx.t
	}
	if fx.t > b.lastT {
		b.lastT = fx.t
	}
	b.trades++
	b.volume = b.volume.Add(fx.value)
	b.fees = b.fees.Add(fx.fee)
	if fx.sell {
		b.sells++
		b.sellValue = b.sellValue.Add(fx.net)
		b.unmatched = b.unmatched.Add(fx.unmatched)
		if fx.first {
			b.uSells++
		}
	} else {
		b.buys++
		b.buyValue = b.buyValue.Add(fx.net)
		if fx.first {
			b.uBuys++
		}
	}
	if !fx.closing {
		return
	}
	switch fx.sign {
	case 1:
		b.wins++
	case -1:
		b.losses++
	default:
		b.evens++
	}
	if fx.noMoney {
		return
	}
	closes := b.priced
	b.priced++
	b.pnl = b.pnl.Add(fx.pnl)
	b.invested = b.invested.Add(fx.invested)
	switch fx.sign {
	case 1:
		b.profit = b.profit.Add(fx.pnl)
		b.cpWins = b.cpWins.Add(fx.net)
	case -1:
		b.loss = b.loss.Add(fx.pnl)
		b.cpLosses = b.cpLosses.Add(fx.net)
	}
	if closes == 0 || fx.pnl > b.hero || (fx.pnl == b.hero && fx.t < b.heroT) {
		b.hero, b.heroT = fx.pnl, fx.t
	}
	if closes == 0 || fx.pnl < b.fuck || (fx.pnl == b.fuck && fx.t < b.fuckT) {
		b.fuck, b.fuckT = fx.pnl, fx.t
	}
}

// unique moves a sell order's unique win/loss count from sign from to sign
// to (2 means not counted).
func (b *bucket) unique(from, to int8) {
	switch from {
	case 1:
		b.uWins--
	case -1:
		b.uLosses--
	}
	switch to {
	case 1:
		b.uWins++
	case -1:
		b.uLosses++
	}
}

// merge adds o into b (as for totals over several buckets).
func (b *bucket) merge(o *bucket) {
	if o.trades == 0 {
		return
	}
	bc, oc := b.priced, o.priced
	if oc > 0 {
		if bc == 0 || o.hero > b.hero || (o.hero == b.hero && o.heroT < b.heroT) {
			b.hero, b.heroT = o.hero, o.heroT
		}
		if bc == 0 || o.fuck < b.fuck || (o.fuck == b.fuck && o.fuckT < b.fuckT) {
			b.fuck, b.fuckT = o.fuck, o.fuckT
		}
	}
	if b.trades == 0 || o.firstT < b.firstT {
		b.firstT = o.firstT
	}
	b.lastT = max(b.lastT, o.lastT)
	b.trades += o.trades
	b.buys += o.buys
	b.sells += o.sells
	b.wins += o.wins
	b.losses += o.losses
	b.evens += o.evens
	b.priced += o.priced
	b.uBuys += o.uBuys
	b.uSells += o.uSells
	b.uWins += o.uWins
	b.uLosses += o.uLosses
	b.pnl = b.pnl.Add(o.pnl)
	b.profit = b.profit.Add(o.profit)
	b.loss = b.loss.Add(o.loss)
	b.fees = b.fees.Add(o.fees)
	b.cpWins = b.cpWins.Add(o.cpWins)
	b.cpLosses = b.cpLosses.Add(o.cpLosses)
	b.buyValue = b.buyValue.Add(o.buyValue)
	b.sellValue = b.sellValue.Add(o.sellValue)
	b.volume = b.volume.Add(o.volume)
	b.unmatched = b.unmatched.Add(o.unmatched)
	b.invested = b.invested.Add(o.invested)
}

// at returns the bucket of slot, creating it in order.
func (s *series) at(slot int64) int {
	n := len(s.b)
	if n > 0 && s.b[n-1].slot == slot {
		return n - 1
	}
	if n == 0 || s.b[n-1].slot < slot {
		cum := domain.Zero
		if n > 0 {
			cum = s.b[n-1].cum
		}
		s.b = append(s.b, bucket{slot: slot, cum: cum})
		return n
	}
	i := sort.Search(n, func(i int) bool { return s.b[i].slot >= slot })
	if s.b[i].slot == slot {
		return i
	}
	cum := domain.Zero
	if i > 0 {
		cum = s.b[i-1].cum
	}
	s.b = append(s.b, bucket{})
	copy(s.b[i+1:], s.b[i:])
	s.b[i] = bucket{slot: slot, cum: cum}
	return i
}

func (s *series) add(fx *fillFx) {
	slot := floorDiv(fx.t, BucketSeconds*1000)
	i := s.at(slot)
	s.b[i].add(fx)
	s.total.add(fx)
	if fx.closing && fx.pnl != 0 && !fx.noMoney {
		for j := i; j < len(s.b); j++ { // only the last bucket, but for late fills
			s.b[j].cum = s.b[j].cum.Add(fx.pnl)
		}
	}
	if fx.uniqueFrom != fx.uniqueTo {
		s.b[s.at(fx.uniqueSlot)].unique(fx.uniqueFrom, fx.uniqueTo)
		s.total.unique(fx.uniqueFrom, fx.uniqueTo)
	}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// addToSeries folds one applied fill into its pair's and its quote's series.
func (l *Ledger) addToSeries(b *pairBook, st *orderState, t int64, sell bool, r *domain.FillPnl, net domain.Decimal) {
	fx := fillFx{t: t, sell: sell, closing: sell && r.Matched > 0, first: st.fills == 1,
		value: r.Value, net: net, fee: r.Fee, pnl: r.Pnl, unmatched: r.UnmatchedValue,
		uniqueFrom: 2, uniqueTo: 2, sign: int8(r.Pnl.Sign())}
	if fx.closing {
		fx.invested = r.LotCost
		st.pnl = st.pnl.Add(r.Pnl)
		sign := int8(st.pnl.Sign())
		if st.uniqueSign == 0 { // not counted yet: count in this fill's bucket
			st.uniqueSlot = floorDiv(t, BucketSeconds*1000)
			fx.uniqueTo = sign
		} else if old := st.uniqueSign - 2; old != sign { // stored as sign+2 once counted
			fx.uniqueFrom, fx.uniqueTo = old, sign
		}
		st.uniqueSign = sign + 2
		fx.uniqueSlot = st.uniqueSlot
	}
	// A fill's price is a rate between its currencies (applyFill sets
	// lastPrice before it calls here); it applies to the fill itself.
	l.conv.observe(b.quote, b.base, t, b.lastPrice)
	l.convertFill(b, &fx) // before b.series.add: see convertFill
	b.series.add(&fx)
	q := l.quotes[b.quote]
	if q == nil {
		q = &series{}
		l.quotes[b.quote] = q
	}
	q.add(&fx)
}

// rangePnl returns Σ pnl of the buckets with from ≤ start < to (unix s).
func (s *series) rangePnl(from, to int64) domain.Decimal {
	i, j := s.span(from, to)
	if i >= j {
		return 0
	}
	before := domain.Zero
	if i > 0 {
		before = s.b[i-1].cum
	}
	return s.b[j-1].cum.Sub(before)
}

// span returns the bucket index range [i, j) starting in [from, to) (unix s).
func (s *series) span(from, to int64) (int, int) {
	i := sort.Search(len(s.b), func(k int) bool { return s.b[k].slot*BucketSeconds >= from })
	j := sort.Search(len(s.b), func(k int) bool { return s.b[k].slot*BucketSeconds >= to })
	return i, max(i, j)
}

// sum returns the merge of the buckets starting in [from, to), or the total
// when the range is unbounded.
func (s *series) sum(from, to int64) bucket {
	if from <= minTime && to >= maxTime {
		return s.total
	}
	var out bucket
	i, j := s.span(from, to)
	for k := i; k < j; k++ {
		out.merge(&s.b[k])
	}
	return out
}

const (
	minTime = -1 << 50
	maxTime = 1 << 50
)

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
		var c struct {
			Config struct {
				Bot struct {
					Reporting any `json:"REPORTING_CURRENCY"`
				} `json:"bot"`
				Pairs map[string]map[string]struct {
					Strategy string `json:"strategy"`
				} `json:"pairs"`
			} `json:"config"`
		}
		if err := json.Unmarshal(e.Data, &c); err != nil {
			return nil // the config projection reports bad documents; strategies stay as they were
		}
		l.conv.reporting, _ = c.Config.Bot.Reporting.(string)
		l.strat = map[string]string{}
		for ex, pairs := range c.Config.Pairs {
			for p, v := range pairs {
				l.strat[domain.PairKey(ex, p)] = v.Strategy
			}
		}
	}
	return nil
}

var locations sync.Map // name → *time.Location

// LoadZone returns the IANA zone name (from the embedded database when the
// machine has none), or EINVALID for "", "Local" and unknown names. Zones
// are cached: a request never parses zone data twice.
func LoadZone(name string) (*time.Location, error) {
	if v, ok := locations.Load(name); ok {
		return v.(*time.Location), nil
	}
	if name == "" || name == "Local" || strings.Contains(name, "..") {
		return nil, domain.Errorf(domain.EINVALID, "timezone %q is not an IANA zone name (e.g. Europe/Amsterdam)", name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, domain.Errorf(domain.EINVALID, "timezone %q is not a known IANA zone (e.g. Europe/Amsterdam, Asia/Kathmandu)", name)
	}
	locations.Store(name, loc)
	return loc, nil
}

// midnight returns the start of t's day in loc.
func midnight(t time.Time, loc *time.Location) time.Time {
	y, m, d := t.In(loc).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, loc)
}

// DayPnl is one day of a daily history: date (YYYY-MM-DD in the request's
// zone), number of fills, volume (Σ rate×amount), realized pnl, and the
// running sums from the first day of the history: cumulativePnl and
// cumulativePnlPercent = cumulativePnl ÷ cumulative invested × 100, where
// invested is the cost of the lots consumed by closing trades.
type DayPnl struct {
	Date                 string        `json:"date"`
	NumberOfTrades       int64         `json:"numberOfTrades"`
	TotalVolume          domain.Number `json:"totalVolume"`
	Pnl                  domain.Number `json:"pnl"`
	CumulativePnl        domain.Number `json:"cumulativePnl"`
	CumulativePnlPercent domain.Number `json:"cumulativePnlPercent"`
	UnmatchedBaseValue   domain.Number `json:"unmatchedBaseValue"`

	start    int64 // unix s
	invested domain.Decimal
}

// foldDays folds the buckets of ss starting in [from, to) (unix s) into
// days of loc, oldest first; days without fills are left out.
func foldDays(ss []*series, from, to int64, loc *time.Location) []DayPnl {
	var days []DayPnl
	merge := len(ss) > 1
	idx := map[int64]int{}
	for _, s := range ss {
		i, j := s.span(from, to)
		var ds, de int64 = 1, 0
		cur := -1
		for k := i; k < j; k++ {
			bk := &s.b[k]
			if bk.trades == 0 {
				continue
			}
			st := bk.slot * BucketSeconds
			if st < ds || st >= de {
				m := midnight(time.Unix(st, 0), loc)
				ds = m.Unix()
				de = m.AddDate(0, 0, 1).Unix()
				if merge {
					var ok bool
					if cur, ok = idx[ds]; !ok {
						cur = len(days)
						idx[ds] = cur
						days = append(days, DayPnl{start: ds, Date: m.Format("2006-01-02")})
					}
				} else {
					cur = len(days)
					days = append(days, DayPnl{start: ds, Date: m.Format("2006-01-02")})
				}
			}
			dp := &days[cur]
			dp.NumberOfTrades += int64(bk.trades)
			dp.TotalVolume = domain.Number(domain.Decimal(dp.TotalVolume).Add(bk.volume))
			dp.Pnl = domain.Number(domain.Decimal(dp.Pnl).Add(bk.pnl))
			dp.UnmatchedBaseValue = domain.Number(domain.Decimal(dp.UnmatchedBaseValue).Add(bk.unmatched))
			dp.invested = dp.invested.Add(bk.invested)
		}
	}
	if merge {
		sort.Slice(days, func(i, j int) bool { return days[i].start < days[j].start })
	}
	var cum, inv domain.Decimal
	for i := range days {
		cum = cum.Add(domain.Decimal(days[i].Pnl))
		inv = inv.Add(days[i].invested)
		days[i].CumulativePnl = domain.Number(cum)
		days[i].CumulativePnlPercent = domain.Number(domain.PnlPercent(cum, inv))
	}
	return days
}

// PnlScope selects pairs for a PNL query.
type PnlScope struct {
	// Keys are pair keys; ["All"] (or a single "All") selects every pair.
	Keys []string
	// Exchange, when set instead of Keys, selects every pair of it.
	Exchange string
	// Quote restricts to pairs of one quote currency (no conversion).
	Quote string
}

type scoped struct {
	keys   []string    // selected keys, sorted
	books  []*pairBook // known books of keys (same order, nil for keys without fills)
	unit   string      // the one quote currency ("" when several)
	quotes []string    // the quote currencies of keys, sorted
	all    bool
}

// ScopeKeys is a PnlScope resolved against the known pair keys.
type ScopeKeys struct {
	Keys   []string // selected keys, sorted
	Unit   string   // their one quote currency ("" when several)
	Quotes []string // their quote currencies, sorted
	All    bool     // the scope was ["All"]
}

// ResolveScope is ResolveScopeMixed for a reader that does not convert
// between currencies (the ClickHouse reader): a selection spanning several
// quote currencies is EINVALID, naming them and telling to pass quote.
func ResolveScope(sc PnlScope, known []string) (ScopeKeys, error) {
	out, err := ResolveScopeMixed(sc, known)
	if err == nil && len(out.Quotes) > 1 {
		return out, domain.Errorf(domain.EINVALID, "the selected pairs are quoted in %s; this PNL source does not convert between currencies: pass quote (one of them) or keys of one quote", strings.Join(out.Quotes, ", "))
	}
	return out, err
}

// ResolveScopeMixed checks sc and selects its pair keys among known (every
// pair key the read model has seen). Explicit keys need not be known.
// sc.Quote narrows the selection to one quote currency (an explicit key of
// another quote is EINVALID). Every PNL reader resolves scopes here.
func ResolveScopeMixed(sc PnlScope, known []string) (ScopeKeys, error) {
	var out ScopeKeys
	all := len(sc.Keys) == 1 && strings.EqualFold(sc.Keys[0], "All")
	var keys []string
	switch {
	case all:
		out.All = true
		keys = append(keys, known...)
	case sc.Exchange != "":
		for _, k := range known {
			if ex, _, err := domain.SplitPairKey(k); err == nil && ex == sc.Exchange {
				keys = append(keys, k)
			}
		}
	case len(sc.Keys) == 0:
		return out, domain.Errorf(domain.EINVALID, "keys must name at least one pair key, or be [\"All\"]")
	default:
		seen := map[string]bool{}
		for _, k := range sc.Keys {
			if _, _, err := splitKey(k); err != nil {
				return out, err
			}
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	quotes := map[string]bool{}
	for _, k := range keys {
		q, _, _ := splitKey(k)
		if sc.Quote != "" && q != sc.Quote {
			if out.All || sc.Exchange != "" {
				continue
			}
			return out, domain.Errorf(domain.EINVALID, "key %q is not quoted in %s", k, sc.Quote)
		}
		quotes[q] = true
		out.Keys = append(out.Keys, k)
	}
	for q := range quotes {
		out.Quotes = append(out.Quotes, q)
	}
	sort.Strings(out.Quotes)
	if len(out.Quotes) == 1 {
		out.Unit = out.Quotes[0]
	}
	if sc.Quote != "" {
		out.Unit = sc.Quote
	}
	return out, nil
}

// resolve checks the scope and returns its pairs, books and unit.
func (l *Ledger) resolve(sc PnlScope) (scoped, error) {
	known := make([]string, 0, len(l.pairs))
	for _, b := range l.pairs {
		known = append(known, b.key)
	}
	r, err := ResolveScopeMixed(sc, known)
	if err != nil {
		return scoped{}, err
	}
	out := scoped{keys: r.Keys, unit: r.Unit, quotes: r.Quotes, all: r.All}
	for _, k := range r.Keys {
		var b *pairBook
		if i, ok := l.byKey[k]; ok {
			b = l.pairs[i]
		}
		out.books = append(out.books, b)
	}
	return out, nil
}

func splitKey(k string) (quote, base string, err error) {
	_, pair, err := domain.SplitPairKey(k)
	if err != nil {
		return "", "", err
	}
	return domain.SplitPair(pair)
}

// seriesOf returns the series to fold for sc: the quote's series when every
// pair of that quote is selected, else each selected pair's.
func (l *Ledger) seriesOf(sc *scoped) []*series {
	if sc.all || len(sc.books) == l.countQuote(sc.unit) && l.countQuote(sc.unit) > 0 && allKnown(sc.books) {
		if q := l.quotes[sc.unit]; q != nil {
			return []*series{q}
		}
	}
	var ss []*series
	for _, b := range sc.books {
		if b != nil {
			ss = append(ss, &b.series)
		}
	}
	return ss
}

func allKnown(bs []*pairBook) bool {
	for _, b := range bs {
		if b == nil {
			return false
		}
	}
	return true
}

func (l *Ledger) countQuote(q string) int {
	n := 0
	for _, b := range l.pairs {
		if b.quote == q {
			n++
		}
	}
	return n
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

// daySpan counts calendar days in loc from the day of first to the day of
// last (ms), both included; 0 without fills.
func daySpan(first, last int64, loc *time.Location) int64 {
	if first == 0 && last == 0 {
		return 0
	}
	return dayNumber(last, loc) - dayNumber(first, loc) + 1
}

// dayNumber is the count of days from 1970-01-01 to the calendar date of
// ms in loc.
func dayNumber(ms int64, loc *time.Location) int64 {
	y, m, d := time.UnixMilli(ms).In(loc).Date()
	return floorDiv(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix(), 86400)
}

// rangeSeconds turns a [from, to) range in ms (0: unbounded) into bucket
// bounds in unix seconds: a bucket is in the range when its start lies in
// [from rounded down to its bucket, to).
func rangeSeconds(fromMs, toMs int64) (int64, int64) {
	from, to := int64(minTime), int64(maxTime)
	if fromMs != 0 {
		from = floorDiv(fromMs, BucketSeconds*1000) * BucketSeconds
	}
	if toMs != 0 {
		to = -floorDiv(-toMs, 1000) // ceil: buckets starting before toMs
	}
	return from, to
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
