package clickhouse

import (
	"strconv"
	"strings"

	"github.com/tradeledger/tradeledger/domain"
)

// Currency conversion and fee valuation in the sink, as the in-memory
// Ledger does them (projections/pnlconv.go, projections/fees.go): the
// state folds the log's rates into a domain.RateBook in log order, values
// every fill's fee with it (domain.RateBook.Fill) and converts every fill's
// PNL figures into each currency its quote is joined to
// (domain.RateBook.Targets), from the first fill after they are joined.
// The rows hold exact decimal strings, whatever the amounts' scale:
//
//   - pnl_conv_buckets: per currency, pair and 15-minute slot, the pair's
//     aggregate in that currency (part 0: every fill, money of the fills
//     with a rate; part 1: the fills without one, in the pair's quote),
//     packed (packAgg);
//   - fill_fees: the fills whose fee was charged in a third asset, with its
//     valuation (or none: unconverted);
//   - rates: every currency pair's latest rate (what converts unrealized
//     pnl "now"), and settings: the reporting currency.

// convKey names one pair's figures converted into a currency.
type convKey struct {
	bk *book
	to string
}

// convState is one pair's aggregates in another currency, by slot: conv
// holds every fill (money converted, or none for fills without a rate),
// unconv the fills without a rate in the pair's quote.
type convState struct {
	conv, unconv map[int64]*convAgg
}

type convAgg struct {
	domain.PnlAgg[int64]
	position uint64
}

// convRowKey names a pnl_conv_buckets row.
type convRowKey struct {
	to   string
	part uint8 // 0: conv, 1: unconv
	bucketKey
}

type convRow struct {
	convRowKey
	agg      domain.PnlAgg[int64]
	position uint64
}

// feeRow is a fill_fees row: a fee charged in a third asset.
type feeRow struct {
	pairKey
	timeMs, orderID int64
	asset           string
	amount, quote   domain.Decimal
	rate            domain.Decimal
	rateMs          int64
	valued          uint8
	position        uint64
}

type rateRow struct {
	quote, base string
	point       domain.RatePoint
	position    uint64
}

type settingRow struct {
	name, value string
	position    uint64
}

// convert adds fx (a fill of bk at position pos, not yet in bk's own
// buckets) to bk's aggregates in every currency its quote converts into,
// with the unique win/loss move (uFrom → uTo in slot uSlot) of the fill.
func (st *state) convert(bk *book, fx *domain.PnlFill, uFrom, uTo int8, uSlot int64, pos uint64, b *batch) {
	for _, to := range st.rates.Targets(bk.quote) {
		k := convKey{bk, to}
		cs := st.conv[k]
		if cs == nil { // bk's fills so far came before its quote was joined to to
			cs = st.newConv(bk, to, pos, b)
			st.conv[k] = cs
		}
		slot := slotOf(fx.T)
		if p, ok := st.rates.Path(bk.quote, to, fx.T, 0); ok {
			cf := *fx
			for _, x := range []*domain.Decimal{&cf.Value, &cf.Net, &cf.Fee, &cf.Pnl, &cf.Unmatched, &cf.Invested} {
				*x = p.Convert(*x)
			}
			cs.add(to, 0, bk.key, slot, &cf, uFrom, uTo, uSlot, pos, b)
			continue
		}
		u := *fx
		u.Value, u.Net, u.Fee, u.Pnl, u.Unmatched, u.Invested = domain.Zero, domain.Zero, domain.Zero, domain.Zero, domain.Zero, domain.Zero
		u.NoMoney = true
		cs.add(to, 0, bk.key, slot, &u, uFrom, uTo, uSlot, pos, b)
		cs.add(to, 1, bk.key, slot, fx, 2, 2, 0, pos, b) // unconv reports money and trades only
	}
}

// newConv starts bk's figures in to: every fill so far, counted without
// money (conv) and in bk's quote (unconv), as the Ledger's countsOnly and
// cloneSeries.
func (st *state) newConv(bk *book, to string, pos uint64, b *batch) *convState {
	cs := &convState{conv: map[int64]*convAgg{}, unconv: map[int64]*convAgg{}}
	for k, own := range st.buckets {
		if k.pairKey != bk.key {
			continue
		}
		a := own.PnlAgg
		cs.unconv[k.Slot] = &convAgg{PnlAgg: a, position: pos}
		cs.conv[k.Slot] = &convAgg{PnlAgg: domain.PnlAgg[int64]{Trades: a.Trades, Buys: a.Buys, Sells: a.Sells,
			Wins: a.Wins, Losses: a.Losses, Evens: a.Evens, UBuys: a.UBuys, USells: a.USells, UWins: a.UWins,
			ULosses: a.ULosses, FirstT: a.FirstT, LastT: a.LastT}, position: pos}
		if b != nil {
			b.conv[convRowKey{to, 0, k}] = convRow{convRowKey{to, 0, k}, cs.conv[k.Slot].PnlAgg, pos}
			b.conv[convRowKey{to, 1, k}] = convRow{convRowKey{to, 1, k}, a, pos}
		}
	}
	return cs
}

// add adds f to the part's aggregate of slot, and the unique move to
// uSlot's, and queues the changed rows.
func (cs *convState) add(to string, part uint8, key pairKey, slot int64, f *domain.PnlFill, uFrom, uTo int8, uSlot int64, pos uint64, b *batch) {
	m := cs.conv
	if part == 1 {
		m = cs.unconv
	}
	at := func(s int64) *convAgg {
		a := m[s]
		if a == nil {
			a = &convAgg{}
			m[s] = a
		}
		a.position = pos
		return a
	}
	a := at(slot)
	a.Add(f)
	emit := func(s int64, a *convAgg) {
		if b != nil {
			k := convRowKey{to, part, bucketKey{key, s}}
			b.conv[k] = convRow{k, a.PnlAgg, pos}
		}
	}
	emit(slot, a)
	if uFrom != uTo {
		ua := at(uSlot)
		ua.Unique(uFrom, uTo)
		emit(uSlot, ua)
	}
}

// observed queues the latest rate of quote-base after an observation.
func (st *state) observed(quote, base string, pos uint64, b *batch) {
	if b == nil {
		return
	}
	if p, ok := st.rates.Last(quote, base); ok {
		b.rates[domain.CurrencyPair{Quote: quote, Base: base}] = rateRow{quote: quote, base: base, point: p, position: pos}
	}
}

// reporting queues the reporting currency when it changed.
func (st *state) reporting(pos uint64, b *batch) {
	r := st.rates.Reporting()
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
func packAgg(a *domain.PnlAgg[int64]) string {
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
func unpackAgg(s string) (domain.PnlAgg[int64], error) {
	var a domain.PnlAgg[int64]
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
