package engine

import (
	"context"
	"maps"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// check compares the balance the ledger implies per asset with the
// exchange's, after a sync: only when the exchange's balances read before
// the sync (before) equal those read now, so that nothing moved on the
// account while its history was read (a verdict then could only be about
// timing). A difference is recorded (BalanceDiscrepancy) once Confirm
// checks in a row saw it; one that goes is cleared at once
// (BalanceDiscrepancyCleared).
func (s *AccountSync) check(ctx context.Context, x domain.Exchange, exchange string, before []domain.AssetBalance) error {
	xctx, cancel := s.desk.callContext(ctx)
	after, err := x.Balances(xctx)
	cancel()
	if err != nil {
		return exchangeError(err)
	}
	if !sameBalances(before, after) {
		return nil
	}
	v, _ := s.Book.View(exchange)
	if !v.Opened {
		return nil
	}
	evs := domain.DecideBalanceCheck(s.desk.Clock, exchange, v.Implied, after, v.Open, s.desk.Clock.Now().UnixMilli())
	evs = s.confirmed(exchange, v, after, evs)
	if len(evs) == 0 {
		return nil
	}
	a := s.desk.newAppender(domain.ActorCore, "")
	_, err = write(ctx, a, domain.AccountStream(exchange), func() (struct{}, domain.ExpectedVersion) { return struct{}{}, domain.Any },
		func(struct{}) ([]domain.Event, error) { return evs, nil })
	return a.finish(ctx, err)
}

// confirmed keeps of a check's events the clearings and the discrepancies
// seen with the same difference in Confirm checks in a row, and
// remembers the differences seen now.
func (s *AccountSync) confirmed(exchange string, v domain.AccountView, reported []domain.AssetBalance, evs []domain.Event) []domain.Event {
	_, _, _, _, confirm := s.settings()
	diffs := differences(v.Implied, reported)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen == nil {
		s.seen, s.streak = map[string]map[string]decimal.Decimal{}, map[string]map[string]int{}
	}
	seen, streak := s.seen[exchange], s.streak[exchange]
	if seen == nil {
		seen, streak = map[string]decimal.Decimal{}, map[string]int{}
		s.seen[exchange], s.streak[exchange] = seen, streak
	}
	for a := range seen {
		if _, ok := diffs[a]; !ok {
			delete(seen, a)
			delete(streak, a)
		}
	}
	for a, d := range diffs {
		if prev, ok := seen[a]; ok && prev.Cmp(d) == 0 {
			streak[a]++
		} else {
			seen[a], streak[a] = d, 1
		}
	}
	out := evs[:0]
	for _, e := range evs {
		if e.Type == domain.TypeBalanceDiscrepancy {
			p, err := domain.Payload[domain.BalanceDiscrepancy](&e)
			if err != nil || streak[p.Asset] < confirm {
				continue
			}
		}
		out = append(out, e)
	}
	return out
}

// differences returns, per asset, the exchange's balance (available + on
// order) less the implied one, where they differ.
func differences(implied map[string]decimal.Decimal, reported []domain.AssetBalance) map[string]decimal.Decimal {
	ex := map[string]decimal.Decimal{}
	for _, b := range reported {
		ex[b.Asset] = ex[b.Asset].Add(b.Available).Add(b.OnOrder)
	}
	out := map[string]decimal.Decimal{}
	for a, l := range implied {
		if d := ex[a].Sub(l); !d.IsZero() {
			out[a] = d
		}
	}
	for a, x := range ex {
		if _, ok := implied[a]; !ok && !x.IsZero() {
			out[a] = x
		}
	}
	return out
}

// sameBalances reports whether two readings of an exchange's balances hold
// the same total (available + on order) of every asset.
func sameBalances(a, b []domain.AssetBalance) bool {
	total := func(bs []domain.AssetBalance) map[string]decimal.Decimal {
		out := map[string]decimal.Decimal{}
		for _, x := range bs {
			if t := out[x.Asset].Add(x.Available).Add(x.OnOrder); !t.IsZero() {
				out[x.Asset] = t
			} else {
				delete(out, x.Asset)
			}
		}
		return out
	}
	return maps.EqualFunc(total(a), total(b), func(x, y decimal.Decimal) bool { return x.Cmp(y) == 0 })
}
