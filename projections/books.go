package projections

import (
	"sort"
	"strings"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/books"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/fold"
)

// The Ledger as the books' source (domain/books): its order records are the
// fills, already in (time, position) order per pair, with each fee as
// charged and valued in quote as the Ledger's fold valued it
// (fold.ValueFee: in quote as is, in base at the fill's price, in a third
// asset at the rate of its time, or unconverted), trades the service did
// not place among them (external); each pair's moves (the deposits,
// withdrawals and conversion legs its fold routed to it, fold.Movement)
// are merged in among them; the accounts' flows are the fold's
// (fold.Pairs.Flows); rates are the conversion book's (pnlconv.go). A
// report copies fills out a chunk at a time under the read lock, so a
// report over a long history never holds the projection up for long.

// feeCode returns the code of a fill's fee asset on b (orderRecord), adding
// a third asset to b.feeAssets.
func (b *pairBook) feeCode(asset string, pos uint64) uint64 {
	switch {
	case asset == "" || strings.EqualFold(asset, b.quote):
		return 0
	case strings.EqualFold(asset, b.base):
		return 1
	}
	for i, a := range b.feeAssets {
		if a == asset {
			return uint64(i) + 2
		}
	}
	if len(b.feeAssets) < feeOverflow-2 {
		b.feeAssets = append(b.feeAssets, strings.Clone(asset))
		return uint64(len(b.feeAssets)) + 1
	}
	if b.feeOther == nil {
		b.feeOther = map[uint64]string{}
	}
	b.feeOther[pos] = strings.Clone(asset)
	return feeOverflow
}

// feeAsset returns the asset r's fee is charged in ("" for none).
func (b *pairBook) feeAsset(r *orderRecord) string {
	switch c := r.feeCode(); {
	case b.recs.get(r.fee).IsZero() && c == 0:
		return ""
	case c == 0:
		return b.quote
	case c == 1:
		return b.base
	case c == feeOverflow:
		return b.feeOther[r.pos()]
	default:
		return b.feeAssets[c-2]
	}
}

// fillFee returns r's fee as the books read it: as charged and valued
// (feeOf, fees.go).
func (b *pairBook) fillFee(r *orderRecord) books.Fee {
	f := b.feeOf(r)
	if r.feeCode() == 0 && f.Amount.IsZero() {
		f.Asset = "" // none
	}
	return f
}

// BookSnapshot implements books.Source: the fills applied so far and the
// rates observed so far.
func (l *Ledger) BookSnapshot() books.Snapshot {
	l.rlock()
	defer l.mu.RUnlock()
	return books.Snapshot{Position: l.head}
}

// BookPairs implements books.Source: the pair keys with a fill, sorted.
func (l *Ledger) BookPairs() []books.Pair {
	l.rlock()
	defer l.mu.RUnlock()
	var out []books.Pair
	for _, b := range l.pairs {
		if b.recs.len() > 0 || len(b.fold.Moves()) > 0 {
			out = append(out, books.Pair{Key: b.key, Exchange: b.exchange, Pair: b.pair, Quote: b.quote, Base: b.base})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// BookFills implements books.Source over key's order records.
func (l *Ledger) BookFills(s books.Snapshot, key string, cur books.Cursor, n int, dst []books.Fill) ([]books.Fill, books.Cursor) {
	l.rlock()
	defer l.mu.RUnlock()
	i, ok := l.byKey[key]
	if !ok || n <= 0 {
		return dst, cur
	}
	b := l.pairs[i]
	moves := b.fold.Moves()
	j, k := 0, 0
	if cur.Started {
		c := orderRecord{time: cur.Time, posSide: cur.Position}
		j = b.recs.search(func(r *orderRecord) bool { return recLess(&c, r) })
		after := fold.Key{Time: cur.Time, Pos: cur.Position}
		k = sort.Search(len(moves), func(i int) bool { return after.Less(moves[i].Key) })
	}
	for n > 0 && (j < b.recs.len() || k < len(moves)) {
		if k < len(moves) && (j == b.recs.len() || moves[k].Key.Less(fold.Key{Time: b.recs.at(j).time, Pos: b.recs.at(j).pos()})) {
			m := &moves[k]
			k++
			if m.Pos > s.Position {
				continue
			}
			dst = append(dst, bookMove(m))
			cur = books.Cursor{Time: m.Time, Position: m.Pos, Started: true}
			n--
			continue
		}
		r := b.recs.at(j)
		j++
		if r.pos() > s.Position {
			continue
		}
		f := books.Fill{Time: r.time, Position: r.pos(), OrderID: r.id, Sell: r.sell(), Price: b.recs.get(r.rate),
			Qty: b.recs.get(r.amount), Fee: b.fillFee(r)}
		if r.external() {
			f.Kind = books.KindExternal
		}
		dst = append(dst, f)
		cur = books.Cursor{Time: r.time, Position: r.pos(), Started: true}
		n--
	}
	return dst, cur
}

// bookMove returns a pair's move as the books read it.
func bookMove(m *fold.Movement) books.Fill {
	f := books.Fill{Time: m.Time, Position: m.Pos, Qty: m.Qty, Fee: books.Fee{Rate: decimal.DecimalFromInt(1), RateTime: m.Time, Valued: true},
		Flow: m.Flow, Peer: m.Peer}
	switch m.Kind {
	case fold.Deposit:
		f.Kind, f.Value, f.Priced = books.KindDeposit, m.Value, m.Priced
	case fold.Withdrawal:
		f.Kind, f.NetworkFee = books.KindWithdrawal, m.Fee
	case fold.ConvertOut, fold.ConvertIn:
		f.Kind, f.Sell = books.KindConvertIn, m.Kind == fold.ConvertOut
		if f.Sell {
			f.Kind = books.KindConvertOut
		}
		f.Counter, f.CounterQty, f.Value, f.Priced = m.Counter, m.CounterQty, m.Value, m.Priced
	}
	return f
}

// BookFlows implements books.Source with the fold's flows (fold.Pairs):
// every conversion, every transfer in the balance, recorded up to
// s.Position.
func (l *Ledger) BookFlows(s books.Snapshot) []books.Flow {
	l.rlock()
	defer l.mu.RUnlock()
	var out []books.Flow
	for _, f := range l.conv.Flows() {
		if !f.In || f.Key.Pos > s.Position {
			continue
		}
		x := books.Flow{ID: f.ID, Kind: f.Kind.String(), Time: f.Key.Time, Position: f.Key.Pos, Peer: f.Peer}
		for k, i := range f.Pairs {
			if i >= 0 {
				x.Pairs[k] = l.pairs[i].key
			}
		}
		if p, ok := l.conv.Flow(f.Peer); ok && f.Peer != "" {
			x.PeerExchange = p.Transfer.Exchange
		}
		if f.Kind == fold.FlowConversion {
			c := &f.Conversion
			x.Exchange, x.ExID, x.ConvKind = c.Exchange, c.ID, c.Kind
			x.FromAsset, x.FromAmount, x.ToAsset, x.ToAmount, x.ConvFee, x.ConvFeeAsset = c.FromAsset, c.FromAmount, c.ToAsset, c.ToAmount, c.Fee, c.FeeAsset
		} else {
			t := &f.Transfer
			x.Exchange, x.ExID, x.Asset, x.Amount, x.Fee, x.TxID, x.Status = t.Exchange, t.ID, t.Asset, t.Amount, t.Fee, t.TxID, t.Status
		}
		out = append(out, x)
	}
	return out
}

// BookConvert implements books.Source with the conversion book's rates and
// paths (pnlconv.go, fold.RateBook), among the rates recorded up to
// s.Position.
func (l *Ledger) BookConvert(s books.Snapshot, amount decimal.Decimal, from, to string, t int64) (books.Conversion, bool) {
	if from == to {
		return books.Conversion{Amount: amount, Rate: decimal.DecimalFromInt(1), RateTime: t}, true
	}
	l.rlock()
	defer l.mu.RUnlock()
	p, ok := l.conv.Rates.PathAsOf(from, to, t, 0, s.Position)
	if !ok {
		return books.Conversion{}, false
	}
	return books.Conversion{Amount: p.Convert(amount), Rate: p.Rate(), RateTime: p.Time(t)}, true
}

// BookDefaults returns what a report uses when its request names none:
// bot.PNL_METHOD (LOFO when unset), the reporting currency (pnlconv.go)
// and bot.COST_BASIS_SCOPE (account when unset).
func (l *Ledger) BookDefaults() (domain.PnlMethod, string, domain.CostBasisScope) {
	l.rlock()
	defer l.mu.RUnlock()
	return l.booksM, l.conv.reportingCurrency(), l.booksS
}
