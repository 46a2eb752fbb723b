package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/streams"
)

// ownFill is a fill of the service's own order as the log holds it.
type ownFill struct {
	orderID int64
	pair    string
	fill    domain.OrderFilled
	time    int64
	actor   string
}

// scanOwnFills returns the log's fills of the service's orders on exchange
// with trade times in [from, to), recorded at positions up to until (0:
// every position), reading the log from where the read model says the
// first of that time is (AccountBook.ScanStart).
func scanOwnFills(ctx context.Context, store domain.EventStore, book AccountBook, exchange string, from, to int64, until uint64) ([]ownFill, error) {
	pos, _ := book.ScanStart(exchange, from)
	if pos == 0 {
		return nil, nil
	}
	it := store.ReadAll(ctx, pos, 0)
	defer it.Close()
	var out []ownFill
	for it.Next() {
		e := it.Event()
		if until > 0 && e.Position > until {
			break
		}
		if e.Type != domain.TypeOrderFilled {
			continue
		}
		id, ok := streams.OrderStreamID(e.Stream)
		if !ok {
			continue
		}
		x, pair, _, ok := book.OrderOf(id)
		if !ok || x != exchange {
			continue
		}
		p, err := domain.Payload[domain.OrderFilled](&e)
		if err != nil {
			return nil, err
		}
		t := domain.FillTime(&e, p)
		if t < from || t >= to {
			continue
		}
		out = append(out, ownFill{orderID: id, pair: pair, fill: *p, time: t, actor: e.Actor})
	}
	return out, it.Err()
}

// factCounts counts an account stream's facts of a window: external
// trades, transfers and conversions (each once by the exchange's id), and
// the fill ids recorded as mismatched or unlisted.
type factCounts struct {
	external, deposits, withdrawals, conversions int
	mismatched, unlisted                         map[string]bool
}

// scanFacts counts the facts of exchange's account stream with exchange
// times in [from, to), recorded at positions up to until (0: all).
func scanFacts(ctx context.Context, store domain.EventStore, book AccountBook, exchange string, from, to int64, until uint64) (factCounts, error) {
	c := factCounts{mismatched: map[string]bool{}, unlisted: map[string]bool{}}
	_, version := book.ScanStart(exchange, from)
	if version < 0 {
		return c, nil
	}
	seen := map[string]bool{}
	it := store.ReadStream(ctx, domain.AccountStream(exchange), version, 0)
	defer it.Close()
	in := func(t int64) bool { return t >= from && t < to }
	for it.Next() {
		e := it.Event()
		if until > 0 && e.Position > until {
			break
		}
		switch e.Type {
		case domain.TypeExternalFill:
			p, err := domain.Payload[domain.ExternalFill](&e)
			if err != nil {
				return c, err
			}
			if in(p.Time) {
				c.external++
			}
		case domain.TypeDeposit, domain.TypeWithdrawal:
			p, err := domain.Payload[domain.Transfer](&e)
			if err != nil {
				return c, err
			}
			key := e.Type + "\x00" + p.ID
			if !in(p.Time) || seen[key] {
				continue
			}
			seen[key] = true
			if e.Type == domain.TypeDeposit {
				c.deposits++
			} else {
				c.withdrawals++
			}
		case domain.TypeConversion:
			p, err := domain.Payload[domain.Conversion](&e)
			if err != nil {
				return c, err
			}
			if in(p.Time) {
				c.conversions++
			}
		case domain.TypeFillMismatch:
			p, err := domain.Payload[domain.FillMismatch](&e)
			if err != nil {
				return c, err
			}
			if in(p.Time) {
				c.mismatched[p.FillID] = true
			}
		case domain.TypeFillUnlisted:
			p, err := domain.Payload[domain.FillUnlisted](&e)
			if err != nil {
				return c, err
			}
			if in(p.Time) {
				c.unlisted[p.FillID] = true
			}
		}
	}
	return c, it.Err()
}

// checkedAt formats an instant (ms) as the reconciliation's checkedAt.
func checkedAt(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

// Reconcile reconciles an exchange account over the exchange times [from,
// to) (to 0 or in the future: now), on demand: the account is opened if it
// was not; every history of the window is read and what the log lacks is
// recorded (as Sync records it: a fill of the service's own is backfilled,
// numbers that differ are a FillMismatch); the log's own fills of the
// window are compared with the exchange's list — one the exchange does not
// list, older than Grace, is recorded as FillUnlisted (never deleted); and
// the balances the ledger implies are compared with the exchange's, read
// now. Own fills older than the exchange's list (AccountHistory.ListedFrom)
// count in the activity, not in the fills compared.
func (s *AccountSync) Reconcile(ctx context.Context, exchange string, from, to int64) (domain.Reconciliation, error) {
	if s == nil || s.Book == nil {
		return domain.Reconciliation{}, domain.Errorf(domain.EUNAVAILABLE, "the account sync is not configured")
	}
	x, h, err := s.history(exchange)
	if err != nil {
		return domain.Reconciliation{}, err
	}
	v, err := s.open(ctx, x, exchange)
	if err != nil {
		return domain.Reconciliation{}, err
	}
	now := s.desk.Clock.Now().UnixMilli()
	if to <= 0 || to > now {
		to = now
	}
	if from >= to {
		return domain.Reconciliation{}, domain.Errorf(domain.EINVALID, "from must be before to")
	}
	listed := map[string]domain.Fill{}
	if _, err := s.readAll(ctx, x, h, v, func(string, []domain.Span) int64 { return from }, to, readOpts{listed: listed, markEnd: true}); err != nil {
		return domain.Reconciliation{}, err
	}
	fills, err := scanOwnFills(ctx, s.desk.Store, s.Book, exchange, from, to, 0)
	if err != nil {
		return domain.Reconciliation{}, err
	}
	_, _, grace, _, _ := s.settings()
	listedFrom := h.ListedFrom()
	var fr domain.FillReconciliation
	var unlisted []domain.FillUnlisted
	for i := range fills {
		f := &fills[i]
		if f.actor == domain.ActorSync {
			fr.Missing++
			continue
		}
		if lf, ok := listed[f.fill.FillID]; ok {
			if field, _, _ := domain.CompareFill(&f.fill, &lf); field != "" {
				fr.Mismatched++
			} else {
				fr.Matched++
			}
			continue
		}
		if f.time < listedFrom {
			continue
		}
		fr.Extra++
		if f.time < now-grace.Milliseconds() {
			unlisted = append(unlisted, domain.FillUnlisted{Exchange: exchange, Pair: f.pair, OrderID: f.orderID, FillID: f.fill.FillID, Time: f.time})
		}
	}
	if len(unlisted) > 0 {
		a := s.desk.newAppender(domain.ActorSync, "")
		for _, u := range unlisted {
			if _, err := write(ctx, a, domain.AccountStream(exchange), func() (struct{}, domain.ExpectedVersion) { return struct{}{}, domain.Any },
				func(struct{}) ([]domain.Event, error) { return domain.DecideFillUnlisted(s.desk.Clock, u), nil }); err != nil {
				return domain.Reconciliation{}, a.finish(ctx, err)
			}
		}
		if err := a.finish(ctx, nil); err != nil {
			return domain.Reconciliation{}, err
		}
	}
	counts, err := scanFacts(ctx, s.desk.Store, s.Book, exchange, from, to, 0)
	if err != nil {
		return domain.Reconciliation{}, err
	}
	xctx, cancel := s.desk.callContext(ctx)
	bs, err := x.Balances(xctx)
	cancel()
	if err != nil {
		return domain.Reconciliation{}, exchangeError(err)
	}
	v, _ = s.Book.View(exchange)
	r := domain.Reconciliation{Exchange: exchange, Status: domain.ReconciledOK, CheckedAt: checkedAt(s.desk.Clock.Now().UnixMilli()), Fills: fr,
		Activity: domain.ActivityCounts{Trades: len(fills) + counts.external, ExternalTrades: counts.external, Deposits: counts.deposits,
			Withdrawals: counts.withdrawals, Conversions: counts.conversions}}
	var differs bool
	r.Assets, differs = domain.CompareBalances(v.Implied, bs)
	if differs {
		r.Status = domain.ReconciledDiscrepancy
	}
	return r, nil
}

// LogReconciliation is the reconciliation of an exchange account as the
// log held it (an asOf read: no exchange is asked): book is the accounts'
// read model rebuilt from the log up to position (0: all of it), and at
// is the instant it speaks of. The balances the ledger implied are
// compared with the exchange's last reported ones (BalancesObserved); the
// fills of [from, to) are counted as the sync recorded them: backfilled
// (missing), FillMismatch (mismatched), FillUnlisted (extra), the rest
// matched.
func LogReconciliation(ctx context.Context, store domain.EventStore, book AccountBook, exchange string, from, to, at int64, position uint64) (domain.Reconciliation, error) {
	if to <= 0 || to > at {
		to = at + 1
	}
	v, _ := book.View(exchange)
	fills, err := scanOwnFills(ctx, store, book, exchange, from, to, position)
	if err != nil {
		return domain.Reconciliation{}, err
	}
	counts, err := scanFacts(ctx, store, book, exchange, from, to, position)
	if err != nil {
		return domain.Reconciliation{}, err
	}
	var fr domain.FillReconciliation
	for _, f := range fills {
		switch id := f.fill.FillID; {
		case f.actor == domain.ActorSync:
			fr.Missing++
		case counts.mismatched[id]:
			fr.Mismatched++
		case counts.unlisted[id]:
			fr.Extra++
		default:
			fr.Matched++
		}
	}
	r := domain.Reconciliation{Exchange: exchange, Status: domain.ReconciledOK, CheckedAt: checkedAt(at), Fills: fr,
		Activity: domain.ActivityCounts{Trades: len(fills) + counts.external, ExternalTrades: counts.external, Deposits: counts.deposits,
			Withdrawals: counts.withdrawals, Conversions: counts.conversions}}
	var differs bool
	r.Assets, differs = domain.CompareBalances(v.Implied, v.Observed)
	if differs {
		r.Status = domain.ReconciledDiscrepancy
	}
	return r, nil
}

// Discrepancy says what an open discrepancy is, for /healthz and the logs.
func Discrepancy(d domain.BalanceDiscrepancy) string {
	var b strings.Builder
	b.WriteString(d.Account + ": " + d.Asset + " differs by " + d.Difference.String() + " (ledger " + d.Ledger.String() + ", exchange " + d.Exchange.String() + ") since ")
	b.WriteString(checkedAt(d.Since))
	return b.String()
}

// AccountActivity lists the facts of an exchange account's activity with
// exchange times in [from, to) as the log holds them, newest first (by
// time, then by position), at most limit of them, and whether the window
// holds more. Each transfer is listed once, with its last recorded status.
// It reads the account stream from where the read model says the window's
// first fact is (AccountBook.ScanStart).
func AccountActivity(ctx context.Context, store domain.EventStore, book AccountBook, exchange string, from, to int64, limit int) ([]domain.AccountFact, bool, error) {
	_, version := book.ScanStart(exchange, from)
	if version < 0 || limit <= 0 {
		return nil, false, nil
	}
	v, _ := book.View(exchange)
	var facts []domain.AccountFact
	transfer := map[string]int{} // type and id → index in facts
	it := store.ReadStream(ctx, domain.AccountStream(exchange), version, 0)
	defer it.Close()
	for it.Next() {
		e := it.Event()
		kind, ok := domain.AccountFactKinds[e.Type]
		if !ok {
			continue
		}
		var head struct {
			ID   string `json:"id"`
			Time int64  `json:"time"`
		}
		if err := json.Unmarshal(e.Data, &head); err != nil {
			return nil, false, domain.Errorf(domain.EINTERNAL, "%s at position %d: %v", e.Type, e.Position, err)
		}
		if head.Time < from || head.Time >= to {
			continue
		}
		f := domain.AccountFact{Kind: kind, External: e.Type == domain.TypeExternalFill, Time: head.Time,
			InOpening: v.Opened && head.Time <= v.Opening.Time, EventID: e.ID, Position: e.Position, Actor: e.Actor,
			Fact: slices.Clone(e.Data)}
		if e.Type == domain.TypeDeposit || e.Type == domain.TypeWithdrawal {
			key := e.Type + "\x00" + head.ID
			if i, ok := transfer[key]; ok {
				facts[i] = f
				continue
			}
			transfer[key] = len(facts)
		}
		facts = append(facts, f)
	}
	if err := it.Err(); err != nil {
		return nil, false, err
	}
	slices.SortFunc(facts, func(a, b domain.AccountFact) int {
		if c := cmp.Compare(b.Time, a.Time); c != 0 {
			return c
		}
		return cmp.Compare(b.Position, a.Position)
	})
	if len(facts) > limit {
		return facts[:limit], true, nil
	}
	return facts, false, nil
}
