//go:build ccxt

package ccxt

import (
	"context"
	"encoding/base64"
	"reflect"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/exchange/ccxt/krakenfixture"
)

// FillsSince gives the same fills whether the exchange lists every pair's
// trades in pages (Kraken) or is read one pair at a time (the profile of
// exchanges whose fetchMyTrades needs a symbol: each pair Pairs names or
// the connector traded, once, a pair the exchange does not list left
// out); since leaves out what came before.
func TestFillsSincePagedOrByPair(t *testing.T) {
	fx := krakenfixture.New("test-key", base64.StdEncoding.EncodeToString([]byte("kraken-fixture-secret-0123456789")))
	t.Cleanup(fx.Close)
	clock := domain.NewManualClock(time.Now())
	fx.Clock = clock.Now
	dec := domain.MustDecimal
	fx.HandTrade("sell", dec("0.002"), dec("30100.0"))
	clock.Advance(time.Minute)
	fx.HandTrade("buy", dec("0.001"), dec("30000.0"))
	open := func(bySymbol bool) *Exchange {
		x := &Exchange{ExchangeName: "kraken", ID: "kraken", Key: "test-key", Secret: base64.StdEncoding.EncodeToString([]byte("kraken-fixture-secret-0123456789")),
			URL: fx.URL, Now: clock.Now, RequestsPerSecond: 10_000, Burst: 100,
			Pairs: func() []string { return []string{"USDT-BTC", "ZZZ-QQQ", "USDT-BTC"} }}
		if err := x.Open(); err != nil {
			t.Fatal(err)
		}
		x.prof.tradesBySymbol = bySymbol
		return x
	}
	ctx := context.Background()
	paged, err := open(false).FillsSince(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(paged) != 2 {
		t.Fatalf("%d fills paged, want 2: %+v", len(paged), paged)
	}
	byPair, err := open(true).FillsSince(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(byPair, paged) {
		t.Errorf("by pair:\n%+v\npaged:\n%+v", byPair, paged)
	}
	after, err := open(true).FillsSince(ctx, paged[0].Seq, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != 1 || after[0].Seq != paged[1].Seq {
		t.Errorf("fills after the first: %+v, want the second %+v", after, paged[1])
	}
}
