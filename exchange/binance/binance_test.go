package binance_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
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
			Exchange: x, Pair: "USDT-BTC", Amount: decimal.MustDecimal("0.01"),
			Faults: exchangetest.Faults{
				LoseNextPlacement: fx.LoseNextPlacement,
				ServerError:       fx.ServerError,
				RateLimit:         fx.RateLimit,
				Advance:           func(d time.Duration) { clock.Advance(d) },
				ClockSkew:         fx.Skew,
				Fill:              fx.Fill,
			},
			Placements: func() int { return fx.Requests("POST /api/v3/order") },
		}
	})
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
			Exchange: binance.New("binance", key, secret, true), Pair: "USDT-BTC", Amount: decimal.MustDecimal("0.001"),
			NotApplicable: exchangetest.LiveTestnet(),
		}
	})
}

// TestAccountReconciled: the account suite on the fixture account: hand
// trades, deposits, withdrawals, a dust conversion and a convert trade, a
// trade listed late, a drift; a backfill stopped by 503s and resumed.
func TestAccountReconciled(t *testing.T) {
	exchangetest.RunAccount(t, func(t *testing.T) exchangetest.AccountHarness {
		fx := fixture.New("test-key", "test-secret")
		t.Cleanup(fx.Close)
		fx.SetBalance("BNB", decimal.MustDecimal("1"))
		clock := domain.NewManualClock(time.Now())
		fx.Clock = clock.Now
		dec := decimal.MustDecimal
		return exchangetest.AccountHarness{
			Exchange: func() domain.Exchange {
				return &binance.Exchange{ExchangeName: "binance", Key: "test-key", Secret: "test-secret", BaseURL: fx.URL, Now: time.Now,
					WeightPerMinute: 1_000_000, SAPIScale: 100, Pairs: func() []string { return []string{"USDT-BTC"} }}
			},
			Pair: "USDT-BTC", Amount: dec("0.01"), Clock: clock,
			Secrets: []string{"test-key", "test-secret", "0x94df8b352de7f46f64b01d3666bf6e936e44ce60", "101764890"},
			Outside: exchangetest.Outside{
				HandTrade: func(t *testing.T, _ *exchangetest.AccountEnv) {
					if _, err := fx.HandTrade("BTCUSDT", "SELL", dec("0.001"), dec("60100"), dec("0.0601"), "USDT", clock.Now()); err != nil {
						t.Fatal(err)
					}
				},
				Deposit: func(t *testing.T, _ *exchangetest.AccountEnv) {
					id := fx.Deposit("ETH", dec("0.5"), 0, "0x94df8b352de7f46f64b01d3666bf6e936e44ce60", "", clock.Now())
					if err := fx.SetDepositStatus(id, 1); err != nil {
						t.Fatal(err)
					}
				},
				Withdraw: func(t *testing.T, _ *exchangetest.AccountEnv) {
					fx.Withdraw("USDT", dec("8.91"), dec("0.004"), 6, "0x94df8b352de7f46f64b01d3666bf6e936e44ce60", "101764890", clock.Now())
				},
				Dust: func(t *testing.T, _ *exchangetest.AccountEnv) {
					fx.Dust(clock.Now(), fixture.DustPart{Asset: "ETH", Amount: dec("0.0009"), Transfered: dec("0.000441"), Charge: dec("0.000009")})
					fx.Convert("USDT", dec("20"), "BNB", dec("0.06154036"), "SUCCESS", clock.Now())
				},
				Drift: func(t *testing.T, _ *exchangetest.AccountEnv) (string, decimal.Decimal) {
					free, _ := fx.Balance("ETH")
					fx.SetBalance("ETH", free.Add(dec("0.125")))
					return "ETH", dec("0.125")
				},
				DelayFills:       func(t *testing.T, n int) { fx.DelayTrades(n) },
				ReleaseFills:     func(t *testing.T) { fx.ReleaseTrades() },
				FailHistoryAfter: func(t *testing.T, n int) { fx.FailHistoryAfter(n) },
			},
		}
	})
}

// TestHistoryWindows: reading 100 days of history goes in the windows
// Binance documents (the fixture refuses a longer one with -1127): a day
// of trades, 90 days of transfers, 30 of conversions; every fact of the
// 100 days is listed once, with the documented numbers.
func TestHistoryWindows(t *testing.T) {
	fx := fixture.New("test-key", "test-secret")
	t.Cleanup(fx.Close)
	now := time.Now()
	start := now.Add(-100 * 24 * time.Hour)
	dec := decimal.MustDecimal
	for _, d := range []int{1, 10, 35, 99} {
		at := start.Add(time.Duration(d) * 24 * time.Hour)
		if _, err := fx.HandTrade("BTCUSDT", "BUY", dec("0.001"), dec("60000"), dec("0.000001"), "BTC", at); err != nil {
			t.Fatal(err)
		}
		fx.Deposit("ETH", dec("0.001"), 1, "bnb136ns6lfw4zs5hg4n85vdthaad7hq5m4gtkgf23", "101764890", at)
		fx.Withdraw("USDT", dec("8.91"), dec("0.004"), 6, "0x94df8b352de7f46f64b01d3666bf6e936e44ce60", "", at)
		fx.Convert("USDT", dec("20"), "BNB", dec("0.06154036"), "SUCCESS", at)
		fx.Dust(at, fixture.DustPart{Asset: "USDT", Amount: dec("0.0009"), Transfered: dec("0.000441"), Charge: dec("0.000009")})
	}
	x := &binance.Exchange{ExchangeName: "binance", Key: "test-key", Secret: "test-secret", BaseURL: fx.URL, Now: time.Now, WeightPerMinute: 1_000_000, SAPIScale: 100}
	ctx := context.Background()
	count := map[domain.ActivityKind]int{}
	for _, kind := range domain.ActivityKinds {
		scopes, err := x.ActivityScopes(ctx, kind, []string{"BTC", "USDT"})
		if err != nil {
			t.Fatal(err)
		}
		for _, scope := range scopes {
			for from, to := start.UnixMilli(), now.UnixMilli(); from < to; {
				page, err := x.Activity(ctx, domain.ActivityQuery{Kind: kind, Scope: scope, From: from, To: to})
				if err != nil {
					t.Fatalf("%s %s from %s: %v", kind, scope, time.UnixMilli(from), err)
				}
				count[kind] += len(page.Trades) + len(page.Transfers) + len(page.Conversions)
				for _, tr := range page.Transfers {
					if strings.Contains(tr.Address, "4gtkgf23") && !strings.Contains(tr.Address, "…") || tr.AddressTag == "101764890" {
						t.Errorf("address or tag in clear: %+v", tr)
					}
					if kind == domain.ActivityWithdrawals && (tr.Fee.Cmp(dec("0.004")) != 0 || tr.Status != domain.TransferCompleted) {
						t.Errorf("withdrawal %+v", tr)
					}
				}
				for _, c := range page.Conversions {
					if c.Kind == domain.ConversionConvert && c.ID != "convert:940708407462087195" && !strings.HasPrefix(c.ID, "convert:9407084074620871") {
						t.Errorf("convert id %s lost digits", c.ID)
					}
				}
				from = page.Next
			}
		}
	}
	want := map[domain.ActivityKind]int{domain.ActivityTrades: 4, domain.ActivityDeposits: 4, domain.ActivityWithdrawals: 4, domain.ActivityConversions: 8}
	for k, n := range want {
		if count[k] != n {
			t.Errorf("%s: %d listed, want %d", k, count[k], n)
		}
	}
	if n := fx.Requests("GET /api/v3/myTrades"); n < 100 {
		t.Errorf("%d myTrades calls for 100 days, want one a day at least", n)
	}
}
