package projections

import (
	"sort"
	"strings"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/books"
)

// The Ledger as the books' source (domain/books): its order records are the
// fills, already in (time, position) order per pair, with each fee as
// charged and valued in quote as the Ledger's fold valued it
// (fold.ValueFee: in quote as is, in base at the fill's price, in a third
// asset at the rate of its time, or unconverted); rates are the conversion
// book's (pnlconv.go). A report copies
// fills out a chunk at a time under the read lock, so a report over a
// long history never holds the projection up for long.

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
		if b.recs.len() > 0 {
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
	j := 0
	if cur.Started {
		c := orderRecord{time: cur.Time, posSide: cur.Position}
		j = b.recs.search(func(r *orderRecord) bool { return recLess(&c, r) })
	}
	for ; j < b.recs.len() && n > 0; j++ {
		r := b.recs.at(j)
		if r.pos() > s.Position {
			continue
		}
		dst = append(dst, books.Fill{Time: r.time, Position: r.pos(), OrderID: r.id, Sell: r.sell(), Price: b.recs.get(r.rate),
			Qty: b.recs.get(r.amount), Fee: b.fillFee(r)})
		cur = books.Cursor{Time: r.time, Position: r.pos(), Started: true}
		n--
	}
	return dst, cur
}

// BookConvert implements books.Source with the conversion book's rates and
// paths (pnlconv.go, fold.RateBook), among the rates recorded up to
// s.Position.
func (l *Ledger) BookConvert(s books.Snapshot, amount domain.Decimal, from, to string, t int64) (books.Conversion, bool) {
	if from == to {
		return books.Conversion{Amount: amount, Rate: domain.DecimalFromInt(1), RateTime: t}, true
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
// bot.PNL_METHOD (LOFO when unset) and the reporting currency (pnlconv.go).
func (l *Ledger) BookDefaults() (domain.PnlMethod, string) {
	l.rlock()
	defer l.mu.RUnlock()
	return l.booksM, l.conv.reportingCurrency()
}
