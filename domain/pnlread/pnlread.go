package pnlread

import (
	"sort"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // zones on a bare machine

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// The PNL read contract: the queries, the answers and the one interface
// (PnlReader) that every PNL reader implements — the in-memory Ledger
// (projections) and the ClickHouse reader (projections/clickhouse) — so that
// neither reader imports the other; projections/pnltest is its conformance
// suite. Scopes are resolved (ResolveScope) and zones loaded (LoadZone) here
// for the same reason. Metric definitions are in domain/pnl.go.

// PnlScope selects pairs for a PNL query.
type PnlScope struct {
	// Keys are pair keys; ["All"] (or a single "All") selects every pair.
	Keys []string
	// Exchange, when set instead of Keys, selects every pair of it.
	Exchange string
	// Quote restricts to pairs of one quote currency (no conversion).
	Quote string
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
			if _, _, err := splitKeyQuote(k); err != nil {
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
		q, _, _ := splitKeyQuote(k)
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

// PnlReader is the one PNL read contract: what the PNL routes and
// assets/total read. *Ledger implements it from memory; the ClickHouse
// reader (projections/clickhouse.Reader) implements it from the analytics
// tables with the same answers for the same log, selections over several
// quote currencies included (converted into the reporting currency).
type PnlReader interface {
	Overview(q OverviewQuery) (*Overview, error)
	Daily(q DailyQuery) ([]DayPnl, decimal.Decimal, string, error)
	Sum(scope PnlScope, fromMs, toMs int64) (SumResult, error)
	Total(key string) (PairTotal, error)
	AssetHistory(exchange, base string, start, end int64) []AssetPoint
}

// PeriodPnl is a period's pnl; PerPair is set where the spec has it.
type PeriodPnl struct {
	Pnl     decimal.Number            `json:"pnl"`
	PerPair map[string]decimal.Number `json:"perPair,omitempty"`
}

// TradeRef is a hero or fuckup trade.
type TradeRef struct {
	Pnl  decimal.Number `json:"pnl"`
	Time int64          `json:"time"`
}

// PnlTotal is the overview's total section (definitions in domain/pnl.go):
// pnl is realized pnl; numberOfTrades counts fills; winning/losing/breakeven
// count closing trades; buyPnl is the unrealized pnl of the lots still held
// (valued at each pair's last fill price, as of now, whatever the range);
// sellPnl is the realized pnl (= pnl); buyBaseValue and sellBaseValue are
// Σ baseValue of buy and sell records.
type PnlTotal struct {
	Pnl            decimal.Number `json:"pnl"`
	NumberOfTrades int64          `json:"numberOfTrades"`
	HeroTrade      TradeRef       `json:"heroTrade"`
	FuckupTrade    TradeRef       `json:"fuckupTrade"`
	AveragePnl     decimal.Number `json:"averagePnl"`
	SellCount      int64          `json:"sellCount"`
	BuyCount       int64          `json:"buyCount"`
	Winning        int64          `json:"winning"`
	Losing         int64          `json:"losing"`
	Breakeven      int64          `json:"breakeven"`
	WinRate        string         `json:"winRate"`
	BuyPnl         decimal.Number `json:"buyPnl"`
	SellPnl        decimal.Number `json:"sellPnl"`
	BuyBaseValue   decimal.Number `json:"buyBaseValue"`
	SellBaseValue  decimal.Number `json:"sellBaseValue"`
	UnmatchedValue decimal.Number `json:"unmatchedBaseValue"`
}

// KeyPnl is an element of pnlsPerPair.
type KeyPnl struct {
	Key string         `json:"key"`
	Pnl decimal.Number `json:"pnl"`
}

// PairDetail is an element of detailedPerPair. cumulative_loss is the
// (negative) sum of losing trades' pnl; cumulative_costproceed_wins/losses
// sum the costProceed of winning/losing closing trades; profit_count and
// loss_count count closing trades, unique_profit_count/unique_loss_count
// sell orders by the sign of their summed pnl; unique_buy_count and
// unique_sell_count count orders with fills; unrealized_pnl values the lots
// held at the last fill price (now, whatever the range).
type PairDetail struct {
	Strategy                  string         `json:"strategy"`
	CumulativePnl             decimal.Number `json:"cumulative_pnl"`
	CumulativeProfit          decimal.Number `json:"cumulative_profit"`
	CumulativeLoss            decimal.Number `json:"cumulative_loss"`
	CumulativeFees            decimal.Number `json:"cumulative_fees"`
	CumulativeCostProceedWins decimal.Number `json:"cumulative_costproceed_wins"`
	CumulativeCostProceedLoss decimal.Number `json:"cumulative_costproceed_losses"`
	ProfitCount               int64          `json:"profit_count"`
	LossCount                 int64          `json:"loss_count"`
	UniqueProfitCount         int64          `json:"unique_profit_count"`
	UniqueLossCount           int64          `json:"unique_loss_count"`
	BuyCount                  int64          `json:"buy_count"`
	SellCount                 int64          `json:"sell_count"`
	UniqueBuyCount            int64          `json:"unique_buy_count"`
	UniqueSellCount           int64          `json:"unique_sell_count"`
	CumulativeBuyValue        decimal.Number `json:"cumulative_buy_value"`
	CumulativeSellValue       decimal.Number `json:"cumulative_sell_value"`
	UnrealizedPnl             decimal.Number `json:"unrealized_pnl"`
	DailyPnlPerThousand       string         `json:"daily_pnl_per_thousand"`
	Key                       string         `json:"key"`
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
	// UnconvertedFees are the fees of the range's fills charged in a third
	// asset that had no rate at their time (fold.ValueFee), per asset in
	// that asset: they are in no figure above. Absent when there are none.
	UnconvertedFees map[string]decimal.Number `json:"unconvertedFees,omitempty"`
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

// DailyQuery selects days of one scope.
type DailyQuery struct {
	Scope    PnlScope
	Loc      *time.Location
	From, To int64 // ms, 0: unbounded
}

// PairSum is an element of pnl/sum's data: realized pnl and invested (cost
// of the lots consumed by closing trades) of one pair in the range.
type PairSum struct {
	Key      string         `json:"key"`
	Pnl      decimal.Number `json:"pnl"`
	Invested decimal.Number `json:"invested"`
	Trades   int64          `json:"numberOfTrades"`
	Unit     string         `json:"unit"`
}

// SumResult is a pnl/sum answer: per pair figures (each in its pair's
// quote), their sums Pnl and Invested in Unit, and, over several quote
// currencies, each quote's sums in its own currency (PerQuote) and what
// had no rate (Unconverted).
type SumResult struct {
	Pairs         []PairSum
	Pnl, Invested decimal.Decimal
	Unit          string
	PerQuote      map[string]QuoteSum
	Unconverted   map[string]Unconverted
	// UnconvertedFees: as Overview.UnconvertedFees, for the range.
	UnconvertedFees map[string]decimal.Number
}

// PairTotal is the body of pnl/total: one pair's all-time figures.
type PairTotal struct {
	Key                string         `json:"key"`
	Pnl                decimal.Number `json:"pnl"`
	NumberOfTrades     int64          `json:"numberOfTrades"`
	BuyCount           int64          `json:"buyCount"`
	SellCount          int64          `json:"sellCount"`
	Winning            int64          `json:"winning"`
	Losing             int64          `json:"losing"`
	Fees               decimal.Number `json:"fees"`
	Invested           decimal.Number `json:"invested"`
	UnmatchedBaseValue decimal.Number `json:"unmatchedBaseValue"`
	UnrealizedPnl      decimal.Number `json:"unrealizedPnl"`
	Balance            decimal.Number `json:"balance"`
	InventoryCost      decimal.Number `json:"inventory_cost"`
	ABP                decimal.Number `json:"ABP"`
	Method             string         `json:"method"`
	Unit               string         `json:"unit"`
	// UnconvertedFees: as Overview.UnconvertedFees, over all time.
	UnconvertedFees map[string]decimal.Number `json:"unconvertedFees,omitempty"`
}

// QuoteSum is one quote currency's share of a pnl/sum answer over several
// quotes, in that currency.
type QuoteSum struct {
	Pnl      decimal.Number `json:"pnl"`
	Invested decimal.Number `json:"invested"`
	Trades   int64          `json:"numberOfTrades"`
}

// Unconverted is what a mixed-quote answer could not convert into the
// reporting currency for want of a rate at its time, in its own currency:
// realized pnl, invested and the number of fills in the range, and the
// unrealized pnl of lots held (overview only) when no rate is known now.
type Unconverted struct {
	Pnl           decimal.Number `json:"pnl"`
	Invested      decimal.Number `json:"invested"`
	Trades        int64          `json:"numberOfTrades"`
	UnrealizedPnl decimal.Number `json:"unrealizedPnl,omitzero"`
}

// AssetPoint is an element of assets/total.
type AssetPoint struct {
	ID        int64          `json:"id"`
	BaseKey   string         `json:"base_key"`
	Amount    decimal.Number `json:"amount"`
	Timestamp int64          `json:"timestamp"`
	// Unpriced are the assets held at the snapshot that Amount leaves
	// out for want of a price in the base currency, sorted (beyond the
	// spec; absent when every asset is valued).
	Unpriced []string `json:"unpriced,omitempty"`
}

// DayPnl is one day of a daily history: date (YYYY-MM-DD in the request's
// zone), number of fills, volume (Σ rate×amount), realized pnl, and the
// running sums from the first day of the history: cumulativePnl and
// cumulativePnlPercent = cumulativePnl ÷ cumulative invested × 100, where
// invested is the cost of the lots consumed by closing trades.
type DayPnl struct {
	Date                 string         `json:"date"`
	NumberOfTrades       int64          `json:"numberOfTrades"`
	TotalVolume          decimal.Number `json:"totalVolume"`
	Pnl                  decimal.Number `json:"pnl"`
	CumulativePnl        decimal.Number `json:"cumulativePnl"`
	CumulativePnlPercent decimal.Number `json:"cumulativePnlPercent"`
	UnmatchedBaseValue   decimal.Number `json:"unmatchedBaseValue"`
}

// splitKeyQuote returns the quote and base of a pair key.
func splitKeyQuote(k string) (quote, base string, err error) {
	_, pair, err := domain.SplitPairKey(k)
	if err != nil {
		return "", "", err
	}
	return domain.SplitPair(pair)
}
