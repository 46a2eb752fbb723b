// Package books answers an accountant's questions from the fills a read
// model holds: every disposal with the lots it consumed (Realized), a
// period statement per pair (Statement), and CSV exports in a documented
// generic format and in the import formats of Koinly, CoinTracking and
// CoinTracker (Export). It imports the standard library, domain and
// domain/fold only; the in-memory Ledger (projections) is its Source, live
// or as of a past time.
//
// Order of the fills. The books read each pair's fills in trade-time order
// (time, then log position) and fold them with the PNL fold itself
// (fold.Traced: the lot matching and the account's movement rules the
// Ledger's fold runs, under the method asked for, each lot dated so that a
// disposal lists the lots it consumed). Periods are trade-time ranges
// [From, To), so the lots held at From are those of every fill before it,
// and opening + flows = closing holds exactly under every method
// (statement_test.go proves it on random logs). The Ledger's order records
// and PNL answers fold the same fills in the same order with the same
// rules, so a disposal's gain here is its fill's pnl there under the same
// method, whatever order the fills were recorded in.
//
// Lots are matched per pair key (exchange/pair), as the Ledger does: a
// BTC bought on binance/USDT-BTC is not sold on kraken/EUR-BTC — under the
// default cost basis scope (domain.ScopeAccount). Under ScopeUniversal
// they are pooled per pair across the service's accounts (walk.go); either
// way a transfer between two of its accounts carries its lots with their
// cost and dates, and coins of unknown cost are listed apart. Money is
// in the pair's quote currency, and, where a rate from the log exists at
// the time, in the reporting currency too; an amount without a rate is
// listed as unconverted, never guessed.
//
// Determinism: a report reads the source as of one Snapshot (fills and
// rates up to a log position), so the same log, cut and options
// give the same figures and the same bytes, whatever is appended while it
// runs.
package books

import (
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/pnlmath"
)

// DefaultHoldingPeriodDays is the holding period beyond which a lot's gain
// is long term when a query names none.
const DefaultHoldingPeriodDays = 365

// Snapshot bounds what a report reads of a source: fills and rates
// recorded at log positions up to Position. The zero value reads nothing.
type Snapshot struct {
	Position uint64
}

// Pair names a pair key a source holds fills of.
type Pair struct {
	Key, Exchange, Pair string
	Quote, Base         string
}

// Fee is a fill's fee as the exchange charged it and as valued in the
// pair's quote currency (fold.ValueFee's rule): Asset and Amount as
// charged (Asset "" with a zero Amount when there was none), Quote its
// value when Valued, Rate what one unit of Asset was worth in quote and
// RateTime (ms) when that rate held; InBase a fee in the pair's base (a buy
// received Amount less). Valued is false when no rate from the log values
// Asset at the fill's time: the fee is listed as unconverted and counted
// in no sum (never as 0).
type Fee = pnlmath.FeeValue

// Kind says what a Fill records.
type Kind uint8

// Fill kinds: a fill of one of the service's orders; a trade on the
// account the service did not place (OrderID 0); and the moves of the
// account's flows routed to the pair (package fold's move.go): a deposit,
// a withdrawal, a conversion's disposal and acquisition legs.
const (
	KindOrder Kind = iota
	KindExternal
	KindDeposit
	KindWithdrawal
	KindConvertOut
	KindConvertIn
)

// Move reports whether a fill of kind k is a move of a flow (not a fill
// of the pair's order book).
func (k Kind) Move() bool { return k >= KindDeposit }

// String returns "order", "external", "deposit", "withdrawal" or
// "conversion" (either leg).
func (k Kind) String() string {
	switch k {
	case KindExternal:
		return "external"
	case KindDeposit:
		return "deposit"
	case KindWithdrawal:
		return "withdrawal"
	case KindConvertOut, KindConvertIn:
		return "conversion"
	}
	return "order"
}

// Fill is one fill, or one move of a flow, as the books read it.
type Fill struct {
	Time     int64  // trade time, ms
	Position uint64 // log position of the event that recorded it
	OrderID  int64
	Sell     bool // a disposal (a sale, a conversion's disposal leg)
	Price    decimal.Decimal
	Qty      decimal.Decimal // the base bought, sold, received, sent or converted
	Fee      Fee
	Kind     Kind
	// NetworkFee is a withdrawal's network fee, in the base, on top of Qty.
	NetworkFee decimal.Decimal
	// A conversion leg's other asset and amount, and its value in the
	// pair's quote as the Ledger's fold found it (Priced false: no rate);
	// a deposit from the outside (no Peer) has its value too: the lot it
	// adds costs that (package fold's move.go).
	Counter    string
	CounterQty decimal.Decimal
	Value      decimal.Decimal
	Priced     bool
	// Flow is a move's flow id (BookFlows), Peer its matched transfer's.
	Flow, Peer string
}

// Flow is one of the accounts' flows (domain/account.go) as the books list
// them: a deposit or withdrawal in its latest status (only those in the
// balance are listed), or a conversion; Pairs are the pair keys its moves
// went to (package fold's flows.go: the asset's home pair on its account;
// "" none: it moved no pair's lots). Peer is a transfer's matched other
// side, PeerExchange its account.
type Flow struct {
	ID       string
	Kind     string // "deposit", "withdrawal" or "conversion"
	Exchange string
	Time     int64
	Position uint64
	// A transfer's.
	Asset  string
	Amount decimal.Decimal
	Fee    decimal.Decimal // a withdrawal's network fee, in Asset
	TxID   string
	ExID   string // the exchange's id
	Status domain.TransferStatus
	// A conversion's.
	ConvKind             string
	FromAsset, ToAsset   string
	FromAmount, ToAmount decimal.Decimal
	ConvFee              decimal.Decimal
	ConvFeeAsset         string
	Peer, PeerExchange   string
	Pairs                [2]string
}

// Cursor marks a place in a pair's fills in (Time, Position) order: the
// fills after it are those with a later time, or the same time and a
// higher position. The zero value is before the first fill.
type Cursor struct {
	Time     int64
	Position uint64
	Started  bool
}

// After returns a cursor before every fill at or after t (ms).
func After(t int64) Cursor { return Cursor{Time: t, Position: 0, Started: true} }

// Conversion is an amount converted into another currency: the amount,
// the rate (units of the target per unit of the source) and the time of
// the rate.
type Conversion struct {
	Amount   decimal.Decimal
	Rate     decimal.Decimal
	RateTime int64
}

// Source is what the books read. A source serves concurrent readers; its
// fills may grow while a report runs, which a Snapshot keeps out.
type Source interface {
	// BookSnapshot returns the bounds of what the source holds now.
	BookSnapshot() Snapshot
	// BookPairs returns the pair keys with fills, sorted by key.
	BookPairs() []Pair
	// BookFills appends to dst up to n fills of key after cur, in (Time,
	// Position) order, leaving out fills recorded after s.Position, and
	// returns dst and the cursor after the last fill appended. Fewer than
	// n fills means the end. An unknown key has no fills.
	BookFills(s Snapshot, key string, cur Cursor, n int, dst []Fill) ([]Fill, Cursor)
	// BookFlows returns the accounts' flows recorded up to s.Position, in
	// (Time, Position) order.
	BookFlows(s Snapshot) []Flow
	// BookConvert converts amount from currency from into to at time t
	// (ms) with the latest rate at or before t among those recorded up to
	// s.Position; ok is false without one. from == to converts at rate 1.
	BookConvert(s Snapshot, amount decimal.Decimal, from, to string, t int64) (c Conversion, ok bool)
}

// Query selects what a report covers.
type Query struct {
	// From and To bound the period in trade time, [From, To) in ms; To 0
	// is no end.
	From, To int64
	// Loc is the zone of holding days and of the dates written in the
	// generic and realized CSVs (UTC when nil).
	Loc *time.Location
	// Method is the lot matching.
	Method domain.PnlMethod
	// HoldingPeriodDays: a lot held more than this many calendar days (in
	// Loc) is long term (≤ 0: DefaultHoldingPeriodDays).
	HoldingPeriodDays int
	// Currency is the reporting currency ("" reports in each pair's quote
	// only).
	Currency string
	// Scope is the cost basis scope: lots per pair key (ScopeAccount) or
	// per pair across accounts (ScopeUniversal).
	Scope domain.CostBasisScope
	// Keys restricts the report to these pair keys (none: every pair).
	Keys []string
}

func (q *Query) loc() *time.Location {
	if q.Loc == nil {
		return time.UTC
	}
	return q.Loc
}

func (q *Query) holdingDays() int {
	if q.HoldingPeriodDays <= 0 {
		return DefaultHoldingPeriodDays
	}
	return q.HoldingPeriodDays
}

// inPeriod reports whether trade time t falls in [From, To).
func (q *Query) inPeriod(t int64) bool { return t >= q.From && (q.To == 0 || t < q.To) }

// pastPeriod reports whether trade time t is at or after To.
func (q *Query) pastPeriod(t int64) bool { return q.To != 0 && t >= q.To }

// FeeAmount is an amount of fees in one currency that no rate valued.
type FeeAmount struct {
	Asset  string         `json:"asset"`
	Amount decimal.Number `json:"amount"`
}

// feeBag adds up unconverted fees per asset, listed sorted by asset.
type feeBag map[string]decimal.Decimal

func (b *feeBag) add(asset string, amount decimal.Decimal) {
	if amount.IsZero() {
		return
	}
	if *b == nil {
		*b = feeBag{}
	}
	(*b)[asset] = (*b)[asset].Add(amount)
}

func (b feeBag) list() []FeeAmount {
	out := []FeeAmount{}
	for a, x := range b {
		out = append(out, FeeAmount{Asset: a, Amount: decimal.Number(x)})
	}
	sortBy(out, func(f FeeAmount) string { return f.Asset })
	return out
}
