package projections

import (
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/snap"
	"github.com/tradeledger/tradeledger/domain/streams"
)

// Accounts is the read model of the exchange accounts' reconciliation
// (DESIGN §18, domain/account.go): per exchange, the opening balance and
// the balance the ledger implies per asset since (every fill of the
// service's orders, external trade, fee, deposit, withdrawal and conversion
// with an exchange time after the opening), the exchange's last reported
// balances, the discrepancies still open, how far each history has been
// read (the sync's cursors), the transfers whose status may still change,
// and where in the log to start reading a time window's fills and facts
// again (ScanStart). The engine's sync decides against it; the
// reconciliation route, the dashboard and /healthz read it.
//
// An own fill moves the balance of its order's exchange, pair and side,
// which the fill's event does not carry: Accounts keeps them for every
// order, two bytes an order in chunks by id (orderCombos), so that a fill
// arriving after its order finished counts too. Imported orders (actor
// import) are history this service did not trade on the account: they
// move nothing (the sync lists their trades as external ones).
type Accounts struct {
	mu sync.RWMutex
	st accountsState
}

type accountsState struct {
	ex     map[string]*accountState
	combos orderCombos
}

// accountState is one exchange account.
type accountState struct {
	opened     bool
	opening    domain.AccountOpened
	implied    map[string]decimal.Decimal
	observed   []domain.AssetBalance
	observedAt int64
	open       map[string]domain.BalanceDiscrepancy
	covered    map[string][]domain.Span
	transfers  map[string]transferState // "d:" or "w:" + the exchange's id
	assets     map[string]bool
	// fillHours is, per hour of trade time (ms / hour), the least log
	// position of an own fill of that hour; factHours, per hour of
	// exchange time, the least version of a fact in the account stream.
	fillHours map[int64]uint64
	factHours map[int64]int64
}

// transferState is what the balance counts of a transfer: the effect of
// its last recorded status (zero while it is part of the opening's
// balance), its time, and whether that status is final.
type transferState struct {
	counted decimal.Decimal
	time    int64
	final   bool
}

const hourMs = 3_600_000

// NewAccounts returns an empty Accounts.
func NewAccounts() *Accounts {
	return &Accounts{st: accountsState{ex: map[string]*accountState{}, combos: newOrderCombos()}}
}

// Name implements Projection.
func (a *Accounts) Name() string { return "accounts" }

func (st *accountsState) account(exchange string) *accountState {
	s := st.ex[exchange]
	if s == nil {
		s = &accountState{implied: map[string]decimal.Decimal{}, open: map[string]domain.BalanceDiscrepancy{},
			covered: map[string][]domain.Span{}, transfers: map[string]transferState{}, assets: map[string]bool{},
			fillHours: map[int64]uint64{}, factHours: map[int64]int64{}}
		st.ex[strings.Clone(exchange)] = s
	}
	return s
}

// Apply implements Projection.
func (a *Accounts) Apply(e *domain.Event) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.st.apply(e)
}

// ApplyBatch implements BatchApplier: Apply on each event, under one lock.
func (a *Accounts) ApplyBatch(events []domain.Event, onError func(*domain.Event, error)) {
	a.mu.Lock()
	applyEach(events, a.st.apply, onError)
	a.mu.Unlock()
}

// apply is Apply with a.mu held.
func (st *accountsState) apply(e *domain.Event) error {
	switch e.Type {
	case domain.TypeOrderRequested, domain.TypeOrderFilled:
		if e.Type == domain.TypeOrderRequested && e.Actor == domain.ActorImport {
			return nil // an imported order's fills move no balance (applyOrder)
		}
		id, ok := streams.OrderStreamID(e.Stream)
		if !ok {
			return nil
		}
		return st.applyOrder(id, e)
	case domain.TypeBalancesObserved:
		p, err := domain.Payload[domain.BalancesObserved](e)
		if err != nil {
			return err
		}
		s := st.account(p.Exchange)
		s.observed, s.observedAt = slices.Clone(p.Balances), e.Time
		return nil
	case domain.TypeAccountOpened, domain.TypeExternalFill, domain.TypeDeposit, domain.TypeWithdrawal, domain.TypeConversion,
		domain.TypeActivitySynced, domain.TypeFillMismatch, domain.TypeFillUnlisted, domain.TypeBalanceDiscrepancy,
		domain.TypeBalanceDiscrepancyCleared:
		exchange, ok := strings.CutPrefix(e.Stream, "account-")
		if !ok {
			return nil
		}
		return st.applyAccount(st.account(exchange), e)
	}
	return nil
}

func (st *accountsState) applyOrder(id int64, e *domain.Event) error {
	if e.Type == domain.TypeOrderRequested { // not an import's (apply)
		p, err := domain.Payload[domain.OrderRequested](e)
		if err != nil {
			return err
		}
		st.combos.put(id, orderCombo{exchange: p.Exchange, pair: p.Pair, side: p.Side})
		return nil
	}
	c, ok := st.combos.get(id)
	if !ok {
		return nil
	}
	p, err := domain.Payload[domain.OrderFilled](e)
	if err != nil {
		return err
	}
	s := st.account(c.exchange)
	t := domain.FillTime(e, p)
	h := t / hourMs
	if pos, ok := s.fillHours[h]; !ok || e.Position < pos {
		s.fillHours[h] = e.Position
	}
	if s.opened && t > s.opening.Time {
		s.move(domain.TradeDeltas(c.pair, c.side, p.Price, p.Quantity, decimal.Zero, p.Fee, p.FeeAsset))
	}
	return nil
}

// move adds deltas to the implied balances.
func (s *accountState) move(deltas []domain.AssetDelta) {
	for _, d := range deltas {
		s.implied[d.Asset] = s.implied[d.Asset].Add(d.Amount)
	}
}

// after reports whether a fact of exchange time t moves the implied
// balance: the account is opened and t is after its opening.
func (s *accountState) after(t int64) bool { return s.opened && t > s.opening.Time }

func (s *accountState) fact(e *domain.Event, t int64) {
	h := t / hourMs
	if v, ok := s.factHours[h]; !ok || e.Version < v {
		s.factHours[h] = e.Version
	}
}

// applyAccount applies one event of an exchange account's stream to s
// (the account's state): an event whose payload does not decode is
// returned as the error and changes nothing; a type the account does not
// follow is ignored.
func (st *accountsState) applyAccount(s *accountState, e *domain.Event) error {
	switch e.Type {
	case domain.TypeAccountOpened:
		return withPayload(e, s.applyOpening)
	case domain.TypeExternalFill:
		return withPayload(e, func(p *domain.ExternalFill) { s.applyMoves(e, p.Time, p.Deltas()) })
	case domain.TypeDeposit, domain.TypeWithdrawal:
		return withPayload(e, func(p *domain.Transfer) { s.applyTransfer(e, p) })
	case domain.TypeConversion:
		return withPayload(e, func(p *domain.Conversion) { s.applyMoves(e, p.Time, p.Deltas()) })
	case domain.TypeActivitySynced:
		return withPayload(e, s.applyCovered)
	case domain.TypeFillMismatch:
		return withPayload(e, func(p *domain.FillMismatch) { s.fact(e, p.Time) })
	case domain.TypeFillUnlisted:
		return withPayload(e, func(p *domain.FillUnlisted) { s.fact(e, p.Time) })
	case domain.TypeBalanceDiscrepancy:
		return withPayload(e, func(p *domain.BalanceDiscrepancy) { s.open[p.Asset] = *p })
	case domain.TypeBalanceDiscrepancyCleared:
		return withPayload(e, func(p *domain.BalanceDiscrepancyCleared) { delete(s.open, p.Asset) })
	}
	return nil
}

// withPayload decodes e's payload as a P and passes it to apply; a
// payload that does not decode is returned as the error, and apply is not
// called.
func withPayload[P any](e *domain.Event, apply func(*P)) error {
	p, err := domain.Payload[P](e)
	if err != nil {
		return err
	}
	apply(p)
	return nil
}

// applyOpening records the account's opening: its balances are the
// implied balances' start and its assets the account's. Only the first
// opening counts; a later one is ignored.
func (s *accountState) applyOpening(p *domain.AccountOpened) {
	if s.opened {
		return
	}
	s.opened, s.opening = true, *p
	s.opening.Balances = slices.Clone(p.Balances)
	for _, b := range p.Balances {
		s.implied[b.Asset] = s.implied[b.Asset].Add(b.Available).Add(b.OnOrder)
		s.assets[b.Asset] = true
	}
}

// applyMoves records a fact of exchange time t (an external fill, a
// conversion) that moves deltas: its hour is a fact's, its assets are the
// account's, and the implied balances move only when it came after the
// opening (before, the opening's balances hold it already).
func (s *accountState) applyMoves(e *domain.Event, t int64, deltas []domain.AssetDelta) {
	s.fact(e, t)
	for _, d := range deltas {
		s.assets[d.Asset] = true
	}
	if s.after(t) {
		s.move(deltas)
	}
}

// applyTransfer records a status of a deposit or a withdrawal (e's type
// says which). A transfer is keyed by its direction and the exchange's id,
// and each status moves the implied balance by the difference between its
// effect and what the transfer's last status counted; a transfer first
// seen with a time before the opening is in the opening's balance, so its
// first status moves nothing.
func (s *accountState) applyTransfer(e *domain.Event, p *domain.Transfer) {
	s.fact(e, p.Time)
	s.assets[p.Asset] = true
	deposit := e.Type == domain.TypeDeposit
	key := "w:" + p.ID
	if deposit {
		key = "d:" + p.ID
	}
	effect := p.Effect(deposit)
	prev, seen := s.transfers[key]
	if !seen && !s.after(p.Time) {
		// In the opening's balance as first seen: moves nothing now;
		// a later status moves the difference.
		prev.counted = effect
	}
	s.implied[p.Asset] = s.implied[p.Asset].Add(effect.Sub(prev.counted))
	s.transfers[key] = transferState{counted: effect, time: p.Time, final: p.Status.Final()}
}

// applyCovered records an activity read (ActivitySynced): the span it
// covered joins the spans covered of its kind and scope; an empty read
// covers nothing.
func (s *accountState) applyCovered(p *domain.ActivitySynced) {
	if p.Through > p.From {
		key := domain.ActivityKey(p.Kind, p.Scope)
		s.covered[key] = addSpan(s.covered[key], domain.Span{From: p.From, Through: p.Through})
	}
}

// addSpan merges sp into spans (sorted, disjoint, not adjacent).
func addSpan(spans []domain.Span, sp domain.Span) []domain.Span {
	if sp.Through <= sp.From {
		return spans
	}
	out := make([]domain.Span, 0, len(spans)+1)
	for _, x := range spans {
		if x.Through < sp.From || x.From > sp.Through {
			out = append(out, x)
			continue
		}
		sp.From, sp.Through = min(sp.From, x.From), max(sp.Through, x.Through)
	}
	out = append(out, sp)
	sort.Slice(out, func(i, j int) bool { return out[i].From < out[j].From })
	return out
}

// View returns what Accounts knows of an exchange account, and whether it
// knows anything.
func (a *Accounts) View(exchange string) (domain.AccountView, bool) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	s, ok := a.st.ex[exchange]
	if !ok {
		return domain.AccountView{Exchange: exchange, Implied: map[string]decimal.Decimal{}, Open: map[string]domain.BalanceDiscrepancy{},
			Covered: map[string][]domain.Span{}}, false
	}
	v := domain.AccountView{Exchange: exchange, Opened: s.opened, Opening: s.opening, Implied: maps.Clone(s.implied),
		Observed: slices.Clone(s.observed), ObservedAt: s.observedAt, Open: maps.Clone(s.open), Covered: map[string][]domain.Span{}}
	v.Opening.Balances = slices.Clone(s.opening.Balances)
	for k, sp := range s.covered {
		v.Covered[k] = slices.Clone(sp)
	}
	for _, t := range s.transfers {
		if !t.final && (v.Pending == 0 || t.time < v.Pending) {
			v.Pending = t.time
		}
	}
	v.Assets = slices.Sorted(maps.Keys(s.assets))
	return v, true
}

// Exchanges returns the exchanges Accounts knows, sorted.
func (a *Accounts) Exchanges() []string {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return slices.Sorted(maps.Keys(a.st.ex))
}

// Discrepancies returns every open discrepancy, by exchange then asset.
func (a *Accounts) Discrepancies() []domain.BalanceDiscrepancy {
	a.mu.RLock()
	defer a.mu.RUnlock()
	var out []domain.BalanceDiscrepancy
	for _, x := range slices.Sorted(maps.Keys(a.st.ex)) {
		s := a.st.ex[x]
		for _, asset := range slices.Sorted(maps.Keys(s.open)) {
			out = append(out, s.open[asset])
		}
	}
	return out
}

// ScanStart returns where to read the log for an exchange's activity with
// times at or after from: the least position of an own fill of that time
// or later (0: none) and the least version of the account stream holding
// a fact of that time or later (-1: none).
func (a *Accounts) ScanStart(exchange string, from int64) (position uint64, version int64) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	version = -1
	s := a.st.ex[exchange]
	if s == nil {
		return 0, -1
	}
	h := from / hourMs
	if from < 0 && from%hourMs != 0 {
		h--
	}
	for hour, pos := range s.fillHours {
		if hour >= h && (position == 0 || pos < position) {
			position = pos
		}
	}
	for hour, v := range s.factHours {
		if hour >= h && (version < 0 || v < version) {
			version = v
		}
	}
	return position, version
}

// OrderOf returns the exchange, pair and side of an order of the service
// (not imported), and whether Accounts knows it.
func (a *Accounts) OrderOf(id int64) (exchange, pair string, side domain.Side, ok bool) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	c, ok := a.st.combos.get(id)
	return c.exchange, c.pair, c.side, ok
}

// orderCombo is an order's exchange, pair and side.
type orderCombo struct {
	exchange, pair string
	side           domain.Side
}

// comboChunk is how many order ids one chunk of orderCombos holds.
const comboChunk = 4096

// orderCombos maps order ids to their combo: each id to two bytes, the
// index of its combo in list (0: none), in chunks of comboChunk ids made
// as ids arrive; an index beyond two bytes (more than 65,535 combos) goes
// to wide.
type orderCombos struct {
	list   []orderCombo // [0] is none
	index  map[orderCombo]uint32
	chunks map[int64]*[comboChunk]uint16
	wide   map[int64]uint32
}

func newOrderCombos() orderCombos {
	return orderCombos{list: []orderCombo{{}}, index: map[orderCombo]uint32{}, chunks: map[int64]*[comboChunk]uint16{}, wide: map[int64]uint32{}}
}

func (c *orderCombos) put(id int64, oc orderCombo) {
	i, ok := c.index[oc]
	if !ok {
		oc = orderCombo{exchange: strings.Clone(oc.exchange), pair: strings.Clone(oc.pair), side: domain.Side(strings.Clone(string(oc.side)))}
		i = uint32(len(c.list))
		c.list = append(c.list, oc)
		c.index[oc] = i
	}
	if i > 0xffff {
		c.wide[id] = i
		return
	}
	k, off := id/comboChunk, id%comboChunk
	if off < 0 {
		k, off = k-1, off+comboChunk
	}
	ch := c.chunks[k]
	if ch == nil {
		ch = new([comboChunk]uint16)
		c.chunks[k] = ch
	}
	ch[off] = uint16(i)
}

func (c *orderCombos) get(id int64) (orderCombo, bool) {
	k, off := id/comboChunk, id%comboChunk
	if off < 0 {
		k, off = k-1, off+comboChunk
	}
	var i uint32
	if ch := c.chunks[k]; ch != nil {
		i = uint32(ch[off])
	}
	if i == 0 {
		i = c.wide[id]
	}
	if i == 0 {
		return orderCombo{}, false
	}
	return c.list[i], true
}

// SnapshotVersion implements Snapshotter.
func (a *Accounts) SnapshotVersion() uint32 { return 1 }

// Freeze implements Snapshotter: a copy of the state (the combo chunks
// are two bytes an order: 2 MB at a million orders).
func (a *Accounts) Freeze() func(*snap.Encoder) {
	a.mu.RLock()
	st := a.st.clone()
	a.mu.RUnlock()
	return func(e *snap.Encoder) { st.encode(e) }
}

func (st *accountsState) clone() accountsState {
	out := accountsState{ex: make(map[string]*accountState, len(st.ex)), combos: orderCombos{list: slices.Clone(st.combos.list),
		chunks: make(map[int64]*[comboChunk]uint16, len(st.combos.chunks)), wide: maps.Clone(st.combos.wide)}}
	for k, ch := range st.combos.chunks {
		c := *ch
		out.combos.chunks[k] = &c
	}
	for x, s := range st.ex {
		c := *s
		c.opening.Balances = slices.Clone(s.opening.Balances)
		c.implied, c.open, c.transfers, c.assets = maps.Clone(s.implied), maps.Clone(s.open), maps.Clone(s.transfers), maps.Clone(s.assets)
		c.observed = slices.Clone(s.observed)
		c.fillHours, c.factHours = maps.Clone(s.fillHours), maps.Clone(s.factHours)
		c.covered = make(map[string][]domain.Span, len(s.covered))
		for k, sp := range s.covered {
			c.covered[k] = slices.Clone(sp)
		}
		out.ex[x] = &c
	}
	return out
}

func encodeBalances(e *snap.Encoder, bs []domain.AssetBalance) {
	e.Len(len(bs))
	for _, b := range bs {
		e.Text(b.Asset)
		e.Decimal(b.Available)
		e.Decimal(b.OnOrder)
	}
}

func decodeBalances(d *snap.Decoder) []domain.AssetBalance {
	n := d.Len(3)
	if n == 0 {
		return nil
	}
	out := make([]domain.AssetBalance, 0, n)
	for range n {
		out = append(out, domain.AssetBalance{Asset: d.Text(), Available: d.Decimal(), OnOrder: d.Decimal()})
	}
	return out
}

func (st *accountsState) encode(e *snap.Encoder) {
	e.Len(len(st.combos.list) - 1)
	for _, c := range st.combos.list[1:] {
		e.Text(c.exchange)
		e.Text(c.pair)
		e.Text(string(c.side))
	}
	keys := slices.Sorted(maps.Keys(st.combos.chunks))
	e.Len(len(keys))
	for _, k := range keys {
		e.Varint(k)
		ch := st.combos.chunks[k]
		for _, v := range ch {
			e.Uvarint(uint64(v))
		}
	}
	ids := slices.Sorted(maps.Keys(st.combos.wide))
	e.Len(len(ids))
	for _, id := range ids {
		e.Varint(id)
		e.Uvarint(uint64(st.combos.wide[id]))
	}
	e.Len(len(st.ex))
	for _, x := range slices.Sorted(maps.Keys(st.ex)) {
		s := st.ex[x]
		e.Text(x)
		e.Bool(s.opened)
		e.Text(s.opening.Exchange)
		e.Varint(s.opening.Time)
		encodeBalances(e, s.opening.Balances)
		snap.TextMap(e, s.implied, e.Decimal)
		encodeBalances(e, s.observed)
		e.Varint(s.observedAt)
		snap.TextMap(e, s.open, func(b domain.BalanceDiscrepancy) {
			e.Text(b.Account)
			e.Text(b.Asset)
			e.Decimal(b.Ledger)
			e.Decimal(b.Exchange)
			e.Decimal(b.Difference)
			e.Varint(b.Since)
		})
		snap.TextMap(e, s.covered, func(sp []domain.Span) {
			e.Len(len(sp))
			for _, x := range sp {
				e.Varint(x.From)
				e.Varint(x.Through)
			}
		})
		snap.TextMap(e, s.transfers, func(t transferState) {
			e.Decimal(t.counted)
			e.Varint(t.time)
			e.Bool(t.final)
		})
		assets := slices.Sorted(maps.Keys(s.assets))
		e.Len(len(assets))
		for _, a := range assets {
			e.Text(a)
		}
		hours := slices.Sorted(maps.Keys(s.fillHours))
		e.Len(len(hours))
		for _, h := range hours {
			e.Varint(h)
			e.Uvarint(s.fillHours[h])
		}
		hours = slices.Sorted(maps.Keys(s.factHours))
		e.Len(len(hours))
		for _, h := range hours {
			e.Varint(h)
			e.Varint(s.factHours[h])
		}
	}
}

// Load implements Snapshotter.
func (a *Accounts) Load(d *snap.Decoder) (func(), error) {
	st := accountsState{ex: map[string]*accountState{}, combos: newOrderCombos()}
	for range d.Len(3) {
		c := orderCombo{exchange: d.Text(), pair: d.Text(), side: domain.Side(d.Text())}
		st.combos.index[c] = uint32(len(st.combos.list))
		st.combos.list = append(st.combos.list, c)
	}
	for range d.Len(comboChunk + 1) {
		k := d.Varint()
		ch := new([comboChunk]uint16)
		for i := range ch {
			v := d.Uvarint()
			if v >= uint64(len(st.combos.list)) {
				d.Failf("order combo %d of %d", v, len(st.combos.list))
			}
			ch[i] = uint16(v)
		}
		st.combos.chunks[k] = ch
	}
	for range d.Len(2) {
		id, v := d.Varint(), d.Uvarint()
		if v >= uint64(len(st.combos.list)) {
			d.Failf("order combo %d of %d", v, len(st.combos.list))
		}
		st.combos.wide[id] = uint32(v)
	}
	for range d.Len(8) {
		x := d.Text()
		s := st.account(x)
		s.opened = d.Bool()
		s.opening.Exchange, s.opening.Time = d.Text(), d.Varint()
		s.opening.Balances = decodeBalances(d)
		for range d.Len(2) {
			asset := d.Text()
			s.implied[asset] = d.Decimal()
		}
		s.observed, s.observedAt = decodeBalances(d), d.Varint()
		for range d.Len(6) {
			k := d.Text()
			s.open[k] = domain.BalanceDiscrepancy{Account: d.Text(), Asset: d.Text(), Ledger: d.Decimal(), Exchange: d.Decimal(), Difference: d.Decimal(), Since: d.Varint()}
		}
		for range d.Len(2) {
			k := d.Text()
			n := d.Len(2)
			sp := make([]domain.Span, 0, n)
			for range n {
				sp = append(sp, domain.Span{From: d.Varint(), Through: d.Varint()})
			}
			s.covered[k] = sp
		}
		for range d.Len(4) {
			k := d.Text()
			s.transfers[k] = transferState{counted: d.Decimal(), time: d.Varint(), final: d.Bool()}
		}
		for range d.Len(1) {
			s.assets[d.Text()] = true
		}
		for range d.Len(2) {
			h := d.Varint()
			s.fillHours[h] = d.Uvarint()
		}
		for range d.Len(2) {
			h := d.Varint()
			s.factHours[h] = d.Varint()
		}
	}
	if err := d.Err(); err != nil {
		return nil, err
	}
	return func() {
		a.mu.Lock()
		a.st = st
		a.mu.Unlock()
	}, nil
}
