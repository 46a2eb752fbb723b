package clickhouse

import (
	"slices"
	"strconv"
	"strings"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/fold"
)

// Currency conversion and fee valuation in the sink, by the fold the
// in-memory Ledger runs (domain/fold): the state keeps every rate of the
// log in a fold.RateBook, values every fill's fee with it (fold.ValueFee, at
// the rates at or before the fill in trade order) and converts every
// fill's PNL figures into each currency its quote is joined to
// (fold.RateBook.Targets; fold.ConvSeries), over the pair's whole history.
// The rows hold exact decimal strings, whatever the amounts' scale:
//
//   - pnl_conv_buckets9: per currency, pair and 15-minute slot, the pair's
//     aggregate in that currency (part 0: every fill, money of the fills
//     with a rate; part 1: the fills without one, in the pair's quote),
//     packed (packAgg);
//   - pnl_conv_totals9: per currency and pair, the pair's totals over all
//     time in that currency (both parts), what the fleet's overview reads;
//   - fill_fees9: the fills whose fee was charged in a third asset, with its
//     valuation (or none: unconverted);
//   - rates9: every currency pair's latest rate (what converts unrealized
//     pnl "now"), and settings: the reporting currency.

// convKey names one pair's figures converted into a currency.
type convKey struct {
	bk *book
	to string
}

// convRowKey names a pnl_conv_buckets9 row.
type convRowKey struct {
	to   string
	part uint8 // 0: conv, 1: unconv
	bucketKey
}

type convRow struct {
	convRowKey
	agg      fold.PnlAgg[int64]
	position uint64
}

// feeRow is a fill_fees9 row: a fee charged in a third asset. position is
// its fill's log position (in the key), version the row's.
type feeRow struct {
	pairKey
	timeMs, orderID   int64
	asset             string
	amount, quote     domain.Decimal
	rate              domain.Decimal
	rateMs            int64
	valued            uint8
	position, version uint64
}

type rateRow struct {
	quote, base string
	point       fold.RatePoint
	position    uint64
}

type settingRow struct {
	name, value string
	position    uint64
}

// convOf returns bk's figures in to, creating them.
func (st *state) convOf(bk *book, to string) *fold.ConvSeries[int64] {
	k := convKey{bk, to}
	cs := st.conv[k]
	if cs == nil {
		cs = &fold.ConvSeries[int64]{}
		st.conv[k] = cs
		bk.convs = append(bk.convs, to)
	}
	return cs
}

// convTotalRow is a pnl_conv_totals9 row: a pair's figures over all time
// in currency to (ok), or the mark that its quote no longer converts into
// to (not ok).
type convTotalRow struct {
	to           string
	key          pairKey
	conv, unconv fold.PnlAgg[int64]
	ok           uint8
	position     uint64
}

// convTotals queues the pnl_conv_totals9 rows of the books changed since
// the last flush: each one's totals in every currency its quote converts
// into now, and the mark "no longer" for every currency it was converted
// into before.
func (st *state) convTotals(b *batch) {
	for bk := range b.books {
		targets := st.folds.Targets(bk.quote)
		for _, to := range bk.convs {
			row := convTotalRow{to: to, key: bk.key, position: bk.pos}
			if slices.Contains(targets, to) {
				cs := st.conv[convKey{bk, to}]
				row.conv, row.unconv, row.ok = cs.Conv.Total, cs.Unconv.Total, 1
			}
			b.convTotals = append(b.convTotals, row)
		}
	}
}

// emitConv queues both parts of bk's slot in to.
func (st *state) emitConv(bk *book, to string, slot int64, pos uint64, b *batch) {
	if b == nil {
		return
	}
	cs := st.convOf(bk, to)
	for part, s := range []*fold.Series[int64]{&cs.Conv, &cs.Unconv} {
		if i := s.SlotIndex(slot); i >= 0 {
			k := convRowKey{to, uint8(part), bucketKey{bk.key, slot}}
			b.conv[k] = convRow{k, s.Slots[i].PnlAgg, pos}
		}
	}
}

// settle folds every dirty book again and queues the rows that changed,
// with pos (the last position read) as their version. Called before a
// flush, so that the rows written are those of the log up to pos in trade
// time.
func (st *state) settle(pos uint64, b *batch) {
	for st.folds.Unsettled() {
		for _, i := range st.folds.TakeDirty() {
			st.refold(st.list[i], pos, b)
		}
	}
}

// refold folds bk again from where it became dirty and queues every row
// derived from its fills from there.
func (st *state) refold(bk *book, pos uint64, b *batch) {
	targets := st.folds.Targets(bk.quote)
	conv := make([]*fold.ConvSeries[int64], len(targets))
	unconvBefore := make([][]int64, len(targets)) // a fill converted now leaves its slot of part 1: its row is written empty
	for k, to := range targets {
		conv[k] = st.convOf(bk, to)
		for _, x := range conv[k].Unconv.Slots {
			unconvBefore[k] = append(unconvBefore[k], x.Slot)
		}
	}
	// A pair with moves (deposits, withdrawals, conversion legs: fold's
	// move.go) may lose slots when one is routed away: their rows are
	// written empty.
	var before []int64
	if bk.moved = bk.moved || len(bk.fold.Moves()) > 0; bk.moved {
		for _, x := range bk.series.Slots {
			before = append(before, x.Slot)
		}
	}
	rb, moved := fold.Refold(&bk.fold, &bk.fills, &st.folds.Rates, &bk.series, targets, conv, func(i int, f *fold.Fill, r *fold.Result) {
		if i < 0 {
			return // a conversion leg: in the slots, no fill row
		}
		bk.fills.Set(i, r.Out())
		st.emitFill(bk, i, f, r, pos, b)
	})
	for _, slot := range before {
		if slot >= rb.FromSlot && bk.series.SlotIndex(slot) < 0 {
			moved = append(moved, slot)
			if b != nil {
				k := bucketKey{bk.key, slot}
				b.buckets[k] = bucketRow{bucketKey: k, Position: pos}
				for c, to := range targets {
					if conv[c].Conv.SlotIndex(slot) < 0 {
						ck := convRowKey{to, 0, k}
						b.conv[ck] = convRow{ck, fold.PnlAgg[int64]{}, pos}
					}
				}
			}
		}
	}
	for id, o := range rb.Orders {
		if oo := st.open[id]; oo != nil {
			oo.fold = *o
		}
		st.emitOrderPnl(bk, id, o, pos, b)
	}
	for _, x := range bk.series.Slots {
		if x.Slot >= rb.FromSlot {
			moved = append(moved, x.Slot)
		}
	}
	for _, slot := range moved {
		st.emitSlot(bk, slot, pos, b)
		for _, to := range targets {
			st.emitConv(bk, to, slot, pos, b)
		}
		st.emitPrice(bk, slot*fold.SlotMs, pos, b)
	}
	if b != nil {
		for k, to := range targets {
			for _, slot := range unconvBefore[k] {
				if slot >= rb.FromSlot && conv[k].Unconv.SlotIndex(slot) < 0 {
					ck := convRowKey{to, 1, bucketKey{bk.key, slot}}
					b.conv[ck] = convRow{ck, fold.PnlAgg[int64]{}, pos}
				}
			}
		}
	}
	if bk.fold.UsesRates() {
		st.folds.Valued(bk.index)
	}
	st.emitPair(bk, pos, b)
}

// observed queues the latest rate of quote-base after an observation.
func (st *state) observed(quote, base string, pos uint64, b *batch) {
	if b == nil {
		return
	}
	if p, ok := st.folds.Rates.Last(quote, base); ok {
		b.rates[fold.CurrencyPair{Quote: quote, Base: base}] = rateRow{quote: quote, base: base, point: p, position: pos}
	}
}

// reporting queues the reporting currency when it changed.
func (st *state) reporting(pos uint64, b *batch) {
	r := st.folds.Rates.Reporting()
	if r == st.report {
		return
	}
	st.report = r
	if b != nil {
		b.settings["reporting"] = settingRow{name: "reporting", value: r, position: pos}
	}
}

// packAgg writes an aggregate as the text pnl_conv_buckets holds: its
// counts, its money as exact decimals, then its times, space-separated.
func packAgg(a *fold.PnlAgg[int64]) string {
	b := make([]byte, 0, 256)
	for _, n := range []int64{a.Trades, a.Buys, a.Sells, a.Wins, a.Losses, a.Evens, a.Priced, a.UBuys, a.USells, a.UWins, a.ULosses} {
		b = strconv.AppendInt(b, n, 10)
		b = append(b, ' ')
	}
	for _, d := range []domain.Decimal{a.Pnl, a.Profit, a.Loss, a.Fees, a.CpWins, a.CpLosses, a.BuyValue, a.SellValue,
		a.Volume, a.Unmatched, a.Invested, a.Hero, a.Fuck} {
		b = d.AppendTrimmed(b)
		b = append(b, ' ')
	}
	for i, n := range []int64{a.HeroT, a.FuckT, a.FirstT, a.LastT} {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, n, 10)
	}
	return string(b)
}

// unpackAgg reads packAgg's text.
func unpackAgg(s string) (fold.PnlAgg[int64], error) {
	var a fold.PnlAgg[int64]
	f := strings.Fields(s)
	if len(f) != 28 {
		return a, domain.Errorf(domain.EINVALID, "packed aggregate of %d fields, want 28", len(f))
	}
	ints := []*int64{&a.Trades, &a.Buys, &a.Sells, &a.Wins, &a.Losses, &a.Evens, &a.Priced, &a.UBuys, &a.USells, &a.UWins, &a.ULosses}
	decs := []*domain.Decimal{&a.Pnl, &a.Profit, &a.Loss, &a.Fees, &a.CpWins, &a.CpLosses, &a.BuyValue, &a.SellValue,
		&a.Volume, &a.Unmatched, &a.Invested, &a.Hero, &a.Fuck}
	times := []*int64{&a.HeroT, &a.FuckT, &a.FirstT, &a.LastT}
	var err error
	for i, p := range ints {
		if *p, err = strconv.ParseInt(f[i], 10, 64); err != nil {
			return a, err
		}
	}
	for i, p := range decs {
		if *p, err = domain.ParseDecimal(f[len(ints)+i]); err != nil {
			return a, err
		}
	}
	for i, p := range times {
		if *p, err = strconv.ParseInt(f[len(ints)+len(decs)+i], 10, 64); err != nil {
			return a, err
		}
	}
	return a, nil
}
