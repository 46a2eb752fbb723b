package domain

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tradeledger/tradeledger/domain/decimal"
)

// StrategyParams are the parameters of one pair's strategy: a name is looked
// up in the pair's override first, then in the strategy's settings, then
// the documented default applies. Values are JSON numbers or strings
// holding numbers ("0.5"); booleans may also be "true"/"false" strings.
type StrategyParams struct {
	Override map[string]any
	Settings map[string]any
}

func (p StrategyParams) lookup(name string) (any, bool) {
	if v, ok := p.Override[name]; ok && v != nil {
		return v, true
	}
	if v, ok := p.Settings[name]; ok && v != nil {
		return v, true
	}
	return nil, false
}

// Decimal returns parameter name as a Decimal, or def when it is not set.
// A value that is not a number is EINVALID naming the parameter.
func (p StrategyParams) Decimal(name string, def decimal.Decimal) (decimal.Decimal, error) {
	v, ok := p.lookup(name)
	if !ok {
		return def, nil
	}
	var d decimal.Decimal
	var err error
	switch x := v.(type) {
	case float64:
		d, err = decimal.DecimalFromFloat(x)
	case json.Number:
		d, err = decimal.ParseDecimal(x.String())
	case int:
		d = decimal.DecimalFromInt(int64(x))
	case int64:
		d = decimal.DecimalFromInt(x)
	case decimal.Decimal:
		d = x
	case string:
		d, err = decimal.ParseDecimal(strings.TrimSpace(x))
	default:
		err = fmt.Errorf("%T", v)
	}
	if err != nil {
		return decimal.Zero, Errorf(EINVALID, "strategy parameter %s must be a number, not %v", name, v)
	}
	return d, nil
}

// Int returns parameter name as a whole number, or def when it is not set.
func (p StrategyParams) Int(name string, def int) (int, error) {
	d, err := p.Decimal(name, decimal.DecimalFromInt(int64(def)))
	if err != nil {
		return 0, err
	}
	n, ok := d.Int64()
	if !ok || n > math.MaxInt32 || n < math.MinInt32 {
		return 0, Errorf(EINVALID, "strategy parameter %s must be a whole number, not %s", name, d)
	}
	return int(n), nil
}

// Bool returns parameter name as a boolean, or def when it is not set.
func (p StrategyParams) Bool(name string, def bool) (bool, error) {
	v, ok := p.lookup(name)
	if !ok {
		return def, nil
	}
	switch x := v.(type) {
	case bool:
		return x, nil
	case string:
		if b, err := strconv.ParseBool(strings.TrimSpace(x)); err == nil {
			return b, nil
		}
	}
	return false, Errorf(EINVALID, "strategy parameter %s must be true or false, not %v", name, v)
}
