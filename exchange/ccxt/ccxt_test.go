//go:build ccxt

package ccxt_test

import (
	"context"
	"encoding/base64"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/exchange/ccxt"
	"github.com/tradeledger/tradeledger/exchange/ccxt/krakenfixture"
	"github.com/tradeledger/tradeledger/exchange/exchangetest"
)

var secret = base64.StdEncoding.EncodeToString([]byte("kraken-fixture-secret-0123456789"))

// open starts a Kraken fixture account and a ccxt connector on it.
func open(t *testing.T) (*ccxt.Exchange, *krakenfixture.Server, *domain.ManualClock) {
	t.Helper()
	fx := krakenfixture.New("test-key", secret)
	t.Cleanup(fx.Close)
	clock := domain.NewManualClock(time.Now())
	x := &ccxt.Exchange{ExchangeName: "kraken", ID: "kraken", Key: "test-key", Secret: secret, URL: fx.URL, Now: clock.Now,
		RequestsPerSecond: 10_000, Burst: 100}
	return x, fx, clock
}

func TestConformanceKraken(t *testing.T) {
	exchangetest.Run(t, func(t *testing.T) exchangetest.Harness {
		x, fx, clock := open(t)
		return exchangetest.Harness{
			Exchange: x, Pair: "USDT-BTC", Amount: decimal.MustDecimal("0.01"),
			Faults: exchangetest.Faults{
				LoseNextPlacement: fx.LoseNextPlacement,
				ServerError:       fx.ServerError,
				RateLimit:         fx.RateLimit,
				Advance:           func(d time.Duration) { clock.Advance(d) },
				Fill:              fx.Fill,
			},
			Placements: func() int { return fx.Requests("/0/private/AddOrder") },
			NotApplicable: map[string]string{
				"ClockSkewCorrected": "Kraken signs with a growing nonce, not a timestamp: there is no receive window a skewed clock could miss",
			},
		}
	})
}

// Keys the exchange refuses (the fixture checks the key and the HMAC-SHA512
// signature) are EUNAUTHORIZED.
func TestKeysRefused(t *testing.T) {
	x, fx, _ := open(t)
	if err := x.VerifyKeys(context.Background()); err != nil {
		t.Fatalf("good keys: %v", err)
	}
	bad := &ccxt.Exchange{ExchangeName: "kraken", ID: "kraken", Key: "test-key", URL: fx.URL, RequestsPerSecond: 1000,
		Secret: base64.StdEncoding.EncodeToString([]byte("another-secret"))}
	if err := bad.VerifyKeys(context.Background()); domain.ErrorCode(err) != domain.EUNAUTHORIZED {
		t.Fatalf("wrong secret: err=%v, want EUNAUTHORIZED", err)
	}
	other := &ccxt.Exchange{ExchangeName: "kraken", ID: "kraken", Key: "other", Secret: secret, URL: fx.URL, RequestsPerSecond: 1000}
	if err := other.VerifyKeys(context.Background()); domain.ErrorCode(err) != domain.EUNAUTHORIZED {
		t.Fatalf("wrong key: err=%v, want EUNAUTHORIZED", err)
	}
}

// Kraken's rate-limit error comes without Retry-After (HTTP 200, as its
// documentation shows): calls stop for RateLimitBackoff.
func TestRateLimitWithoutRetryAfter(t *testing.T) {
	x, fx, clock := open(t)
	x.RateLimitBackoff = 20 * time.Second
	ctx := context.Background()
	if _, err := x.Markets(ctx); err != nil {
		t.Fatal(err)
	}
	fx.RateLimit(0)
	if _, err := x.Balances(ctx); domain.ErrorCode(err) != domain.EUNAVAILABLE || !strings.Contains(domain.ErrorMessage(err), "rate limit") {
		t.Fatalf("rate-limit error: err=%v, want EUNAVAILABLE naming the rate limit", err)
	}
	before := fx.Requests("/0/private/BalanceEx")
	clock.Advance(19 * time.Second)
	if _, err := x.Balances(ctx); domain.ErrorCode(err) != domain.EUNAVAILABLE {
		t.Fatalf("within the backoff: err=%v, want EUNAVAILABLE", err)
	}
	if n := fx.Requests("/0/private/BalanceEx"); n != before {
		t.Fatalf("%d requests sent within the backoff, want none", n-before)
	}
	clock.Advance(2 * time.Second)
	if _, err := x.Balances(ctx); err != nil {
		t.Fatalf("after the backoff: %v", err)
	}
}

// A call the exchange does not answer returns when its context ends: an
// unknown outcome, whatever ccxt's own 30 s timeout.
func TestCallEndsWithItsContext(t *testing.T) {
	x, fx, _ := open(t)
	if _, err := x.Markets(context.Background()); err != nil {
		t.Fatal(err)
	}
	reached, release := fx.HoldNext()
	defer release()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-reached
		cancel()
	}()
	_, err := x.PlaceOrder(ctx, domain.PlaceOrderRequest{ClientOrderID: "held1", Pair: "USDT-BTC", Side: domain.Buy, Kind: domain.KindLimit,
		Amount: decimal.MustDecimal("0.01"), Price: decimal.MustDecimal("20000")})
	if domain.ErrorCode(err) != domain.EUNAVAILABLE || !strings.Contains(domain.ErrorMessage(err), "unknown") {
		t.Fatalf("held placement: err=%v, want EUNAVAILABLE (outcome unknown)", err)
	}
}

// The order manager's ids ("tl" + 32 hex digits) are longer than the 18
// characters of Kraken's free-text cl_ord_id: they go as a short UUID and
// come back whole.
func TestLongClientIDAsShortUUID(t *testing.T) {
	x, fx, _ := open(t)
	ctx := context.Background()
	id := domain.ClientOrderID("6d1b345e-2821-40e2-ad83-4ecb18a06876")
	o, err := x.PlaceOrder(ctx, domain.PlaceOrderRequest{ClientOrderID: id, Pair: "USDT-BTC", Side: domain.Buy, Kind: domain.KindLimit,
		Amount: decimal.MustDecimal("0.01"), Price: decimal.MustDecimal("20000")})
	if err != nil {
		t.Fatal(err)
	}
	if got := fx.Orders(strings.TrimPrefix(id, "tl")); len(got) != 1 || got[0] != o.ID {
		t.Fatalf("orders with cl_ord_id %s: %v, want [%s]", strings.TrimPrefix(id, "tl"), got, o.ID)
	}
	if o.ClientOrderID != id {
		t.Fatalf("placed order's client id %q, want %q", o.ClientOrderID, id)
	}
	got, err := x.Order(ctx, "USDT-BTC", id)
	if err != nil || got.ID != o.ID || got.ClientOrderID != id {
		t.Fatalf("look-up by client id: %+v, %v", got, err)
	}
}

// Every exchange ccxt knows opens (our HTTP client goes in, ccxt's
// throttler stays off) without a request.
func TestEveryExchangeOpens(t *testing.T) {
	ids := ccxt.Exchanges()
	if len(ids) < 50 {
		t.Fatalf("ccxt lists %d exchanges", len(ids))
	}
	for _, id := range []string{"kraken", "bybit", "okx", "kucoin", "coinbase", "binance", "gate", "bitget"} {
		x := ccxt.New(id, id, "", "")
		if err := x.Open(); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
	}
	if err := ccxt.New("nope", "nope", "", "").Open(); domain.ErrorCode(err) != domain.EINVALID {
		t.Fatalf("unknown ccxt id: err=%v, want EINVALID", err)
	}
	x := ccxt.New("kraken", "kraken", "", "")
	x.Sandbox = true
	if err := x.Open(); domain.ErrorCode(err) != domain.EINVALID || !strings.Contains(domain.ErrorMessage(err), "testnet") {
		t.Fatalf("kraken testnet: err=%v, want EINVALID naming the testnet", err)
	}
}

func TestClientIDParams(t *testing.T) {
	for id, want := range map[string]string{"kraken": "cl_ord_id", "bybit": "orderLinkId", "okx": "clOrdId", "kucoin": "clientOid",
		"coinbase": "client_order_id", "binance": "newClientOrderId", "gate": "clientOrderId"} {
		if got := ccxt.ParamFor(id); got != want {
			t.Errorf("%s: %s, want %s", id, got, want)
		}
	}
}

// TestLiveBybitTestnet runs the conformance suite's cases that need no
// fault injection against Bybit's spot testnet when keys are given.
func TestLiveBybitTestnet(t *testing.T) {
	key, sec := os.Getenv("TRADELEDGER_TEST_BYBIT_KEY"), os.Getenv("TRADELEDGER_TEST_BYBIT_SECRET")
	if key == "" || sec == "" {
		t.Skip("TRADELEDGER_TEST_BYBIT_KEY and TRADELEDGER_TEST_BYBIT_SECRET are not set: the live Bybit testnet test (ccxt) is skipped")
	}
	exchangetest.Run(t, func(t *testing.T) exchangetest.Harness {
		x := ccxt.New("bybit", "bybit", key, sec)
		x.Sandbox = true
		return exchangetest.Harness{
			Exchange: x, Pair: "USDT-BTC", Amount: decimal.MustDecimal("0.001"),
			NotApplicable: exchangetest.LiveTestnet(),
		}
	})
}

// TestAccountReconciledKraken: the account suite on the Kraken fixture
// through ccxt (fetchMyTrades, fetchDeposits, fetchWithdrawals,
// fetchLedger): a trade by hand, a deposit, a withdrawal with its fee, a
// conversion in the ledger, a trade listed late, a drift; a backfill
// stopped by errors and resumed.
func TestAccountReconciledKraken(t *testing.T) {
	exchangetest.RunAccount(t, func(t *testing.T) exchangetest.AccountHarness {
		fx := krakenfixture.New("test-key", secret)
		t.Cleanup(fx.Close)
		clock := domain.NewManualClock(time.Now())
		fx.Clock = clock.Now
		dec := decimal.MustDecimal
		return exchangetest.AccountHarness{
			Exchange: func() domain.Exchange {
				return &ccxt.Exchange{ExchangeName: "kraken", ID: "kraken", Key: "test-key", Secret: secret, URL: fx.URL, Now: clock.Now,
					RequestsPerSecond: 10_000, Burst: 100, Pairs: func() []string { return []string{"USDT-BTC"} }}
			},
			Pair: "USDT-BTC", Amount: dec("0.01"), Clock: clock,
			Secrets: []string{"test-key", secret, "TQmdxSuC16EhFg8FZWtYgrfFRosoRF7bCp"},
			Outside: exchangetest.Outside{
				HandTrade: func(t *testing.T, _ *exchangetest.AccountEnv) { fx.HandTrade("sell", dec("0.002"), dec("30100.0")) },
				Deposit: func(t *testing.T, _ *exchangetest.AccountEnv) {
					fx.Deposit("USDT", dec("250.5"), "Success", "TQmdxSuC16EhFg8FZWtYgrfFRosoRF7bCp")
				},
				Withdraw: func(t *testing.T, _ *exchangetest.AccountEnv) {
					fx.Withdraw("USDT", dec("1996.5"), dec("2.5"), "Success", "TQmdxSuC16EhFg8FZWtYgrfFRosoRF7bCp")
				},
				Dust: func(t *testing.T, _ *exchangetest.AccountEnv) {
					fx.Convert("XXBT", dec("0.00001"), "USDT", dec("0.3"), dec("0.003"))
				},
				Drift: func(t *testing.T, _ *exchangetest.AccountEnv) (string, decimal.Decimal) {
					fx.AdjustBalance("USDT", dec("-7.25"))
					return "USDT", dec("-7.25")
				},
				DelayFills:       func(t *testing.T, n int) { fx.DelayTrades(n) },
				ReleaseFills:     func(t *testing.T) { fx.ReleaseTrades() },
				FailHistoryAfter: func(t *testing.T, n int) { fx.FailHistoryAfter(n) },
			},
		}
	})
}
