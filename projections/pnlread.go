package projections

import (
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/pnlread"
)

// The PNL read contract lives in domain (domain/pnlread.go), so that the
// ClickHouse reader implements it without importing this package; these
// names keep it readable from here.
type (
	PnlReader     = pnlread.PnlReader
	PnlScope      = pnlread.PnlScope
	ScopeKeys     = pnlread.ScopeKeys
	DayPnl        = pnlread.DayPnl
	PeriodPnl     = pnlread.PeriodPnl
	TradeRef      = pnlread.TradeRef
	PnlTotal      = pnlread.PnlTotal
	KeyPnl        = pnlread.KeyPnl
	PairDetail    = pnlread.PairDetail
	Overview      = pnlread.Overview
	OverviewQuery = pnlread.OverviewQuery
	DailyQuery    = pnlread.DailyQuery
	PairSum       = pnlread.PairSum
	SumResult     = pnlread.SumResult
	PairTotal     = pnlread.PairTotal
	QuoteSum      = pnlread.QuoteSum
	Unconverted   = pnlread.Unconverted
	AssetPoint    = pnlread.AssetPoint
)

var _ PnlReader = (*Ledger)(nil)

// LoadZone is pnlread.LoadZone.
func LoadZone(name string) (*time.Location, error) { return pnlread.LoadZone(name) }

// ResolveScope is pnlread.ResolveScope.
func ResolveScope(sc PnlScope, known []string) (ScopeKeys, error) {
	return pnlread.ResolveScope(sc, known)
}

// ResolveScopeMixed is pnlread.ResolveScopeMixed.
func ResolveScopeMixed(sc PnlScope, known []string) (ScopeKeys, error) {
	return pnlread.ResolveScopeMixed(sc, known)
}

// PnlMethod returns the lot matching the Ledger folds with (Method): what
// the API's reads answer unless a request names another.
func (l *Ledger) PnlMethod() domain.PnlMethod { return l.Method }
