// Package pnlmath is the one implementation of lot matching and PNL
// arithmetic: Lots (a pair's inventory under a domain.PnlMethod: LOFO, FIFO,
// LIFO, HIFO or average), ApplyFill (a fill's effect: realized PNL, matched
// and unmatched quantity), a fee's effect on a fill (FeeValue), and the
// derived figures the API reports (WinRate, PnlPercent, …). Every PNL reader
// — the in-memory projections, the ClickHouse sink, domain/fold — calls it,
// so a figure means the same thing wherever it is read. Nothing is lost or
// created by rounding: Σ consumed cost + remaining cost = Σ lot costs.
// Standard library and domain only.
package pnlmath
