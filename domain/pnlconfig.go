package domain

import (
	"encoding/json"
	"strconv"
	"strings"
)

// PnlConfig is what the PNL read models take from a ConfigReplaced
// document: each pair's strategy and the reporting currency.
type PnlConfig struct {
	// Strategies are config.pairs' strategies, in no particular order.
	Strategies []PairStrategy
	// Reporting is bot.REPORTING_CURRENCY ("" when unset or not a string).
	Reporting string
	// Method is bot.PNL_METHOD, the reports' default lot matching (LOFO
	// when unset or not a method).
	Method PnlMethod
	// Scope is bot.COST_BASIS_SCOPE, the reports' default cost basis
	// scope (ScopeAccount when unset or not a scope).
	Scope CostBasisScope
	// FeeRateMaxAge is bot.FEE_RATE_MAX_AGE in ms (the setting is whole
	// seconds ≥ 1): how old a rate a fee in a third asset may be valued
	// at; 0 when unset or not such a number (DefaultFeeRateMaxAge).
	FeeRateMaxAge int64
}

// PairStrategy is the strategy of one configured pair.
type PairStrategy struct {
	Exchange, Pair, Strategy string
}

// DecodePnlConfig reads the PnlConfig of a ConfigReplaced payload; ok is
// false for a payload that does not decode (the config projection reports
// it; PNL read models keep what they had). Both the in-memory Ledger and
// the ClickHouse sink read strategies here.
func DecodePnlConfig(data []byte) (c PnlConfig, ok bool) {
	var doc struct {
		Config struct {
			Bot struct {
				Reporting any `json:"REPORTING_CURRENCY"`
				Method    any `json:"PNL_METHOD"`
				FeeMaxAge any `json:"FEE_RATE_MAX_AGE"`
				Scope     any `json:"COST_BASIS_SCOPE"`
			} `json:"bot"`
			Pairs map[string]map[string]struct {
				Strategy string `json:"strategy"`
			} `json:"pairs"`
		} `json:"config"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return PnlConfig{}, false
	}
	c.Reporting, _ = doc.Config.Bot.Reporting.(string)
	if s, ok := doc.Config.Bot.Method.(string); ok {
		c.Method, _ = ParsePnlMethod(s)
	}
	if s, ok := doc.Config.Bot.Scope.(string); ok {
		c.Scope, _ = ParseCostBasisScope(s)
	}
	c.FeeRateMaxAge = maxAgeMs(doc.Config.Bot.FeeMaxAge)
	for ex, pairs := range doc.Config.Pairs {
		for p, v := range pairs {
			c.Strategies = append(c.Strategies, PairStrategy{Exchange: ex, Pair: p, Strategy: v.Strategy})
		}
	}
	return c, true
}

// maxAgeMs reads a count of whole seconds ≥ 1 (a JSON number or a string
// of digits, as the configuration's checks accept) as ms; 0 otherwise.
func maxAgeMs(v any) int64 {
	var secs int64
	switch x := v.(type) {
	case float64:
		if x != float64(int64(x)) {
			return 0
		}
		secs = int64(x)
	case string:
		n, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			return 0
		}
		secs = n
	}
	if secs < 1 || secs > 1<<40 {
		return 0
	}
	return secs * 1000
}

// PnlMethod selects how sells consume lots.
type PnlMethod uint8

// Lot matching methods. LOFO is the default (as Gunbot documents it). The
// values are stable (they never change meaning): add new methods at the end.
const (
	// LOFO consumes the lot with the lowest unit cost first (ties: oldest
	// first; see Lots for a partly consumed lot).
	LOFO PnlMethod = iota
	// FIFO consumes the oldest lot first.
	FIFO
	// Average pools every lot at the weighted average unit cost; a sell
	// takes cost pro rata. The quantities it consumes are the oldest first
	// (FIFO), which is what dates its disposals for holding periods.
	Average
	// LIFO consumes the newest lot first.
	LIFO
	// HIFO consumes the lot with the highest unit cost first (ties: oldest
	// first), mirroring LOFO.
	HIFO
)

// PnlMethodNames lists the accepted names of ParsePnlMethod, for help
// texts and messages.
const PnlMethodNames = "lofo, fifo, lifo, hifo or average"

// ParsePnlMethod reads "lofo", "fifo", "lifo", "hifo" or "average"
// ("avg"), case-insensitive; "" is LOFO. Anything else is EINVALID.
func ParsePnlMethod(s string) (PnlMethod, error) {
	return parseName(s, pnlMethodByName, "pnl method", PnlMethodNames)
}

var pnlMethodByName = map[string]PnlMethod{"": LOFO, "lofo": LOFO, "fifo": FIFO, "lifo": LIFO, "hifo": HIFO, "average": Average, "avg": Average}

// parseName returns the value names gives the lower case of s; else the
// zero value and EINVALID saying that what s must be one of accepted.
func parseName[T any](s string, names map[string]T, what, accepted string) (T, error) {
	if v, ok := names[strings.ToLower(s)]; ok {
		return v, nil
	}
	var zero T
	return zero, Errorf(EINVALID, "%s %q must be %s", what, s, accepted)
}

// String returns "lofo", "fifo", "lifo", "hifo" or "average".
func (m PnlMethod) String() string {
	switch m {
	case FIFO:
		return "fifo"
	case Average:
		return "average"
	case LIFO:
		return "lifo"
	case HIFO:
		return "hifo"
	}
	return "lofo"
}

// CostBasisScope says which lots a disposal may consume (bot.COST_BASIS_SCOPE,
// the books' scope= parameter): those of its own exchange account
// (ScopeAccount, the default: per wallet or account, the rule the United
// States require from 1 January 2025, IRS Revenue Procedure 2024-28 and
// Treas. Reg. §1.1012-1(j)), or those of every account of the service
// (ScopeUniversal: one pool per asset across accounts, the earlier
// universal method). Lots stay in the currency they were paid in: a pool
// is an asset against one quote currency (domain/books).
type CostBasisScope uint8

// Cost basis scopes; the values are stable.
const (
	ScopeAccount CostBasisScope = iota
	ScopeUniversal
)

// CostBasisScopeNames lists the accepted names of ParseCostBasisScope.
const CostBasisScopeNames = "account or universal"

// ParseCostBasisScope reads "account" or "universal" (case-insensitive);
// "" is ScopeAccount. Anything else is EINVALID.
func ParseCostBasisScope(s string) (CostBasisScope, error) {
	return parseName(s, scopeByName, "cost basis scope", CostBasisScopeNames)
}

var scopeByName = map[string]CostBasisScope{"": ScopeAccount, "account": ScopeAccount, "universal": ScopeUniversal}

// String returns "account" or "universal".
func (s CostBasisScope) String() string {
	if s == ScopeUniversal {
		return "universal"
	}
	return "account"
}
