package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/eventstore"
)

// Defaults of AccountSync settings.
const (
	// DefaultSyncInterval is the least time between two syncs of one
	// exchange from the cycle.
	DefaultSyncInterval = time.Minute
	// DefaultSyncLookback is how far before its cursor a sync reads an
	// exchange's history again: a fact the exchange lists late, with an
	// earlier time, is found then (recording it again appends nothing).
	DefaultSyncLookback = time.Hour
	// DefaultUnlistedGrace is how old an own fill must be before the
	// exchange's not listing it is recorded (FillUnlisted): an exchange's
	// trade list may lag its matching engine by that much.
	DefaultUnlistedGrace = 10 * time.Minute
	// DefaultConfirmChecks is how many balance checks in a row must see
	// the same difference before it is recorded (BalanceDiscrepancy): a
	// check runs only while the exchange's balances stand still around
	// the sync, and an exchange may list a fact a moment after its
	// balance moved.
	DefaultConfirmChecks = 2
	// DefaultCursorEvery is how much history a sync reads before it
	// records its cursor (ActivitySynced) when it found nothing new.
	DefaultCursorEvery = time.Hour
)

// AccountBook is the read model of the exchange accounts the sync decides
// against (projections.Accounts): what it knows of one account, where in
// the log a time window's own fills and facts begin, and the exchange, pair
// and side of an order of the service.
type AccountBook interface {
	Projection
	View(exchange string) (domain.AccountView, bool)
	ScanStart(exchange string, from int64) (position uint64, version int64)
	OrderOf(id int64) (exchange, pair string, side domain.Side, ok bool)
}

// AccountSync brings an exchange account's whole activity into the log and
// checks its balances (DESIGN §18, domain/account.go):
//
//   - Sync, a step of the cycle (at most every Interval per exchange):
//     the account is opened once (AccountOpened: the exchange's balances
//     now, stated as the opening), each history (trades per market,
//     deposits, withdrawals, conversions) is read from its cursor less
//     Lookback to now, and the balances are checked (Check);
//   - Backfill, from a date (tradeledger sync --since): the same reading
//     over [since, now), resumable: each window read is recorded
//     (ActivitySynced), and a run after a stop starts at the first window
//     not read;
//   - Reconcile (reconcile.go): the on-demand comparison of a time window.
//
// What it reads becomes events keyed by the exchange's own ids (recorded
// once however often read): a trade of an order of this log is its
// OrderFilled (backfilled by ActorSync when the log lacks it; FillMismatch
// when the numbers differ); any other trade an ExternalFill; transfers and
// conversions as such. The exchange's calls run without the exchange's
// lock (a backfill does not hold up trading); own fills are recorded
// under it, as the Reconciler records them. New wires it; cmd sets Book
// and FindOrder.
type AccountSync struct {
	desk *Desk
	// Book is the accounts' read model (nil: no sync).
	Book AccountBook
	// FindOrder returns the order of this log that the exchange knows by
	// clientOrderID on the exchange's pair, once the order finished (an
	// unfinished one is in Orders): cmd looks it up in the order index.
	// Nil: a trade of a finished order is not recognised as the
	// service's.
	FindOrder func(ctx context.Context, exchange, pair, clientOrderID string) (int64, bool, error)
	// Interval, Lookback, Grace, Confirm and CursorEvery: the defaults
	// above.
	Interval, Lookback, Grace, CursorEvery time.Duration
	Confirm                                int

	mu      sync.Mutex
	next    map[string]time.Time                  // exchange → when its next cycle sync is due
	seen    map[string]map[string]decimal.Decimal // exchange → asset → difference seen, not confirmed yet
	streak  map[string]map[string]int             // exchange → asset → checks in a row that saw it
	reached map[string]int64                      // exchange + activity key → through, this process's cursor
	checked map[string]checkedFill                // exchange + pair + trade id → its order and the log's fill
}

// checkedFill is an own trade a sync of this process found in the log: the
// order it belongs to and the log's OrderFilled of it, which never changes
// (the log is append-only and a fill is recorded once), so that the next
// syncs, reading it again within Lookback, compare it with that instead of
// finding its order and reading the order's stream again.
type checkedFill struct {
	order int64
	fill  *domain.OrderFilled
	time  int64 // the exchange's time of the trade (ms)
}

// maxCheckedFills bounds AccountSync.checked: past it, a trade found in the
// log is not remembered (it is checked against the store again when read
// again, as every trade was before).
const maxCheckedFills = 1 << 16

func checkedKey(exchange string, f *domain.Fill) string {
	return exchange + "\x00" + f.Pair + "\x00" + f.ID
}

// checkedOf returns what an earlier sync of this process found of a trade.
func (s *AccountSync) checkedOf(exchange string, f *domain.Fill) (checkedFill, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.checked[checkedKey(exchange, f)]
	return c, ok
}

// remember keeps what a sync found of a trade (checkedFill), while there is
// room.
func (s *AccountSync) remember(exchange string, f *domain.Fill, c checkedFill) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.checked == nil {
		s.checked = map[string]checkedFill{}
	}
	if len(s.checked) < maxCheckedFills {
		s.checked[checkedKey(exchange, f)] = c
	}
}

// forget drops the trades remembered of an exchange that are older than
// before (a sync reads from its cursor less Lookback; older ones are read
// again only by a backfill or a reconciliation, which then check them
// against the store).
func (s *AccountSync) forget(exchange string, before int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	prefix := exchange + "\x00"
	for k, c := range s.checked {
		if strings.HasPrefix(k, prefix) && c.time < before {
			delete(s.checked, k)
		}
	}
}

func (s *AccountSync) settings() (interval, lookback, grace, cursorEvery time.Duration, confirm int) {
	interval, lookback, grace, cursorEvery, confirm = s.Interval, s.Lookback, s.Grace, s.CursorEvery, s.Confirm
	if interval <= 0 {
		interval = DefaultSyncInterval
	}
	if lookback <= 0 {
		lookback = DefaultSyncLookback
	}
	if grace <= 0 {
		grace = DefaultUnlistedGrace
	}
	if cursorEvery <= 0 {
		cursorEvery = DefaultCursorEvery
	}
	if confirm <= 0 {
		confirm = DefaultConfirmChecks
	}
	return
}

// unwrap returns the connector inside the engine's wrappers (the placement
// guard, the health record).
func unwrap(x domain.Exchange) domain.Exchange {
	for {
		switch w := x.(type) {
		case guarded:
			x = w.Exchange
		case watched:
			x = w.Exchange
		default:
			return x
		}
	}
}

// history returns an exchange's connector and its account history, or
// EINVALID when the connector lists none.
func (s *AccountSync) history(exchange string) (domain.Exchange, domain.AccountHistory, error) {
	x, err := s.desk.exchange(exchange)
	if err != nil {
		return nil, nil, err
	}
	h, ok := unwrap(x).(domain.AccountHistory)
	if !ok {
		return nil, nil, domain.Errorf(domain.EINVALID, "%s's connector lists no account history", exchange)
	}
	return x, h, nil
}

// SyncStats counts what a sync read and recorded.
type SyncStats struct {
	// Listed facts (trades, transfers, conversions) and, of them, those
	// new to the log.
	Listed, Recorded int
	// External trades, deposits, withdrawals and conversions recorded.
	External, Deposits, Withdrawals, Conversions int
	// The service's own fills listed: found in the log with the same
	// numbers, backfilled (the log lacked them), with other numbers.
	Matched, Backfilled, Mismatched int
	// Through is how far (ms) every history has been read.
	Through int64
	// Histories is how many histories (an activity kind in one scope) the
	// reading went through, and Resumed how many of them a backfill read
	// from where an earlier reading stopped instead of from its start.
	Histories, Resumed int
}

func (st *SyncStats) add(o SyncStats) {
	st.Listed += o.Listed
	st.Recorded += o.Recorded
	st.External += o.External
	st.Deposits += o.Deposits
	st.Withdrawals += o.Withdrawals
	st.Conversions += o.Conversions
	st.Matched += o.Matched
	st.Backfilled += o.Backfilled
	st.Mismatched += o.Mismatched
}

// SyncProgress is what a backfill tells its progress function after each
// window: the kind and scope being read, how far it went of [From, To),
// and the totals so far.
type SyncProgress struct {
	Kind     domain.ActivityKind
	Scope    string
	Reached  int64
	From, To int64
	Stats    SyncStats
}

// open records the account's opening (AccountOpened: the exchange's
// balances now) unless it was opened, and returns the account's view.
func (s *AccountSync) open(ctx context.Context, x domain.Exchange, exchange string) (domain.AccountView, error) {
	v, _ := s.Book.View(exchange)
	if v.Opened {
		return v, nil
	}
	xctx, cancel := s.desk.callContext(ctx)
	bs, err := x.Balances(xctx)
	cancel()
	if err != nil {
		return v, exchangeError(err)
	}
	now := s.desk.Clock.Now().UnixMilli()
	a := s.desk.newAppender(domain.ActorSync, "")
	_, err = write(ctx, a, domain.AccountStream(exchange), func() (struct{}, domain.ExpectedVersion) { return struct{}{}, domain.Any },
		func(struct{}) ([]domain.Event, error) {
			return domain.DecideAccountOpened(s.desk.Clock, false, exchange, now, bs), nil
		})
	if err = a.finish(ctx, err); err != nil {
		return v, err
	}
	v, _ = s.Book.View(exchange)
	if !v.Opened {
		return v, domain.Errorf(domain.EINTERNAL, "%s: the account's opening is not in the read model", exchange)
	}
	return v, nil
}

// Due reports whether the cycle's sync of an exchange is due, and if so
// counts it as started.
func (s *AccountSync) due(exchange string) bool {
	interval, _, _, _, _ := s.settings()
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.desk.Clock.Now()
	if now.Before(s.next[exchange]) {
		return false
	}
	if s.next == nil {
		s.next = map[string]time.Time{}
	}
	s.next[exchange] = now.Add(interval)
	return true
}

// Sync is the cycle's step for an exchange, at most every Interval: the
// account opened if it was not, each history read from its cursor (less
// Lookback) to now, and the balances checked (Check). A connector without
// an account history is left alone.
func (s *AccountSync) Sync(ctx context.Context, exchange string) error {
	if s == nil || s.Book == nil || !s.due(exchange) {
		return nil
	}
	x, h, err := s.history(exchange)
	if domain.ErrorCode(err) == domain.EINVALID {
		return nil
	}
	if err != nil {
		return err
	}
	xctx, cancel := s.desk.callContext(ctx)
	before, err := x.Balances(xctx)
	cancel()
	if err != nil {
		return exchangeError(err)
	}
	v, err := s.open(ctx, x, exchange)
	if err != nil {
		return err
	}
	_, lookback, _, _, _ := s.settings()
	now := s.desk.Clock.Now().UnixMilli()
	s.forget(exchange, now-2*lookback.Milliseconds())
	if _, err := s.readAll(ctx, x, h, v, func(key string, covered []domain.Span) int64 {
		from := v.Opening.Time
		if r, ok := s.cursor(exchange, key); ok {
			from = r
		} else if n := len(covered); n > 0 && covered[n-1].Through > from {
			from = covered[n-1].Through
		}
		from -= lookback.Milliseconds()
		if v.Pending > 0 && (key == string(domain.ActivityDeposits) || key == string(domain.ActivityWithdrawals)) {
			from = min(from, v.Pending)
		}
		return from
	}, now, readOpts{}); err != nil {
		return err
	}
	return s.check(ctx, x, exchange, before)
}

// cursor returns this process's cursor of an exchange's history.
func (s *AccountSync) cursor(exchange, key string) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.reached[exchange+"\x00"+key]
	return r, ok
}

func (s *AccountSync) setCursor(exchange, key string, through int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reached == nil {
		s.reached = map[string]int64{}
	}
	if through > s.reached[exchange+"\x00"+key] {
		s.reached[exchange+"\x00"+key] = through
	}
}

// Backfill reads the account's whole history of exchange from since to now
// into the log (tradeledger sync --since): the account opened first if it
// was not, then each history's windows not read yet, in time order,
// telling progress (may be nil) after each. A stop (an error, the context)
// loses nothing: the windows read are recorded, the next run starts at
// the first one not read, and what it reads again appends nothing.
func (s *AccountSync) Backfill(ctx context.Context, exchange string, since time.Time, progress func(SyncProgress)) (SyncStats, error) {
	if s == nil || s.Book == nil {
		return SyncStats{}, domain.Errorf(domain.EUNAVAILABLE, "the account sync is not configured")
	}
	x, h, err := s.history(exchange)
	if err != nil {
		return SyncStats{}, err
	}
	v, err := s.open(ctx, x, exchange)
	if err != nil {
		return SyncStats{}, err
	}
	now := s.desk.Clock.Now().UnixMilli()
	start := since.UnixMilli()
	resumed := 0
	st, err := s.readAll(ctx, x, h, v, func(key string, covered []domain.Span) int64 {
		// The first point at or after start that no window covers.
		from := start
		for _, sp := range covered {
			if sp.From <= from && sp.Through > from {
				from = sp.Through
			}
		}
		if from > start {
			resumed++
		}
		return from
	}, now, readOpts{progress: progress, markEnd: true})
	st.Resumed = resumed
	return st, err
}

// readOpts are a reading's options: progress is told after each page,
// the service's own trades listed go in listed (by fill id) when it is not
// nil, and markEnd records the cursor at the window's end even when
// nothing new was read (a backfill's, a reconciliation's windows).
type readOpts struct {
	progress func(SyncProgress)
	listed   map[string]domain.Fill
	markEnd  bool
}

// readAll reads every history of the account from the time from gives it
// to to.
func (s *AccountSync) readAll(ctx context.Context, x domain.Exchange, h domain.AccountHistory, v domain.AccountView,
	from func(key string, covered []domain.Span) int64, to int64, opts readOpts) (SyncStats, error) {
	var total SyncStats
	total.Through = to
	for _, kind := range domain.ActivityKinds {
		xctx, cancel := s.desk.callContext(ctx)
		scopes, err := h.ActivityScopes(xctx, kind, v.Assets)
		cancel()
		if err != nil {
			return total, exchangeError(err)
		}
		for _, scope := range scopes {
			key := domain.ActivityKey(kind, scope)
			f := from(key, v.Covered[key])
			total.Histories++
			if f >= to {
				continue
			}
			logged := f // how far the log's cursor reaches from f
			for _, sp := range v.Covered[key] {
				if sp.From <= logged && sp.Through > logged {
					logged = sp.Through
				}
			}
			st, err := s.readWindow(ctx, x, h, kind, scope, f, to, logged, opts, func(reached int64, st SyncStats) {
				if opts.progress != nil {
					sum := total
					sum.add(st)
					opts.progress(SyncProgress{Kind: kind, Scope: scope, Reached: reached, From: f, To: to, Stats: sum})
				}
			})
			total.add(st)
			if err != nil {
				return total, err
			}
		}
	}
	return total, nil
}

// recordBatch is how many facts a reading gathers before it records them
// in one batch append (the SQLite store commits up to 8,192 events in one
// transaction and one fdatasync).
const recordBatch = 8192

// readWindow reads one history over [from, to): the exchange's pages are
// fetched ahead of the recording (a goroutine asks for the next ones while
// the last batch is recorded), gathered up to recordBatch facts, and recorded
// with the cursor (ActivitySynced) of what they cover. An error of the
// exchange records what was read before it, then stops.
func (s *AccountSync) readWindow(ctx context.Context, x domain.Exchange, h domain.AccountHistory,
	kind domain.ActivityKind, scope string, from, to, logged int64, opts readOpts, progress func(reached int64, st SyncStats)) (SyncStats, error) {
	exchange := x.Name()
	_, _, _, cursorEvery, _ := s.settings()
	var total SyncStats
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	type fetched struct {
		page domain.ActivityPage
		err  error
	}
	// Pages fetched ahead: enough to fill the next batch while the last
	// one is being made durable.
	pages := make(chan fetched, 16)
	go func() {
		defer close(pages)
		for f := from; f < to; {
			xctx, cancel := s.desk.callContext(ctx)
			page, err := h.Activity(xctx, domain.ActivityQuery{Kind: kind, Scope: scope, From: f, To: to})
			cancel()
			if err == nil && (page.Next <= f || page.Next > to) {
				err = domain.Errorf(domain.EINTERNAL, "%s: the %s history of %s answered up to %d for [%d, %d)", exchange, kind, scope, page.Next, f, to)
			}
			select {
			case pages <- fetched{page, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
			f = page.Next
		}
	}()
	// mark is where the window's part not recorded as read yet starts;
	// logged how far the log's cursor reaches; reached how far the pages
	// gathered in acc go.
	mark, markRecorded, markListed, reached := from, 0, 0, from
	var acc domain.ActivityPage
	// The read models are waited for once, when the window is read (last:
	// the highest position appended).
	var last uint64
	defer func() {
		if s.desk.Wait != nil && last > 0 {
			_ = s.desk.Wait(context.WithoutCancel(ctx), last)
		}
	}()
	flush := func() error {
		st, pos, err := s.record(ctx, x, kind, acc, opts.listed)
		total.add(st)
		last = max(last, pos)
		acc = domain.ActivityPage{}
		if err != nil {
			return err
		}
		markRecorded += st.Recorded
		markListed += st.Listed
		s.setCursor(exchange, domain.ActivityKey(kind, scope), reached)
		if markRecorded > 0 || reached-logged >= cursorEvery.Milliseconds() || (reached == to && opts.markEnd) {
			pos, err := s.recordCursor(ctx, domain.ActivitySynced{Exchange: exchange, Kind: kind, Scope: scope, From: mark, Through: reached,
				Listed: markListed, Recorded: markRecorded})
			if err != nil {
				return err
			}
			last = max(last, pos)
			mark, logged, markRecorded, markListed = reached, reached, 0, 0
		}
		progress(reached, total)
		return nil
	}
	for f := range pages {
		if f.err != nil {
			if err := flush(); err != nil {
				return total, err
			}
			return total, exchangeError(f.err)
		}
		acc.Trades = append(acc.Trades, f.page.Trades...)
		acc.Transfers = append(acc.Transfers, f.page.Transfers...)
		acc.Conversions = append(acc.Conversions, f.page.Conversions...)
		reached = f.page.Next
		if len(acc.Trades)+len(acc.Transfers)+len(acc.Conversions) >= recordBatch || reached == to {
			if err := flush(); err != nil {
				return total, err
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return total, err
	}
	return total, nil
}

// recordCursor appends an ActivitySynced and returns its position (the
// caller waits for the read models).
func (s *AccountSync) recordCursor(ctx context.Context, sy domain.ActivitySynced) (uint64, error) {
	a := s.desk.newAppender(domain.ActorSync, "")
	_, err := write(ctx, a, domain.AccountStream(sy.Exchange), func() (struct{}, domain.ExpectedVersion) { return struct{}{}, domain.Any },
		func(struct{}) ([]domain.Event, error) { return domain.DecideActivitySynced(s.desk.Clock, sy), nil })
	return a.last, err
}

// record records one page: the service's own trades through recordOwn,
// every other fact in one batch append to the account stream (ids derived
// from the exchange's: a fact already there is answered, not appended).
// It returns the highest position it appended; the caller waits for the
// read models.
func (s *AccountSync) record(ctx context.Context, x domain.Exchange, kind domain.ActivityKind, page domain.ActivityPage, listed map[string]domain.Fill) (SyncStats, uint64, error) {
	exchange := x.Name()
	var st SyncStats
	var batch []domain.StreamAppend
	var kinds []*int
	stream := domain.AccountStream(exchange)
	add := func(evs []domain.Event, err error, count *int) error {
		if err != nil {
			return err
		}
		batch = append(batch, domain.StreamAppend{Stream: stream, Expected: domain.Any, Events: evs})
		kinds = append(kinds, count)
		return nil
	}
	for i := range page.Trades {
		f := &page.Trades[i]
		st.Listed++
		own, err := s.recordOwn(ctx, x, f, &st)
		if err != nil {
			return st, 0, err
		}
		if own {
			if listed != nil {
				listed[f.ID] = *f
			}
			continue
		}
		if f.Problem != nil {
			return st, 0, domain.Errorf(domain.EINVALID, "%s trade %s sent %s %q, which the ledger cannot hold: %s", exchange, f.ID, f.Problem.Field, f.Problem.Raw, f.Problem.Reason)
		}
		ext := domain.ExternalFill{Exchange: exchange, Pair: f.Pair, TradeID: f.ID, OrderID: f.OrderID, ClientOrderID: f.ClientOrderID,
			Side: f.Side, Price: f.Price, Quantity: f.Quantity, QuoteQuantity: f.QuoteQuantity, Fee: f.Fee, FeeAsset: f.FeeAsset, Time: f.Time}
		evs, err := domain.DecideExternalFill(s.desk.Clock, ext)
		if err := add(evs, err, &st.External); err != nil {
			return st, 0, err
		}
	}
	for i := range page.Transfers {
		t := page.Transfers[i]
		st.Listed++
		t.Exchange = exchange
		deposit := kind == domain.ActivityDeposits
		count := &st.Withdrawals
		if deposit {
			count = &st.Deposits
		}
		evs, err := domain.DecideTransfer(s.desk.Clock, deposit, t)
		if err := add(evs, err, count); err != nil {
			return st, 0, err
		}
	}
	for i := range page.Conversions {
		c := page.Conversions[i]
		st.Listed++
		c.Exchange = exchange
		evs, err := domain.DecideConversion(s.desk.Clock, c)
		if err := add(evs, err, &st.Conversions); err != nil {
			return st, 0, err
		}
	}
	if len(batch) == 0 {
		return st, 0, nil
	}
	head, err := s.desk.Store.Head(ctx)
	if err != nil {
		return st, 0, err
	}
	cmds := eventstore.NewCommands(s.desk.Store, nil)
	results, err := cmds.AppendBatch(eventstore.WithActor(ctx, domain.ActorSync), batch)
	if err != nil {
		return st, 0, fmt.Errorf("record %s's %s: %w", exchange, kind, err)
	}
	var last uint64
	for i, r := range results {
		if r.LastPosition > head {
			st.Recorded++
			*kinds[i]++
		}
		last = max(last, r.LastPosition)
	}
	return st, last, nil
}

// ownOrder returns the order of this log a trade belongs to: by its client
// order id among the unfinished orders, else through FindOrder.
func (s *AccountSync) ownOrder(ctx context.Context, exchange string, f *domain.Fill) (id int64, ok bool, err error) {
	if f.ClientOrderID == "" {
		return 0, false, nil
	}
	if id, ok := s.desk.orders.byClientID(f.ClientOrderID); ok {
		return id, true, nil
	}
	if s.FindOrder == nil || !ownClientID(f.ClientOrderID) {
		return 0, false, nil
	}
	return s.FindOrder(ctx, exchange, f.Pair, f.ClientOrderID)
}

// ownClientID reports whether id has the form of the client order ids this
// service sends (domain.ClientOrderID: "tl" and 32 hex digits).
func ownClientID(id string) bool {
	if len(id) != 34 || !strings.HasPrefix(id, "tl") {
		return false
	}
	for _, c := range id[2:] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// recordOwn handles a listed trade of an order of this log: found in the
// order's stream with the same numbers, it matched; with other numbers,
// FillMismatch is recorded beside it; absent, it is recorded as the
// order's OrderFilled by ActorSync (under the exchange's lock, through
// the engine's own path while the order is unfinished). It reports
// whether the trade was the service's.
func (s *AccountSync) recordOwn(ctx context.Context, x domain.Exchange, f *domain.Fill, st *SyncStats) (bool, error) {
	exchange := x.Name()
	var id int64
	var logFill *domain.OrderFilled
	if c, ok := s.checkedOf(exchange, f); ok {
		id, logFill = c.order, c.fill
	} else {
		var err error
		id, ok, err = s.ownOrder(ctx, exchange, f)
		if err != nil || !ok {
			return false, err
		}
		if logFill, err = s.orderFill(ctx, id, f.ID); err != nil {
			return true, err
		}
		if logFill != nil {
			s.remember(exchange, f, checkedFill{order: id, fill: logFill, time: f.Time})
		}
	}
	var err error
	if logFill != nil {
		if field, l, listed := domain.CompareFill(logFill, f); field != "" {
			st.Mismatched++
			m := domain.FillMismatch{Exchange: exchange, Pair: f.Pair, OrderID: id, FillID: f.ID, Field: field, Log: l, Listed: listed, Time: f.Time}
			a := s.desk.newAppender(domain.ActorSync, "")
			_, err := write(ctx, a, domain.AccountStream(exchange), func() (struct{}, domain.ExpectedVersion) { return struct{}{}, domain.Any },
				func(struct{}) ([]domain.Event, error) { return domain.DecideFillMismatch(s.desk.Clock, m), nil })
			return true, a.finish(ctx, err)
		}
		st.Matched++
		return true, nil
	}
	l := s.desk.exLock(exchange)
	l.Lock()
	a := s.desk.newAppender(domain.ActorSync, "")
	var evs []domain.Event
	if s.desk.orders.entry(id) != nil {
		before := a.last
		err = s.desk.recordFill(ctx, a, x, id, *f)
		if a.last > before {
			evs = []domain.Event{{}}
		}
	} else {
		// A finished order: its state read from its stream.
		var res eventstore.Result
		res, err = eventstore.Run(a.ctx(ctx), s.desk.commands(), eventstore.Command[domain.Order]{
			Stream: domain.OrderStream(id),
			Load: eventstore.LoadStream(s.desk.Store, domain.OrderStream(id), domain.NewOrder, func(o domain.Order, e *domain.Event) (domain.Order, error) {
				return o, o.Apply(e)
			}),
			Decide: func(o domain.Order) ([]domain.Event, error) { return o.DecideFill(s.desk.Clock, *f), nil },
		})
		if err == nil && res.Appended() {
			evs = res.Events
			a.last = max(a.last, res.Append.LastPosition)
		}
	}
	l.Unlock()
	if err = a.finish(ctx, err); err != nil {
		return true, err
	}
	if len(evs) > 0 {
		st.Backfilled++
		st.Recorded++
	}
	return true, nil
}

// orderFill returns the log's OrderFilled of a fill of an order (nil: the
// log has none by that id).
func (s *AccountSync) orderFill(ctx context.Context, id int64, fillID string) (*domain.OrderFilled, error) {
	it := s.desk.Store.ReadStream(ctx, domain.OrderStream(id), 0, 0)
	defer it.Close()
	for it.Next() {
		e := it.Event()
		if e.Type != domain.TypeOrderFilled {
			continue
		}
		p, err := domain.Payload[domain.OrderFilled](&e)
		if err != nil {
			return nil, err
		}
		if p.FillID == fillID {
			return p, nil
		}
	}
	return nil, it.Err()
}
