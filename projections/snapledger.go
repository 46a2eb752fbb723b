package projections

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/fold"
	"github.com/tradeledger/tradeledger/domain/pnlmath"
	"github.com/tradeledger/tradeledger/domain/snap"
)

// The Ledger's snapshot, written and read field by field. Freeze settles
// the ledger (every late fill folded), then copies its state under the
// lock — all but the order records, whose chunks the frozen copy shares: a
// re-fold or a late fill that writes into a shared chunk copies it first
// (recList.own); the order indexes, whose chunks it shares likewise
// (idIndex.clone); and the series and slot prices, which it shares whole:
// the first write into one after the freeze copies it (ownSlice) —, and
// the copy is encoded afterwards:
//
//	method, version, head, records, books' method
//	pairs, each: exchange, pair; its fold (lots, position, cash flow, last
//	  price, its last slot's prefix; not its restart points, a cache); its records (13 words each, recordWords) and
//	  their wide amounts; its slots; its slot prices; its fee assets and
//	  third-asset fee valuations
//	order index, first fills' index, open orders
//	quote series, strategies, balance snapshots
//	rates, figures in other currencies, their targets, fee assets per exchange
//	books' scope; the accounts' flows (fold.Flow: each transfer in its
//	  latest status, each conversion, with the key it was first recorded
//	  at), placed on their pairs again at load, which fold again from them
//
// Everything derived from these (the indexes by key and name, the pairs by
// currencies, the pairs that depend on rates) is rebuilt at load.

// SnapshotVersion implements Snapshotter: 3 adds the accounts' flows and
// the books' scope to 2, the explicit encoding of the trade-time fold (1
// was the reflection codec's of the log-order one; an older version is
// refused and rebuilt from the log).
func (l *Ledger) SnapshotVersion() uint32 { return 3 }

// ledgerCopy is a Ledger's state frozen for encoding.
type ledgerCopy struct {
	method        domain.PnlMethod
	version, head uint64
	records       int
	booksM        domain.PnlMethod
	pairs         []*pairBook
	orders, first idIndex[uint32]
	open          map[int64]orderState
	quotes        map[string]series
	strat         map[string]string
	assets        map[string][]assetSnap
	rates         fold.RateState
	conv          map[frozenConv]fold.ConvSeries[int32]
	targets       map[string][]string
	targetsGen    uint64
	feeAsts       map[string][]string
	booksS        domain.CostBasisScope
	flows         []fold.Flow
}

// frozenConv names a pair's figures in another currency in a frozen copy:
// the pair's index.
type frozenConv struct {
	pair int
	to   string
}

// Freeze implements Snapshotter.
func (l *Ledger) Freeze() func(*snap.Encoder) {
	l.mu.Lock()
	l.settle()
	c := &ledgerCopy{method: l.Method, version: l.version, head: l.head, records: l.records, booksM: l.booksM,
		orders: l.orders.clone(), first: l.first.clone(), open: maps.Clone(l.open), strat: maps.Clone(l.strat),
		rates: l.conv.Rates.State(), quotes: map[string]series{}, assets: map[string][]assetSnap{},
		conv: map[frozenConv]fold.ConvSeries[int32]{}, targets: map[string][]string{}, feeAsts: map[string][]string{}}
	index := make(map[*pairBook]int, len(l.pairs))
	for i, b := range l.pairs {
		b.recs.frozen = len(b.recs.chunks)
		f := &pairBook{key: b.key, exchange: b.exchange, pair: b.pair, quote: b.quote, base: b.base, fold: b.fold.Clone(),
			recs:   recList{chunks: slices.Clone(b.recs.chunks), n: b.recs.n, wide: slices.Clone(b.recs.wide)},
			series: b.series, prices: b.prices, feeAssets: slices.Clone(b.feeAssets),
			feeOther: maps.Clone(b.feeOther), fees: slices.Clone(b.fees)}
		c.pairs = append(c.pairs, f)
		index[b] = i
	}
	for q, s := range l.quotes {
		c.quotes[q] = s.series // its slots shared until the next write (ownSeries)
	}
	for x, a := range l.assets.exchanges {
		c.assets[x] = slices.Clone(a.snaps) // a snapshot's holdings are never changed in place
	}
	for k, s := range l.conv.pairs {
		c.conv[frozenConv{index[k.b], k.to}] = fold.ConvSeries[int32]{Conv: s.Conv.Clone(), Unconv: s.Unconv.Clone()}
	}
	targets, gen := l.conv.TargetsState()
	for q, ts := range targets {
		c.targets[q] = slices.Clone(ts)
	}
	c.targetsGen = gen
	for x, as := range l.feeAsts {
		c.feeAsts[x] = slices.Clone(as)
	}
	c.booksS, c.flows = l.booksS, l.conv.Flows()
	l.frozen++ // the series are shared with c now
	l.mu.Unlock()
	return c.encode
}

func (c *ledgerCopy) encode(e *snap.Encoder) {
	e.Uint32(uint32(c.method))
	e.Uvarint(c.version)
	e.Uvarint(c.head)
	e.Int(c.records)
	e.Uint32(uint32(c.booksM))
	e.Len(len(c.pairs))
	for _, b := range c.pairs {
		encodePairBook(e, b)
	}
	c.orders.encode(e)
	c.first.encode(e)
	ids := slices.Sorted(maps.Keys(c.open))
	e.Len(len(ids))
	for _, id := range ids {
		st := c.open[id]
		e.Varint(id)
		e.Decimal(st.amount)
		e.Decimal(st.filled)
		encodeOrder(e, &st.fold)
	}
	snap.TextMap(e, c.quotes, func(s series) { encodeSeries(e, &s) })
	snap.TextMap(e, c.strat, e.Text)
	snap.TextMap(e, c.assets, func(snaps []assetSnap) {
		e.Len(len(snaps))
		for _, s := range snaps {
			e.Varint(s.time)
			e.Len(len(s.hold))
			for _, h := range s.hold {
				e.Text(h.asset)
				e.Decimal(h.qty)
			}
		}
	})
	encodeRates(e, &c.rates)
	keys := slices.SortedFunc(maps.Keys(c.conv), func(a, b frozenConv) int {
		if a.pair != b.pair {
			return a.pair - b.pair
		}
		return strings.Compare(a.to, b.to)
	})
	e.Len(len(keys))
	for _, k := range keys {
		s := c.conv[k]
		e.Int(k.pair)
		e.Text(k.to)
		encodeSeries(e, &s.Conv)
		encodeSeries(e, &s.Unconv)
	}
	snap.TextMap(e, c.targets, func(ts []string) { encodeTexts(e, ts) })
	e.Uvarint(c.targetsGen)
	snap.TextMap(e, c.feeAsts, func(as []string) { encodeTexts(e, as) })
	e.Uint32(uint32(c.booksS))
	e.Len(len(c.flows))
	for i := range c.flows {
		encodeFlow(e, &c.flows[i])
	}
}

// encodeFlow writes an account flow as recorded: its kind, key and status
// rank, and the transfer's or conversion's fields.
func encodeFlow(e *snap.Encoder, f *fold.Flow) {
	e.Uint32(uint32(f.Kind))
	encodeKey(e, f.Key)
	e.Varint(int64(f.Rank))
	if f.Kind == fold.FlowConversion {
		c := &f.Conversion
		for _, s := range []string{c.Exchange, c.ID, c.Kind, c.FromAsset, c.ToAsset, c.FeeAsset} {
			e.Text(s)
		}
		for _, d := range []decimal.Decimal{c.FromAmount, c.ToAmount, c.Fee} {
			e.Decimal(d)
		}
		e.Varint(c.Time)
		return
	}
	t := &f.Transfer
	for _, s := range []string{t.Exchange, t.ID, t.Asset, t.Network, t.TxID, t.Address, t.AddressTag, string(t.Status), t.ExchangeStatus} {
		e.Text(s)
	}
	e.Decimal(t.Amount)
	e.Decimal(t.Fee)
	e.Varint(t.Time)
}

// decodeFlow reads what encodeFlow wrote.
func decodeFlow(d *snap.Decoder) fold.Flow {
	f := fold.Flow{Kind: fold.FlowKind(d.Uint32()), Key: decodeKey(d), Rank: int8(d.Varint())}
	switch f.Kind {
	case fold.FlowConversion:
		c := &f.Conversion
		c.Exchange, c.ID, c.Kind, c.FromAsset, c.ToAsset, c.FeeAsset = d.Text(), d.Text(), d.Text(), d.Text(), d.Text(), d.Text()
		c.FromAmount, c.ToAmount, c.Fee = d.Decimal(), d.Decimal(), d.Decimal()
		c.Time = d.Varint()
		f.ID, f.In = fold.FlowID(f.Kind, c.Exchange, c.ID), true
	case fold.FlowDeposit, fold.FlowWithdrawal:
		t := &f.Transfer
		t.Exchange, t.ID, t.Asset, t.Network, t.TxID, t.Address, t.AddressTag = d.Text(), d.Text(), d.Text(), d.Text(), d.Text(), d.Text(), d.Text()
		t.Status, t.ExchangeStatus = domain.TransferStatus(d.Text()), d.Text()
		t.Amount, t.Fee, t.Time = d.Decimal(), d.Decimal(), d.Varint()
		f.ID, f.In = fold.FlowID(f.Kind, t.Exchange, t.ID), t.Status.InBalance(f.Kind == fold.FlowDeposit)
	default:
		if d.Err() == nil {
			d.Failf("a flow of kind %d", f.Kind)
		}
	}
	return f
}

func encodeTexts(e *snap.Encoder, ss []string) {
	e.Len(len(ss))
	for _, s := range ss {
		e.Text(s)
	}
}

func decodeTexts(d *snap.Decoder) []string {
	n := d.Len(1)
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.Text()
	}
	return out
}

// recordWords is the number of words an order record is written in.
const recordWords = 13

// encodePairBook writes one pair's state.
func encodePairBook(e *snap.Encoder, b *pairBook) {
	e.Text(b.exchange)
	e.Text(b.pair)
	s := b.fold.State()
	encodePairFold(e, &s)
	// The amounts a Compact cannot hold are written in record order, each
	// record pointing to its own: the side table as a fold of the records
	// alone gives it (a re-fold leaves the values it replaced in the live
	// table).
	e.Len(b.recs.n)
	buf := make([]uint64, 0, recordWords*recChunk)
	var wide []decimal.Decimal
	c := func(x decimal.Compact) uint64 {
		if _, ok := x.Ref(); ok {
			wide = append(wide, b.recs.get(x))
			x = decimal.CompactRef(len(wide) - 1)
		}
		return uint64(x)
	}
	for _, chunk := range b.recs.chunks {
		buf = buf[:0]
		for i := range chunk {
			r := &chunk[i]
			buf = append(buf, uint64(r.time), r.posSide, uint64(r.id), c(r.rate), c(r.amount), c(r.fee),
				c(r.avgPrice), c(r.position), c(r.cashFlow), c(r.invCost), c(r.abp), c(r.pnl), c(r.unmatchedQt))
		}
		e.Words(buf)
	}
	encodeDecimals(e, wide)
	encodeSeries(e, &b.series)
	e.Len(len(b.prices))
	for _, p := range b.prices {
		e.Varint(p.slot)
		e.Decimal(p.price)
	}
	encodeTexts(e, b.feeAssets)
	others := slices.Sorted(maps.Keys(b.feeOther))
	e.Len(len(others))
	for _, pos := range others {
		e.Uvarint(pos)
		e.Text(b.feeOther[pos])
	}
	e.Len(len(b.fees))
	for _, f := range b.fees {
		e.Varint(f.time)
		e.Uvarint(f.pos)
		e.Text(f.asset)
		e.Decimal(f.amount)
		e.Decimal(f.quote)
		e.Decimal(f.rate)
		e.Varint(f.rateTime)
		e.Bool(f.valued)
	}
}

// decodePairBook reads a pair's state into b (exchange, pair and the
// names derived from them set by the caller).
func decodePairBook(d *snap.Decoder, b *pairBook, method domain.PnlMethod) {
	var s fold.PairState
	decodePairFold(d, &s)
	if d.Err() != nil {
		return
	}
	if s.Lots.Method != method || s.Quote != b.quote || s.Base != b.base {
		d.Failf("pair %s: a fold of %s-%s by %s", b.key, s.Quote, s.Base, s.Lots.Method)
		return
	}
	p, err := fold.PairOf(&s)
	if err != nil {
		d.Fail(err)
		return
	}
	b.fold = *p
	n := d.Len(recordWords * 8)
	buf := make([]uint64, recordWords*recChunk)
	var prev orderRecord
	refs := 0 // the highest wide index a record names, +1
	for done := 0; done < n && d.Err() == nil; {
		m := min(recChunk, n-done)
		w := buf[:recordWords*m]
		d.Words(w)
		var chunk []orderRecord
		if done == 0 {
			chunk = make([]orderRecord, m) // a pair's first chunk grows from its size (recList.push)
		} else {
			chunk = make([]orderRecord, m, recChunk)
		}
		for i := range chunk {
			x := w[recordWords*i : recordWords*i+recordWords]
			r := &chunk[i]
			*r = orderRecord{time: int64(x[0]), posSide: x[1], id: int64(x[2]), rate: decimal.Compact(x[3]),
				amount: decimal.Compact(x[4]), fee: decimal.Compact(x[5]), avgPrice: decimal.Compact(x[6]),
				position: decimal.Compact(x[7]), cashFlow: decimal.Compact(x[8]), invCost: decimal.Compact(x[9]),
				abp: decimal.Compact(x[10]), pnl: decimal.Compact(x[11]), unmatchedQt: decimal.Compact(x[12])}
			if done+i > 0 && !recLess(&prev, r) && d.Err() == nil {
				d.Failf("pair %s: records out of (time, position) order at %d", b.key, done+i)
			}
			prev = *r
			for _, v := range x[3:] {
				if k, ok := decimal.Compact(v).Ref(); ok {
					refs = max(refs, k+1)
				}
			}
		}
		b.recs.chunks = append(b.recs.chunks, chunk)
		done += m
	}
	b.recs.n = n
	b.recs.wide = decodeDecimals(d)
	if refs > len(b.recs.wide) && d.Err() == nil {
		d.Failf("pair %s: a record names wide amount %d of %d", b.key, refs-1, len(b.recs.wide))
	}
	b.series = decodeSeries(d)
	for range d.Len(2) {
		b.prices = append(b.prices, pricePoint{slot: d.Varint(), price: d.Decimal()})
	}
	b.feeAssets = decodeTexts(d)
	if m := d.Len(2); m > 0 {
		b.feeOther = make(map[uint64]string, m)
		for range m {
			pos := d.Uvarint()
			b.feeOther[pos] = d.Text()
		}
	}
	for range d.Len(9) {
		b.fees = append(b.fees, feeEntry{time: d.Varint(), pos: d.Uvarint(), asset: d.Text(), amount: d.Decimal(),
			quote: d.Decimal(), rate: d.Decimal(), rateTime: d.Varint(), valued: d.Bool()})
	}
}

func encodeDecimals(e *snap.Encoder, ds []decimal.Decimal) {
	e.Len(len(ds))
	for _, x := range ds {
		e.Decimal(x)
	}
}

func decodeDecimals(d *snap.Decoder) []decimal.Decimal {
	n := d.Len(1)
	if n == 0 {
		return nil
	}
	out := make([]decimal.Decimal, n)
	for i := range out {
		out[i] = d.Decimal()
	}
	return out
}

func encodeKey(e *snap.Encoder, k fold.Key) {
	e.Varint(k.Time)
	e.Uvarint(k.Pos)
}

func decodeKey(d *snap.Decoder) fold.Key { return fold.Key{Time: d.Varint(), Pos: d.Uvarint()} }

// encodePairFold writes a pair's fold (its restart points are a cache,
// left out: fold.PairState).
func encodePairFold(e *snap.Encoder, s *fold.PairState) {
	e.Text(s.Quote)
	e.Text(s.Base)
	encodeLots(e, &s.Lots)
	e.Decimal(s.Position)
	e.Decimal(s.CashFlow)
	e.Decimal(s.LastPrice)
	encodeKey(e, s.Last)
	e.Bool(s.Started)
	e.Bool(s.Dirty)
	encodeKey(e, s.From)
	e.Int(s.Third)
	e.Varint(s.Slot)
	encodeAgg(e, &s.Prefix)
}

func decodePairFold(d *snap.Decoder, s *fold.PairState) {
	s.Quote, s.Base = d.Text(), d.Text()
	decodeLots(d, &s.Lots)
	s.Position, s.CashFlow, s.LastPrice = d.Decimal(), d.Decimal(), d.Decimal()
	s.Last = decodeKey(d)
	s.Started = d.Bool()
	s.Dirty = d.Bool()
	s.From = decodeKey(d)
	s.Third = d.Int()
	s.Slot = d.Varint()
	decodeAgg(d, &s.Prefix)
}

// encodeLots writes a pair's lots as pnlmath.Lots keeps them.
func encodeLots(e *snap.Encoder, s *pnlmath.LotsState) {
	e.Uint32(uint32(s.Method))
	e.Len(len(s.Queue))
	for _, h := range s.Queue {
		e.Compact(h.Qty)
		e.Compact(h.Cost)
	}
	e.Int(s.Head)
	e.Len(len(s.Heap))
	for _, h := range s.Heap {
		e.Compact(h.Qty)
		e.Compact(h.Cost)
		e.Varint(h.Seq)
	}
	e.Bool(s.Tagged)
	e.Len(len(s.Tags))
	for _, t := range s.Tags {
		e.Varint(t.Time)
		e.Varint(t.Ref)
	}
	encodeDecimals(e, s.Wide)
	e.Len(len(s.Free))
	for _, f := range s.Free {
		e.Int(f)
	}
	e.Len(len(s.Clamp))
	for _, c := range s.Clamp {
		e.Varint(c.Seq)
		e.Decimal(c.Key.Qty)
		e.Decimal(c.Key.Cost)
		e.Varint(c.Key.Time)
		e.Varint(c.Key.Ref)
	}
	e.Varint(s.Seq)
	e.Varint(s.Front)
	e.Decimal(s.Qty)
	e.Decimal(s.Cost)
}

func decodeLots(d *snap.Decoder, s *pnlmath.LotsState) {
	s.Method = domain.PnlMethod(d.Uint32())
	for range d.Len(16) {
		s.Queue = append(s.Queue, pnlmath.HeldLot{Qty: d.Compact(), Cost: d.Compact()})
	}
	s.Head = d.Int()
	for range d.Len(17) {
		s.Heap = append(s.Heap, pnlmath.HeapLot{HeldLot: pnlmath.HeldLot{Qty: d.Compact(), Cost: d.Compact()}, Seq: d.Varint()})
	}
	s.Tagged = d.Bool()
	for range d.Len(2) {
		s.Tags = append(s.Tags, pnlmath.LotTag{Time: d.Varint(), Ref: d.Varint()})
	}
	s.Wide = decodeDecimals(d)
	for range d.Len(1) {
		s.Free = append(s.Free, d.Int())
	}
	for range d.Len(5) {
		s.Clamp = append(s.Clamp, pnlmath.ClampKey{Seq: d.Varint(), Key: pnlmath.Lot{Qty: d.Decimal(), Cost: d.Decimal(), Time: d.Varint(), Ref: d.Varint()}})
	}
	s.Seq, s.Front = d.Varint(), d.Varint()
	s.Qty, s.Cost = d.Decimal(), d.Decimal()
}

// encodeOrder writes an order's figures in the fold.
func encodeOrder(e *snap.Encoder, o *fold.Order) {
	e.Varint(int64(o.Fills))
	e.Decimal(o.Filled)
	e.Decimal(o.FilledCost)
	e.Decimal(o.Pnl)
	e.Varint(o.CloseT)
	e.Bool(o.Closed)
}

func decodeOrder(d *snap.Decoder) fold.Order {
	return fold.Order{Fills: int32(d.Varint()), Filled: d.Decimal(), FilledCost: d.Decimal(), Pnl: d.Decimal(), CloseT: d.Varint(), Closed: d.Bool()}
}

// encodeSeries writes a series: its slots, then its total.
func encodeSeries(e *snap.Encoder, s *series) {
	e.Len(len(s.Slots))
	for i := range s.Slots {
		x := &s.Slots[i]
		e.Varint(x.Slot)
		e.Decimal(x.Cum)
		encodeAgg(e, &x.PnlAgg)
	}
	encodeAgg(e, &s.Total)
}

func decodeSeries(d *snap.Decoder) series {
	var s series
	if n := d.Len(30); n > 0 {
		s.Slots = make([]fold.Slot[int32], n)
		for i := range s.Slots {
			x := &s.Slots[i]
			x.Slot, x.Cum = d.Varint(), d.Decimal()
			decodeAgg(d, &x.PnlAgg)
			if i > 0 && s.Slots[i-1].Slot >= x.Slot && d.Err() == nil {
				d.Failf("slots out of order: %d after %d", x.Slot, s.Slots[i-1].Slot)
			}
		}
	}
	decodeAgg(d, &s.Total)
	return s
}

// encodeAgg writes an aggregate: its counts, its money, its times. Counts
// of either width (a pair's int32, a slot prefix's int64) are written as
// varints, so the bytes do not depend on C.
func encodeAgg[C int32 | int64](e *snap.Encoder, a *fold.PnlAgg[C]) {
	for _, n := range []C{a.Trades, a.Buys, a.Sells, a.Wins, a.Losses, a.Evens, a.Priced, a.UBuys, a.USells, a.UWins, a.ULosses} {
		e.Varint(int64(n))
	}
	for _, x := range []decimal.Decimal{a.Pnl, a.Profit, a.Loss, a.Fees, a.CpWins, a.CpLosses, a.BuyValue, a.SellValue,
		a.Volume, a.Unmatched, a.Invested, a.Hero, a.Fuck} {
		e.Decimal(x)
	}
	for _, t := range []int64{a.HeroT, a.FuckT, a.FirstT, a.LastT} {
		e.Varint(t)
	}
}

// decodeAgg reads what encodeAgg wrote.
func decodeAgg[C int32 | int64](d *snap.Decoder, a *fold.PnlAgg[C]) {
	n := func() C { return C(d.Varint()) }
	a.Trades, a.Buys, a.Sells, a.Wins, a.Losses, a.Evens = n(), n(), n(), n(), n(), n()
	a.Priced, a.UBuys, a.USells, a.UWins, a.ULosses = n(), n(), n(), n(), n()
	a.Pnl, a.Profit, a.Loss, a.Fees, a.CpWins, a.CpLosses = d.Decimal(), d.Decimal(), d.Decimal(), d.Decimal(), d.Decimal(), d.Decimal()
	a.BuyValue, a.SellValue, a.Volume, a.Unmatched, a.Invested = d.Decimal(), d.Decimal(), d.Decimal(), d.Decimal(), d.Decimal()
	a.Hero, a.Fuck = d.Decimal(), d.Decimal()
	a.HeroT, a.FuckT, a.FirstT, a.LastT = d.Varint(), d.Varint(), d.Varint(), d.Varint()
}

// encodeRates writes the rate book.
func encodeRates(e *snap.Encoder, s *fold.RateState) {
	e.Len(len(s.Pairs))
	for _, p := range s.Pairs {
		e.Text(p.Quote)
		e.Text(p.Base)
		e.Len(len(p.Points))
		for _, x := range p.Points {
			e.Varint(x.T)
			e.Uvarint(x.Pos)
			e.Decimal(x.Rate)
		}
	}
	encodeTexts(e, s.Quotes)
	for _, n := range s.Fills {
		e.Varint(n)
	}
	e.Text(s.Report)
	e.Uvarint(s.Gen)
	e.Varint(s.FeeMaxAge)
}

func decodeRates(d *snap.Decoder) fold.RateState {
	var s fold.RateState
	for range d.Len(3) {
		p := fold.PairPoints{CurrencyPair: fold.CurrencyPair{Quote: d.Text(), Base: d.Text()}}
		for range d.Len(3) {
			p.Points = append(p.Points, fold.RatePoint{T: d.Varint(), Pos: d.Uvarint(), Rate: d.Decimal()})
		}
		s.Pairs = append(s.Pairs, p)
	}
	s.Quotes = decodeTexts(d)
	for range s.Quotes {
		s.Fills = append(s.Fills, d.Varint())
	}
	s.Report = d.Text()
	s.Gen = d.Uvarint()
	s.FeeMaxAge = d.Varint()
	return s
}

// Load implements Snapshotter. A snapshot of a Ledger that matches lots
// another way (serve's --pnl-method against an asOf read's method=) is
// refused before it is read.
func (l *Ledger) Load(d *snap.Decoder) (func(), error) {
	if m := domain.PnlMethod(d.Uint32()); m != l.Method && d.Err() == nil {
		return nil, fmt.Errorf("a ledger matching lots by %s, this one by %s", m, l.Method)
	}
	n := NewLedger(l.Method)
	n.version, n.head, n.records = d.Uvarint(), d.Uvarint(), d.Int()
	n.booksM = domain.PnlMethod(d.Uint32())
	for i := range d.Len(4) {
		exchange, pair := d.Text(), d.Text()
		if d.Err() != nil {
			break
		}
		_, b, err := n.book(exchange, pair)
		if err != nil || len(n.pairs) != i+1 {
			d.Failf("pair %q of %q: twice, or %v", pair, exchange, err)
			break
		}
		decodePairBook(d, b, l.Method)
	}
	n.orders.decode(d)
	n.first.decode(d)
	for range d.Len(4) {
		id := d.Varint()
		n.open[id] = orderState{amount: d.Decimal(), filled: d.Decimal(), fold: decodeOrder(d)}
	}
	for range d.Len(2) {
		q := d.Text()
		n.quotes[q] = &quoteSeries{series: decodeSeries(d)}
	}
	for range d.Len(2) {
		k := d.Text()
		n.strat[k] = d.Text()
	}
	for range d.Len(2) {
		x := n.assets.exchange(d.Text())
		for range d.Len(2) {
			s := assetSnap{time: d.Varint()}
			for range d.Len(2) {
				s.hold = append(s.hold, assetQty{asset: d.Text(), qty: d.Decimal()})
			}
			x.snaps = append(x.snaps, s)
		}
	}
	rs := decodeRates(d)
	if d.Err() == nil {
		rates, err := fold.RateBookOf(&rs)
		if err != nil {
			d.Fail(err)
		}
		rates.Fills = n
		n.conv.Rates = rates
	}
	for range d.Len(3) {
		i, to := d.Int(), d.Text()
		conv, unconv := decodeSeries(d), decodeSeries(d)
		if i < 0 || i >= len(n.pairs) {
			if d.Err() == nil {
				d.Failf("figures in %s of pair %d of %d", to, i, len(n.pairs))
			}
			break
		}
		if n.conv.pairs == nil {
			n.conv.pairs = map[convKey]*fold.ConvSeries[int32]{}
		}
		n.conv.pairs[convKey{n.pairs[i], to}] = &fold.ConvSeries[int32]{Conv: conv, Unconv: unconv}
	}
	targets := map[string][]string{}
	for range d.Len(2) {
		q := d.Text()
		targets[q] = decodeTexts(d)
	}
	gen := d.Uvarint()
	for range d.Len(2) {
		x := d.Text()
		if n.feeAsts == nil {
			n.feeAsts = map[string][]string{}
		}
		n.feeAsts[x] = decodeTexts(d)
	}
	n.booksS = domain.CostBasisScope(d.Uint32())
	var flows []fold.Flow
	for range d.Len(8) {
		flows = append(flows, decodeFlow(d))
	}
	if err := d.Err(); err != nil {
		return nil, err
	}
	n.conv.SetTargets(targets, gen)
	n.conv.SetFlows(flows)
	return func() {
		l.mu.Lock()
		l.install(n)
		l.mu.Unlock()
	}, nil
}

// install makes n's state l's, keeping l's settings, interner and lock;
// the page cache starts empty. Called with l.mu held.
func (l *Ledger) install(n *Ledger) {
	l.pairs, l.byKey, l.byName, l.byCur = n.pairs, n.byKey, n.byName, n.byCur
	l.orders, l.first, l.open, l.quotes, l.strat = n.orders, n.first, n.open, n.quotes, n.strat
	l.assets, l.conv, l.booksM, l.head, l.records, l.version = n.assets, n.conv, n.booksM, n.head, n.records, n.version
	l.feeAsts, l.booksS = n.feeAsts, n.booksS
	l.conv.Rates.Fills = l
	l.pages.mu.Lock()
	l.pages.size, l.pages.fifo, l.pages.head = 0, nil, 0
	l.pages.mu.Unlock()
}
