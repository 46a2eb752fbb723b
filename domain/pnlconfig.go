package domain

import (
	"encoding/json"
	"strconv"
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
