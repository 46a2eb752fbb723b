package domain

import (
	"strings"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain/decimal"
)

func TestDecideRateObserved(t *testing.T) {
	clock := NewManualClock(time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC))
	ok := RateObserved{Exchange: "binance", Base: "BTC", Quote: "USDT", Rate: decimal.MustDecimal("60000.5")}
	evs, err := DecideRateObserved(clock, ok)
	if err != nil || len(evs) != 1 || evs[0].Type != TypeRateObserved {
		t.Fatalf("a rate: %v %v, want one RateObserved", evs, err)
	}
	if got, err := Payload[RateObserved](&evs[0]); err != nil || *got != ok {
		t.Fatalf("payload %+v %v, want %+v", got, err, ok)
	}
	for _, c := range []struct {
		name string
		r    RateObserved
		want string
	}{
		{"no exchange", RateObserved{Base: "BTC", Quote: "USDT", Rate: decimal.MustDecimal("1")}, "exchange is required"},
		{"no base", RateObserved{Exchange: "binance", Quote: "USDT", Rate: decimal.MustDecimal("1")}, "base and quote are required"},
		{"one asset", RateObserved{Exchange: "binance", Base: "USDT", Quote: "USDT", Rate: decimal.MustDecimal("1")}, "is not a rate"},
		{"zero", RateObserved{Exchange: "binance", Base: "BTC", Quote: "USDT"}, "must be positive"},
		{"negative", RateObserved{Exchange: "binance", Base: "BTC", Quote: "USDT", Rate: decimal.MustDecimal("-2")}, "must be positive"},
	} {
		evs, err := DecideRateObserved(clock, c.r)
		if ErrorCode(err) != EINVALID || !strings.Contains(ErrorMessage(err), c.want) || evs != nil {
			t.Errorf("%s: %v %v, want EINVALID saying %q and no event", c.name, evs, err, c.want)
		}
	}
}
