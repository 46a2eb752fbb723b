package fold

import (
	"sort"
	"strings"

	"github.com/tradeledger/tradeledger/domain"
)

// Flows: the account's activity that is not a trade of one of its pairs
// (domain/account.go) — deposits and withdrawals (each in its latest
// status), conversions — as Pairs keeps it, so that both PNL readers and
// the books fold it the same way (move.go for what a pair does with it).
//
// Routing. A flow moves an asset on an exchange account. Its moves go to
// the asset's home pair on that account: among the account's pairs whose
// base is the asset (a pair is known once an order of it was requested or
// a trade of it recorded), the one with the alphabetically first quote. A
// pair that becomes known later with an earlier quote takes the account's
// flows of that asset over (both pairs fold again from them), so the
// routing is a function of the log, not of the order it arrived in. A
// flow of an asset no pair of its account trades (a deposit of the quote
// currency, dust of a coin never traded) goes nowhere: it changes no
// pair's figures, and the books list it as such.
//
// Transfers. A withdrawal from one of the service's accounts and a deposit
// on another are one transfer when they have the same chain transaction id
// (txid), or else the same asset, the deposit's amount equal to the
// withdrawal's amount or to it less its network fee, and the deposit
// after the withdrawal by at most TransferWindow. Matching is canonical:
// txids first, then each deposit in order of (time, exchange, id) takes
// the latest unmatched withdrawal before it that fits (ties: exchange,
// id). A matched deposit carries the lots its withdrawal took (move.go):
// their cost and, in the books, their acquisition dates, instead of coins
// of unknown cost. Only transfers in the balance (a deposit credited or
// completed, a withdrawal neither failed nor cancelled) match or move
// anything.

// TransferWindow is how long after a withdrawal a deposit of the same
// amount, without a common txid, is taken for its other side (ms).
const TransferWindow = 24 * 3600 * 1000

// FlowKind is the kind of an account flow.
type FlowKind uint8

// Flow kinds.
const (
	FlowDeposit FlowKind = iota + 1
	FlowWithdrawal
	FlowConversion
)

// String names the kind.
func (k FlowKind) String() string {
	switch k {
	case FlowDeposit:
		return "deposit"
	case FlowWithdrawal:
		return "withdrawal"
	case FlowConversion:
		return "conversion"
	}
	return "none"
}

// Flow is one flow as Pairs holds it: Key is its trade time (the
// exchange's) and the log position of the event that first recorded it;
// a transfer in its latest status (In: in the balance) or a conversion;
// Peer, a transfer's matched other side ("" none); Pairs, the pairs its
// moves went to (a transfer's in Pairs[0]; a conversion's disposal leg in
// Pairs[0], its acquisition in Pairs[1]; −1 none).
type Flow struct {
	ID         string
	Kind       FlowKind
	Key        Key
	Transfer   domain.Transfer
	Conversion domain.Conversion
	Rank       int8 // a transfer's status rank (statusRank): a later status wins whatever the order it was recorded in
	In         bool
	Peer       string
	Pairs      [2]int
	at         Key // the key its moves were placed at (a later status may change Key's time)
}

// FlowID returns the id of a flow: its kind, exchange and the exchange's
// id of it.
func FlowID(k FlowKind, exchange, id string) string { return k.String() + ":" + exchange + ":" + id }

// statusRank orders a transfer's statuses: pending, credited, completed,
// failed or cancelled (final ones last).
func statusRank(s domain.TransferStatus) int8 {
	switch s {
	case domain.TransferPending:
		return 0
	case domain.TransferCredited:
		return 1
	case domain.TransferCompleted:
		return 2
	}
	return 3
}

type holdingKey struct{ exchange, asset string }

func holdingOf(exchange, asset string) holdingKey {
	return holdingKey{exchange, strings.ToUpper(asset)}
}

// holding is an asset on an account: the pairs of the account whose base
// it is, its home among them, the flows that move it.
type holding struct {
	pairs []int
	home  int
	flows []*Flow
}

// flows is Pairs' state of the account flows.
type flows struct {
	exchange []string // by pair index ("": not of an account)
	holdings map[holdingKey]*holding
	byID     map[string]*Flow
	byAsset  map[string][]*Flow // transfers, for matching
	peered   map[int]int        // pair index → matched withdrawals among its moves
}

func (fl *flows) init() {
	if fl.holdings == nil {
		fl.holdings, fl.byID, fl.byAsset, fl.peered = map[holdingKey]*holding{}, map[string]*Flow{}, map[string][]*Flow{}, map[int]int{}
	}
}

func (fl *flows) holding(k holdingKey) *holding {
	h := fl.holdings[k]
	if h == nil {
		h = &holding{home: -1}
		fl.holdings[k] = h
	}
	return h
}

// AddOn registers p, a pair of exchange's account, and returns its index
// (Add); it becomes the home of its base's flows on the account when its
// quote comes first.
func (ps *Pairs) AddOn(p *Pair, exchange string) int {
	i := ps.Add(p)
	ps.fl.init()
	for len(ps.fl.exchange) < i {
		ps.fl.exchange = append(ps.fl.exchange, "")
	}
	ps.fl.exchange = append(ps.fl.exchange, exchange)
	h := ps.fl.holding(holdingOf(exchange, p.Base))
	h.pairs = append(h.pairs, i)
	ps.rehome(h)
	return i
}

// rehome sets h's home and moves its flows there when it changed.
func (ps *Pairs) rehome(h *holding) {
	home := -1
	for _, i := range h.pairs {
		if home < 0 || ps.pairs[i].Quote < ps.pairs[home].Quote {
			home = i
		}
	}
	if home == h.home {
		return
	}
	h.home = home
	for _, f := range h.flows {
		ps.place(f)
	}
}

// home returns the home pair of asset on exchange's account, −1 none.
func (ps *Pairs) home(exchange, asset string) int {
	if h := ps.fl.holdings[holdingOf(exchange, asset)]; h != nil {
		return h.home
	}
	return -1
}

// Transfer records a status of a deposit (deposit true) or a withdrawal,
// recorded at log position pos: the first status recorded makes the flow,
// a later one (statusRank) replaces what it said. The pairs it moved, and
// those of the transfers whose matching it changed, become dirty.
func (ps *Pairs) Transfer(deposit bool, t *domain.Transfer, pos uint64) {
	kind := FlowWithdrawal
	if deposit {
		kind = FlowDeposit
	}
	ps.fl.init()
	id := FlowID(kind, t.Exchange, t.ID)
	rank := statusRank(t.Status)
	f := ps.fl.byID[id]
	if f != nil && rank <= f.Rank {
		return
	}
	if f == nil {
		f = &Flow{ID: id, Kind: kind, Key: Key{Time: t.Time, Pos: pos}, Pairs: [2]int{-1, -1}}
		ps.addFlow(f, []holdingKey{holdingOf(t.Exchange, t.Asset)})
		a := strings.ToUpper(t.Asset)
		ps.fl.byAsset[a] = append(ps.fl.byAsset[a], f)
	}
	f.Rank, f.Transfer, f.In = rank, *t, t.Status.InBalance(deposit)
	f.Transfer.Problem = nil
	f.Key.Time = t.Time
	ps.match(strings.ToUpper(t.Asset))
	ps.place(f)
}

// Convert records a conversion, recorded at log position pos (once: a
// conversion of an id already recorded changes nothing).
func (ps *Pairs) Convert(c *domain.Conversion, pos uint64) {
	ps.fl.init()
	id := FlowID(FlowConversion, c.Exchange, c.ID)
	if ps.fl.byID[id] != nil {
		return
	}
	f := &Flow{ID: id, Kind: FlowConversion, Key: Key{Time: c.Time, Pos: pos}, Conversion: *c, In: true, Pairs: [2]int{-1, -1}}
	f.Conversion.Problem = nil
	ps.addFlow(f, []holdingKey{holdingOf(c.Exchange, c.FromAsset), holdingOf(c.Exchange, c.ToAsset)})
	ps.place(f)
}

func (ps *Pairs) addFlow(f *Flow, hs []holdingKey) {
	ps.fl.byID[f.ID] = f
	for _, k := range hs {
		h := ps.fl.holding(k)
		h.flows = append(h.flows, f)
	}
}

// match matches the transfers of asset again (canonically, see above)
// and places again those whose other side changed.
func (ps *Pairs) match(asset string) {
	deps, wds := transfersIn(ps.fl.byAsset[asset])
	peer := map[*Flow]*Flow{}
	matchByTxID(deps, wds, peer)
	matchByAmount(deps, wds, peer)
	var changed []*Flow
	for _, f := range ps.fl.byAsset[asset] {
		id := ""
		if p := peer[f]; p != nil {
			id = p.ID
		}
		if id != f.Peer {
			f.Peer = id
			changed = append(changed, f)
		}
	}
	for _, f := range changed {
		ps.place(f)
	}
}

// transfersIn returns the deposits and the withdrawals among fs that are
// in the balance (In), each in the canonical order of matching: by time,
// exchange, then the exchange's id.
func transfersIn(fs []*Flow) (deps, wds []*Flow) {
	for _, f := range fs {
		if !f.In {
			continue
		}
		if f.Kind == FlowDeposit {
			deps = append(deps, f)
		} else {
			wds = append(wds, f)
		}
	}
	sortTransfers(deps)
	sortTransfers(wds)
	return deps, wds
}

// sortTransfers sorts s by the time, exchange and id of its transfers.
func sortTransfers(s []*Flow) {
	sort.Slice(s, func(i, j int) bool {
		a, b := &s[i].Transfer, &s[j].Transfer
		if a.Time != b.Time {
			return a.Time < b.Time
		}
		if a.Exchange != b.Exchange {
			return a.Exchange < b.Exchange
		}
		return a.ID < b.ID
	})
}

// matchByTxID records in peer (both ways) the first matching of the
// canonical order: each deposit with a txid, in order, takes the first
// unmatched withdrawal from another exchange with the same txid.
func matchByTxID(deps, wds []*Flow, peer map[*Flow]*Flow) {
	for _, d := range deps {
		if d.Transfer.TxID == "" {
			continue
		}
		for _, w := range wds {
			if peer[w] == nil && w.Transfer.TxID == d.Transfer.TxID && w.Transfer.Exchange != d.Transfer.Exchange {
				peer[d], peer[w] = w, d
				break
			}
		}
	}
}

// matchByAmount records in peer (both ways) the second matching, after
// matchByTxID's: each deposit still unmatched, in order, takes the latest
// unmatched withdrawal before it that fits it by amount (fitsByAmount).
func matchByAmount(deps, wds []*Flow, peer map[*Flow]*Flow) {
	for _, d := range deps {
		if peer[d] != nil {
			continue
		}
		var best *Flow
		for _, w := range wds {
			if peer[w] == nil && fitsByAmount(&w.Transfer, &d.Transfer) {
				best = w // the latest before it: wds are in time order
			}
		}
		if best != nil {
			peer[d], peer[best] = best, d
		}
	}
}

// fitsByAmount reports whether withdrawal w may be deposit d's other side
// without a common txid: not both have a txid, they are on different
// exchanges, d comes after w by at most TransferWindow, and d's amount is
// w's, or w's less its network fee.
func fitsByAmount(w, d *domain.Transfer) bool {
	if w.Exchange == d.Exchange || (w.TxID != "" && d.TxID != "") || w.Time >= d.Time || d.Time-w.Time > TransferWindow {
		return false
	}
	return d.Amount.Cmp(w.Amount) == 0 || d.Amount.Cmp(w.Amount.Sub(w.Fee)) == 0
}

// place puts f's moves on their home pairs (taking them off where they
// were): both pairs become dirty from it.
func (ps *Pairs) place(f *Flow) {
	for k, at := range f.Pairs {
		if at >= 0 {
			p := ps.pairs[at]
			if m := p.move(f.at); m != nil && m.Kind == Withdrawal && m.Peer != "" {
				ps.fl.peered[at]--
			}
			p.removeMove(f.at)
			ps.listDirty(at)
			f.Pairs[k] = -1
		}
	}
	f.at = f.Key
	var moves [2]Movement
	var homes [2]int
	n := 0
	switch f.Kind {
	case FlowDeposit, FlowWithdrawal:
		if !f.In {
			break
		}
		t := &f.Transfer
		m := Movement{Key: f.Key, Kind: Deposit, Qty: t.Amount, Flow: f.ID, Peer: f.Peer}
		if f.Kind == FlowWithdrawal {
			m.Kind, m.Fee = Withdrawal, t.Fee
		} else if w := ps.fl.byID[f.Peer]; w != nil && w.Pairs[0] >= 0 {
			if wm := ps.pairs[w.Pairs[0]].move(w.Key); wm != nil {
				c := wm.Taken.Clone()
				m.Carry = &c
			}
		}
		moves[0], homes[0], n = m, ps.home(t.Exchange, t.Asset), 1
	case FlowConversion:
		c := &f.Conversion
		moves[0] = Movement{Key: f.Key, Kind: ConvertOut, Qty: c.FromAmount, Counter: c.ToAsset, CounterQty: c.ToAmount, Flow: f.ID}
		moves[1] = Movement{Key: f.Key, Kind: ConvertIn, Qty: c.ToAmount, Counter: c.FromAsset, CounterQty: c.FromAmount, Flow: f.ID}
		homes[0], homes[1], n = ps.home(c.Exchange, c.FromAsset), ps.home(c.Exchange, c.ToAsset), 2
	}
	for k := 0; k < n; k++ {
		if homes[k] < 0 {
			continue
		}
		ps.pairs[homes[k]].addMove(moves[k])
		ps.listDirty(homes[k])
		f.Pairs[k] = homes[k]
		if moves[k].Kind == Withdrawal && moves[k].Peer != "" {
			ps.fl.peered[homes[k]]++
			ps.pairs[homes[k]].carried = true // its deposit takes what it takes
		}
	}
	ps.setDeps()
}

// listDirty lists pair i among the dirty ones (its fold is dirty).
func (ps *Pairs) listDirty(i int) {
	if !ps.listed[i] {
		ps.listed[i] = true
		ps.dirty = append(ps.dirty, i)
	}
}

// carrying reports whether a withdrawal folded since the last propagate
// took lots its matched deposit does not carry yet.
func (ps *Pairs) carrying() bool {
	for i, n := range ps.fl.peered {
		if n > 0 && ps.pairs[i].carried {
			return true
		}
	}
	return false
}

// propagate gives each matched deposit what its withdrawal took, when a
// fold of the withdrawal changed it: the deposit's pair becomes dirty from
// it.
func (ps *Pairs) propagate() {
	for i, n := range ps.fl.peered {
		p := ps.pairs[i]
		if n <= 0 || !p.carried {
			continue
		}
		p.carried = false
		for k := range p.moves {
			w := &p.moves[k]
			if w.Kind != Withdrawal || w.Peer == "" {
				continue
			}
			d := ps.fl.byID[w.Peer]
			if d == nil || d.Pairs[0] < 0 {
				continue
			}
			dp := ps.pairs[d.Pairs[0]]
			dm := dp.move(d.Key)
			if dm == nil {
				continue
			}
			c := w.Taken.Clone()
			if dm.Carry != nil && dm.Carry.Equal(&c) {
				continue
			}
			dm.Carry = &c
			dp.Late(d.Key)
			ps.listDirty(d.Pairs[0])
		}
	}
}

// Flows returns every flow, in (time, position) order (copies).
func (ps *Pairs) Flows() []Flow {
	out := make([]Flow, 0, len(ps.fl.byID))
	for _, f := range ps.fl.byID {
		out = append(out, *f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key.Less(out[j].Key) })
	return out
}

// FlowCount returns the number of flows.
func (ps *Pairs) FlowCount() int { return len(ps.fl.byID) }

// Flow returns the flow of id.
func (ps *Pairs) Flow(id string) (Flow, bool) {
	f := ps.fl.byID[id]
	if f == nil {
		return Flow{}, false
	}
	return *f, true
}

// Exchange returns the account pair i was registered on (AddOn), "" for
// none.
func (ps *Pairs) Exchange(i int) string {
	if i < len(ps.fl.exchange) {
		return ps.fl.exchange[i]
	}
	return ""
}

// SetFlows records flows read back from a snapshot (Flows' answer), each
// as first recorded: they are placed on their home pairs again, which
// fold again from them.
func (ps *Pairs) SetFlows(fs []Flow) {
	ps.fl.init()
	for i := range fs {
		f := fs[i]
		f.Peer, f.Pairs = "", [2]int{-1, -1}
		switch f.Kind {
		case FlowConversion:
			ps.addFlow(&f, []holdingKey{holdingOf(f.Conversion.Exchange, f.Conversion.FromAsset), holdingOf(f.Conversion.Exchange, f.Conversion.ToAsset)})
		default:
			ps.addFlow(&f, []holdingKey{holdingOf(f.Transfer.Exchange, f.Transfer.Asset)})
			a := strings.ToUpper(f.Transfer.Asset)
			ps.fl.byAsset[a] = append(ps.fl.byAsset[a], &f)
		}
	}
	assets := make([]string, 0, len(ps.fl.byAsset))
	for a := range ps.fl.byAsset {
		assets = append(assets, a)
	}
	sort.Strings(assets)
	for _, a := range assets {
		ps.match(a)
	}
	for _, f := range ps.fl.byID {
		if f.Pairs == [2]int{-1, -1} {
			ps.place(f)
		}
	}
}
