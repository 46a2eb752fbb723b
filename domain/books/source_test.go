package books

import (
	"slices"
	"sort"
	"time"

	"github.com/tradeledger/tradeledger/domain/decimal"
)

// memSource is a Source held in slices, for the tests: the fills of each
// pair and the rates, each with the log position or sequence number it
// was recorded at.
type memSource struct {
	pairs []Pair
	fills map[string][]Fill
	rates []memRate
	flows []Flow
	pos   uint64
}

type memRate struct {
	from, to string // 1 from = rate to
	t        int64
	rate     decimal.Decimal
	seq      uint64
}

func newMemSource() *memSource { return &memSource{fills: map[string][]Fill{}} }

// pair adds a pair key exchange/QUOTE-BASE.
func (m *memSource) pair(exchange, quote, base string) string {
	p := Pair{Key: exchange + "/" + quote + "-" + base, Exchange: exchange, Pair: quote + "-" + base, Quote: quote, Base: base}
	m.pairs = append(m.pairs, p)
	sort.Slice(m.pairs, func(i, j int) bool { return m.pairs[i].Key < m.pairs[j].Key })
	return p.Key
}

// fill records f on key at the next log position (f.Position set) and
// keeps the pair's fills in (time, position) order.
func (m *memSource) fill(key string, f Fill) {
	m.pos++
	f.Position = m.pos
	fs := append(m.fills[key], f)
	sort.SliceStable(fs, func(i, j int) bool {
		return fs[i].Time < fs[j].Time || (fs[i].Time == fs[j].Time && fs[i].Position < fs[j].Position)
	})
	m.fills[key] = fs
}

// rate records 1 from = r to at t.
func (m *memSource) rate(from, to string, t int64, r string) {
	m.pos++
	m.rates = append(m.rates, memRate{from, to, t, decimal.MustDecimal(r), m.pos})
}

// flow records fl at the next log position (fl.Position set), keeping
// the flows in (time, position) order, and returns its position.
func (m *memSource) flow(fl Flow) uint64 {
	m.pos++
	fl.Position = m.pos
	m.flows = append(m.flows, fl)
	sort.SliceStable(m.flows, func(i, j int) bool {
		return m.flows[i].Time < m.flows[j].Time || (m.flows[i].Time == m.flows[j].Time && m.flows[i].Position < m.flows[j].Position)
	})
	return m.pos
}

// move records a move of a flow on key at position pos (the flow's).
func (m *memSource) move(key string, pos uint64, f Fill) {
	f.Position = pos
	f.Fee = Fee{Valued: true}
	fs := append(m.fills[key], f)
	sort.SliceStable(fs, func(i, j int) bool {
		return fs[i].Time < fs[j].Time || (fs[i].Time == fs[j].Time && fs[i].Position < fs[j].Position)
	})
	m.fills[key] = fs
}

func (m *memSource) BookFlows(s Snapshot) []Flow {
	var out []Flow
	for _, f := range m.flows {
		if f.Position <= s.Position {
			out = append(out, f)
		}
	}
	return out
}

func (m *memSource) BookSnapshot() Snapshot {
	return Snapshot{Position: m.pos}
}

func (m *memSource) BookPairs() []Pair { return slices.Clone(m.pairs) }

func (m *memSource) BookFills(s Snapshot, key string, cur Cursor, n int, dst []Fill) ([]Fill, Cursor) {
	for _, f := range m.fills[key] {
		if n == 0 {
			break
		}
		if cur.Started && (f.Time < cur.Time || (f.Time == cur.Time && f.Position <= cur.Position)) {
			continue
		}
		if f.Position > s.Position {
			continue
		}
		dst = append(dst, f)
		n--
		cur = Cursor{Time: f.Time, Position: f.Position, Started: true}
	}
	return dst, cur
}

func (m *memSource) BookConvert(s Snapshot, amount decimal.Decimal, from, to string, t int64) (Conversion, bool) {
	if from == to {
		return Conversion{Amount: amount, Rate: decimal.DecimalFromInt(1), RateTime: t}, true
	}
	var best *memRate
	inverse := false
	for i := range m.rates {
		r := &m.rates[i]
		if r.seq > s.Position || r.t > t {
			continue
		}
		inv := r.from == to && r.to == from
		if !(r.from == from && r.to == to) && !inv {
			continue
		}
		if best == nil || r.t > best.t || (r.t == best.t && r.seq > best.seq) {
			best, inverse = r, inv
		}
	}
	if best == nil {
		return Conversion{}, false
	}
	if inverse {
		return Conversion{Amount: amount.Div(best.rate), Rate: decimal.DecimalFromInt(1).Div(best.rate), RateTime: best.t}, true
	}
	return Conversion{Amount: amount.Mul(best.rate), Rate: best.rate, RateTime: best.t}, true
}

// day returns the ms of y-m-d hh:00 UTC.
func day(y int, m time.Month, d, hh int) int64 {
	return time.Date(y, m, d, hh, 0, 0, 0, time.UTC).UnixMilli()
}

// quoteFee is a fee in the pair's quote.
func quoteFee(quote, amount string, t int64) Fee {
	a := decimal.MustDecimal(amount)
	if a.IsZero() {
		return Fee{Valued: true}
	}
	return Fee{Asset: quote, Amount: a, Quote: a, Rate: decimal.DecimalFromInt(1), RateTime: t, Valued: true}
}

func buy(id int64, t int64, price, qty string, fee Fee) Fill {
	return Fill{Time: t, OrderID: id, Price: decimal.MustDecimal(price), Qty: decimal.MustDecimal(qty), Fee: fee}
}

func sell(id int64, t int64, price, qty string, fee Fee) Fill {
	f := buy(id, t, price, qty, fee)
	f.Sell = true
	return f
}
