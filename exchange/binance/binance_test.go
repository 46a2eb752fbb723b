package binance_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/exchange/binance"
	"github.com/tradeledger/tradeledger/exchange/binance/fixture"
	"github.com/tradeledger/tradeledger/exchange/exchangetest"
)

// open starts a fixture account and a connector on it.
func open(t *testing.T) (*binance.Exchange, *fixture.Server, *domain.ManualClock) {
	t.Helper()
	fx := fixture.New("test-key", "test-secret")
	t.Cleanup(fx.Close)
	clock := domain.NewManualClock(time.Now())
	x := &binance.Exchange{ExchangeName: "binance", Key: "test-key", Secret: "test-secret", BaseURL: fx.URL, Now: clock.Now}
	return x, fx, clock
}

func TestConformance(t *testing.T) {
	exchangetest.Run(t, func(t *testing.T) exchangetest.Harness {
		x, fx, clock := open(t)
		return exchangetest.Harness{
			Exchange: x, Pair: "USDT-BTC", Amount: domain.MustDecimal("0.01"),
			Faults: exchangetest.Faults{
				LoseNextPlacement: fx.LoseNextPlacement,
				ServerError:       fx.ServerError,
				RateLimit:         fx.RateLimit,
				Advance:           func(d time.Duration) { clock.Advance(d) },
				ClockSkew:         fx.Skew,
				Fill:              fx.Fill,
			},
		}
	})
}

// A filter refusal sends nothing: the fixture never sees the order.
func TestFilterRefusalSendsNothing(t *testing.T) {
	x, fx, _ := open(t)
	_, err := x.PlaceOrder(context.Background(), domain.PlaceOrderRequest{ClientOrderID: "c1", Pair: "USDT-BTC", Side: domain.Buy, Kind: domain.KindLimit, Amount: domain.MustDecimal("0.00001"), Price: domain.MustDecimal("100")})
	if domain.ErrorCode(err) != domain.EINVALID {
		t.Fatalf("err=%v, want EINVALID", err)
	}
	if n := fx.Requests("POST /api/v3/order"); n != 0 {
		t.Fatalf("%d placements reached the exchange, want 0", n)
	}
}

// Wrong keys are EUNAUTHORIZED (the fixture checks key and signature).
func TestKeysRefused(t *testing.T) {
	x, fx, _ := open(t)
	x.Secret = "wrong"
	if _, err := x.VerifyKeys(context.Background()); domain.ErrorCode(err) != domain.EUNAUTHORIZED {
		t.Fatalf("wrong secret: err=%v, want EUNAUTHORIZED", err)
	}
	y := &binance.Exchange{ExchangeName: "binance", Key: "other", Secret: "test-secret", BaseURL: fx.URL}
	if _, err := y.VerifyKeys(context.Background()); domain.ErrorCode(err) != domain.EUNAUTHORIZED {
		t.Fatalf("wrong key: err=%v, want EUNAUTHORIZED", err)
	}
	fx.CanWithdraw = true
	z := &binance.Exchange{ExchangeName: "binance", Key: "test-key", Secret: "test-secret", BaseURL: fx.URL}
	if w, err := z.VerifyKeys(context.Background()); err != nil || !w {
		t.Fatalf("good keys with withdrawal: withdraw=%v err=%v", w, err)
	}
}

// TestLiveTestnet runs the conformance suite's read-only and resting-order
// cases against Binance's spot testnet when keys are given.
func TestLiveTestnet(t *testing.T) {
	key, secret := os.Getenv("TRADELEDGER_TEST_BINANCE_KEY"), os.Getenv("TRADELEDGER_TEST_BINANCE_SECRET")
	if key == "" || secret == "" {
		t.Skip("TRADELEDGER_TEST_BINANCE_KEY and TRADELEDGER_TEST_BINANCE_SECRET are not set: the live Binance spot testnet test is skipped")
	}
	exchangetest.Run(t, func(t *testing.T) exchangetest.Harness {
		return exchangetest.Harness{
			Exchange: binance.New("binance", key, secret, true), Pair: "USDT-BTC", Amount: domain.MustDecimal("0.001"),
			NotApplicable: map[string]string{
				"PlacementLostAfterPlacing":  "faults cannot be injected into the live testnet",
				"PlacementLostBeforePlacing": "faults cannot be injected into the live testnet",
				"ServerErrorOnPlacement":     "faults cannot be injected into the live testnet",
				"PartialFillsAcrossPolls":    "the live testnet's counterparties cannot be driven",
				"RateLimitHonoured":          "faults cannot be injected into the live testnet",
				"ClockSkewCorrected":         "the testnet's clock cannot be moved",
			},
		}
	})
}
