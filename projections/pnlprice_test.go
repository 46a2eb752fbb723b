package projections

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/pnlmath"
)

// pnlPrice, the unit cost a fill is measured against, over random fills
// of every kind: buys and sells with fees in the quote, in the base, in a
// third asset with a rate and without one, none, partial fills, sells of
// more than the lots hold, and amounts of 12 decimals and of a quadrillion
// units. Each record's pnlPrice is the new lot's cost ÷ its quantity (a
// buy) or the consumed lots' cost ÷ the quantity matched (a sell), from
// lots of its own that the test runs the pair's fills through in log
// order, with the fee as the record shows it, under every method.
func TestPnlPriceRandomFills(t *testing.T) {
	for _, m := range []domain.PnlMethod{domain.LOFO, domain.FIFO, domain.LIFO, domain.HIFO, domain.Average} {
		for seed := uint64(1); seed <= 20; seed++ {
			rng := rand.New(rand.NewPCG(seed, uint64(m)))
			g := &testLog{t: t}
			start := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
			pairs := []string{"USDT-BTC", "USDT-BABYDOGE", "BTC-ETH"}
			for i := range 300 {
				tm := start.Add(time.Duration(i) * time.Minute)
				if i >= 40 && i%25 == 0 && rng.IntN(3) > 0 { // BNB's rate now and then: none at first, stale at times
					g.rateAt("USDT", "BNB", fmt.Sprintf("%d.%02d", 500+rng.IntN(100), rng.IntN(100)), tm)
				}
				id := int64(i + 1)
				pair := pairs[rng.IntN(len(pairs))]
				side := domain.Buy
				if rng.IntN(5) < 2 {
					side = domain.Sell
				}
				var price, qty string
				switch pair {
				case "USDT-BABYDOGE":
					price = fmt.Sprintf("0.%010d", 1+rng.IntN(99))
					qty = fmt.Sprintf("%d000000000", 1+rng.IntN(2000))
				default:
					price = fmt.Sprintf("%d.%08d", 10+rng.IntN(1000), rng.IntN(100_000_000))
					qty = fmt.Sprintf("0.%06d", 1+rng.IntN(999_999))
				}
				if side == domain.Sell && rng.IntN(3) == 0 {
					qty = "3" + qty // more than the lots hold, often
				}
				g.order(id, "binance", pair, side, qty, tm)
				quote, base, _ := domain.SplitPair(pair)
				fills := 1 + rng.IntN(2)
				for f := range fills {
					q := dec(qty)
					if fills == 2 {
						q = q.Div(decimal.DecimalFromInt(3))
						if f == 1 {
							q = dec(qty).Sub(q)
						}
					}
					fee, asset := q.Mul(dec(price)).Div(decimal.DecimalFromInt(1000)), quote
					switch rng.IntN(5) {
					case 0:
						fee, asset = q.Div(decimal.DecimalFromInt(1000)), base
					case 1:
						fee, asset = dec("0.00007"), "BNB"
					case 2:
						fee = decimal.Zero
					}
					g.fill(id, price, q.String(), fee.String(), asset, tm.Add(time.Duration(f)*time.Second))
				}
			}
			l := replay(t, m, g.events)
			var unconverted, baseBuys, unmatched int
			for _, pair := range pairs {
				key := "binance/" + pair
				recs := l.Orders(key)
				slices.SortFunc(recs, func(a, b OrderRecord) int { return int(a.Position) - int(b.Position) })
				lots := pnlmath.Lots{Method: m}
				for _, r := range recs {
					fp := lots.ApplyFee(r.Type, r.Rate, r.Amount, &r.Fee)
					if !r.Fee.Valued {
						unconverted++
					}
					if r.Fee.InBase && r.Type == domain.Buy {
						baseBuys++
					}
					if fp.Unmatched.IsPos() {
						unmatched++
					}
					want := decimal.Zero
					if fp.Matched.IsPos() {
						want = fp.LotCost.Div(fp.Matched)
					}
					if r.PnlPrice != want {
						t.Fatalf("%s seed %d %s #%d %s %s @ %s fee %s %s: pnlPrice %s, want %s", m, seed, key, r.ID, r.Type,
							r.Amount, r.Rate, r.Fee.Amount, r.Fee.Asset, r.PnlPrice, want)
					}
				}
			}
			if unconverted == 0 || baseBuys == 0 || unmatched == 0 {
				t.Fatalf("%s seed %d: %d unconverted fees, %d buys with a fee in the base, %d sells with unmatched coins",
					m, seed, unconverted, baseBuys, unmatched)
			}
		}
	}
}
