package projections

import (
	"time"

	"github.com/tradeledger/tradeledger/domain"
)

// The PNL read contract lives in domain (domain/pnlread.go), so that the
// ClickHouse reader implements it without importing this package; these
// names keep it readable from here.
type (
	PnlReader     = domain.PnlReader
	PnlScope      = domain.PnlScope
	ScopeKeys     = domain.ScopeKeys
	DayPnl        = domain.DayPnl
	PeriodPnl     = domain.PeriodPnl
	TradeRef      = domain.TradeRef
	PnlTotal      = domain.PnlTotal
	KeyPnl        = domain.KeyPnl
	PairDetail    = domain.PairDetail
	Overview      = domain.Overview
	OverviewQuery = domain.OverviewQuery
	DailyQuery    = domain.DailyQuery
	PairSum       = domain.PairSum
	SumResult     = domain.SumResult
	PairTotal     = domain.PairTotal
	QuoteSum      = domain.QuoteSum
	Unconverted   = domain.Unconverted
	AssetPoint    = domain.AssetPoint
)

var _ PnlReader = (*Ledger)(nil)

// LoadZone is domain.LoadZone.
func LoadZone(name string) (*time.Location, error) { return domain.LoadZone(name) }

// ResolveScope is domain.ResolveScope.
func ResolveScope(sc PnlScope, known []string) (ScopeKeys, error) {
	return domain.ResolveScope(sc, known)
}

// ResolveScopeMixed is domain.ResolveScopeMixed.
func ResolveScopeMixed(sc PnlScope, known []string) (ScopeKeys, error) {
	return domain.ResolveScopeMixed(sc, known)
}

// PnlMethod returns the lot matching the Ledger folds with (Method): what
// the API's reads answer unless a request names another.
func (l *Ledger) PnlMethod() domain.PnlMethod { return l.Method }
