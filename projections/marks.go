package projections

import (
	"strconv"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/pnlread"
)

// Chart marks are a view of the order records (one mark per fill), not a
// second copy of them: a pair's records are sorted by time, so the marks
// of a range are a binary search and a walk.

// Mark colours and labels.
const (
	MarkBuyColor  = "#26a69a" // green
	MarkSellColor = "#ef5350" // red
	MarkBuyLabel  = "▲"
	MarkSellLabel = "▼"
)

// Mark is a chart mark: id "<orderId>-<log position of the fill>", time in
// UNIX seconds, tooltip lines "BUY"/"SELL", "Amount: …", "Price: …",
// "Total: …" (rate×amount, with the quote currency), and "External trade"
// for a trade the service did not place (order 0).
type Mark struct {
	Exchange string   `json:"exchange"`
	Pair     string   `json:"pair"`
	ID       string   `json:"id"`
	Time     int64    `json:"time"`
	Color    string   `json:"color"`
	Label    string   `json:"label"`
	Tooltip  []string `json:"tooltip"`
}

// Marks returns the marks of exchange/pair's fills with startSec ≤ time ≤
// endSec (UNIX seconds), oldest first.
func (l *Ledger) Marks(exchange, pair string, startSec, endSec int64) []Mark {
	l.rlock()
	defer l.mu.RUnlock()
	out := []Mark{}
	i, ok := l.byKey[domain.PairKey(exchange, pair)]
	if !ok {
		return out
	}
	b := l.pairs[i]
	lo, hi := b.timeRange(startSec*1000, (endSec+1)*1000)
	for j := lo; j < hi; j++ {
		r := b.recs.at(j)
		m := Mark{Exchange: exchange, Pair: pair, Time: pnlread.FloorDiv(r.time, 1000),
			ID: strconv.FormatInt(r.id, 10) + "-" + strconv.FormatUint(r.pos(), 10)}
		side := "BUY"
		m.Color, m.Label = MarkBuyColor, MarkBuyLabel
		if r.sell() {
			side = "SELL"
			m.Color, m.Label = MarkSellColor, MarkSellLabel
		}
		amount, rate := b.recs.get(r.amount), b.recs.get(r.rate)
		m.Tooltip = []string{side,
			"Amount: " + string(appendNumber(nil, amount)) + " " + b.base,
			"Price: " + string(appendNumber(nil, rate)) + " " + b.quote,
			"Total: " + string(appendNumber(nil, rate.Mul(amount))) + " " + b.quote}
		if r.external() {
			m.Tooltip = append(m.Tooltip, "External trade") // placed by hand or by another bot: order 0
		}
		out = append(out, m)
	}
	return out
}
