// Package pnlread is the PNL read contract: the queries (OverviewQuery,
// DailyQuery, PnlScope, FleetQuery), the answers, and the PnlReader
// interface that both PNL readers implement — the in-memory Ledger
// (projections) and the ClickHouse reader — so that neither imports the
// other and the same log gives the same figures through either. Scopes are
// resolved (ResolveScope: EINVALID for an empty selection or, where a
// reader does not convert, pairs of several quote currencies) and zones loaded
// (LoadZone) here, and local days (LocalDayStart, DayNumber) are cut here,
// for the same reason. Standard library and domain only; no I/O.
package pnlread
