package paper

import (
	"context"
	"sort"
	"strings"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// Activity outside the service (domain.PaperActivity): a deposit, a
// withdrawal, a trade by hand, a conversion, or a drift, recorded in the
// exchange's own stream (domain.PaperStream) by POST /api/v1/paper/activity
// and applied here, as the simulator's restore fold applies its fills: to
// the fold (so that a restart starts from it) and to the account in use.
// The account then lists it in its history (AccountHistory) as a real
// exchange lists what happened on the account — except a drift, which
// moves a balance and is listed nowhere. The service learns of it only
// through its sync.

// simActivity is one simulated activity: the event's id (the exchange's id
// of the fact) and time (the exchange's time of it).
type simActivity struct {
	id   string
	time int64
	p    domain.PaperActivity
}

// DecideActivity decides a simulated activity on p.Exchange's paper
// account against its available balances and listed pairs
// (domain.DecidePaperActivity): the PaperActivity to append to
// domain.PaperStream(p.Exchange), or EINVALID as the exchange would refuse
// it (ENOTFOUND for an exchange that is not simulated).
func (s *Simulator) DecideActivity(clock domain.Clock, p domain.PaperActivity) ([]domain.Event, error) {
	a, err := s.account(p.Exchange)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.catchUp()
	return domain.DecidePaperActivity(clock, p, func(asset string) decimal.Decimal {
		if b, ok := a.balances[asset]; ok {
			return b.available
		}
		return decimal.Zero
	}, func(pair string) bool { _, ok := a.markets[pair]; return ok })
}

// applyActivity folds a PaperActivity (s.mu held): its deltas into the
// exchange's restore fold, its record into the exchange's history, and,
// when the exchange's account is in use, its deltas into that account.
func (s *Simulator) applyActivity(e *domain.Event) error {
	p, err := domain.Payload[domain.PaperActivity](e)
	if err != nil {
		return err
	}
	r := s.restoreState()
	d := r.deltas[p.Exchange]
	if d == nil {
		d = map[string]decimal.Decimal{}
		r.deltas[p.Exchange] = d
	}
	deltas := p.Deltas()
	for _, x := range deltas {
		d[x.Asset] = d[x.Asset].Add(x.Amount)
	}
	if p.Kind != domain.PaperDrift {
		r.history[p.Exchange] = append(r.history[p.Exchange], simActivity{id: e.ID, time: e.Time, p: *p})
	}
	if a, ok := s.accounts[p.Exchange]; ok {
		a.mu.Lock()
		for _, x := range deltas {
			b := a.bal(x.Asset)
			b.available = b.available.Add(x.Amount)
		}
		a.mu.Unlock()
	}
	return nil
}

// DelayFills makes the next n fills of the exchange's account unlisted:
// FillsSince and the history leave them out until ReleaseFills, as an
// exchange whose trade list lags behind its matching engine does (tests:
// a fill that appears late, after the cursor passed its time).
func (s *Simulator) DelayFills(exchange string, n int) error {
	a, err := s.account(exchange)
	if err != nil {
		return err
	}
	a.mu.Lock()
	a.hideNext = n
	a.mu.Unlock()
	return nil
}

// ReleaseFills lists the fills DelayFills held back, with their own times.
func (s *Simulator) ReleaseFills(exchange string) error {
	a, err := s.account(exchange)
	if err != nil {
		return err
	}
	a.mu.Lock()
	a.hidden = nil
	a.mu.Unlock()
	return nil
}

var _ domain.AccountHistory = (*Account)(nil)

// ActivityScopes implements domain.AccountHistory: a paper account lists
// each kind in one list.
func (a *Account) ActivityScopes(context.Context, domain.ActivityKind, []string) ([]string, error) {
	return []string{""}, nil
}

// ListedFrom implements domain.AccountHistory: the account lists the fills
// of orders since it was opened in this process (its fills before are in
// the log, not in the simulator's memory) and every simulated activity.
func (a *Account) ListedFrom() int64 { return a.opened }

// FailHistory makes the account's history fail (EUNAVAILABLE, as a lost
// connection) once n more of its calls were answered (0: not any more):
// a service stopped in the middle of a backfill.
func (s *Simulator) FailHistory(exchange string, n int) error {
	a, err := s.account(exchange)
	if err != nil {
		return err
	}
	a.mu.Lock()
	a.failHistory = n
	a.mu.Unlock()
	return nil
}

// Activity implements domain.AccountHistory: the whole window in one
// answer, in time order.
func (a *Account) Activity(_ context.Context, q domain.ActivityQuery) (domain.ActivityPage, error) {
	a.mu.Lock()
	switch a.failHistory {
	case 0:
	case 1:
		a.mu.Unlock()
		return domain.ActivityPage{}, domain.Errorf(domain.EUNAVAILABLE, "%s: simulated network failure", a.name)
	default:
		a.failHistory--
	}
	a.mu.Unlock()
	a.sim.mu.Lock()
	var hist []simActivity
	if r := a.sim.restore; r != nil {
		for _, h := range r.history[a.name] {
			if h.time >= q.From && h.time < q.To {
				hist = append(hist, h)
			}
		}
	}
	a.sim.mu.Unlock()
	page := domain.ActivityPage{Next: q.To}
	switch q.Kind {
	case domain.ActivityTrades:
		a.mu.Lock()
		a.catchUp()
		for _, f := range a.fills {
			if f.Time >= q.From && f.Time < q.To && !a.hidden[f.Seq] {
				page.Trades = append(page.Trades, f)
			}
		}
		a.mu.Unlock()
		for _, h := range hist {
			if h.p.Kind != domain.PaperTrade {
				continue
			}
			page.Trades = append(page.Trades, domain.Fill{ID: a.name + "-ext-" + h.id, OrderID: "ext-" + h.id, Pair: h.p.Pair, Side: h.p.Side,
				Price: h.p.Price, Quantity: h.p.Amount, Fee: h.p.Fee, FeeAsset: h.p.FeeAsset(), Time: h.time})
		}
		sort.SliceStable(page.Trades, func(i, j int) bool { return page.Trades[i].Time < page.Trades[j].Time })
	case domain.ActivityDeposits, domain.ActivityWithdrawals:
		want := domain.PaperDeposit
		if q.Kind == domain.ActivityWithdrawals {
			want = domain.PaperWithdrawal
		}
		for _, h := range hist {
			if h.p.Kind != want {
				continue
			}
			page.Transfers = append(page.Transfers, domain.Transfer{Exchange: a.name, ID: h.id, Asset: h.p.Asset, Amount: h.p.Amount,
				Fee: h.p.Fee, Network: "paper", TxID: "paper-" + strings.ReplaceAll(h.id, "-", ""), Status: domain.TransferCompleted,
				ExchangeStatus: "completed", Time: h.time})
		}
	case domain.ActivityConversions:
		for _, h := range hist {
			if h.p.Kind != domain.PaperConversion {
				continue
			}
			c := domain.Conversion{Exchange: a.name, ID: h.id, Kind: domain.ConversionDust, FromAsset: h.p.Asset, FromAmount: h.p.Amount,
				ToAsset: h.p.ToAsset, ToAmount: h.p.ToAmount, Time: h.time}
			if !h.p.Fee.IsZero() {
				c.Fee, c.FeeAsset = h.p.Fee, h.p.ToAsset
			}
			page.Conversions = append(page.Conversions, c)
		}
	default:
		return page, domain.Errorf(domain.EINVALID, "%s lists no %q activity", a.name, q.Kind)
	}
	return page, nil
}
