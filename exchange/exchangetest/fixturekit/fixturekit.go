// Package fixturekit holds what the local exchanges of the tests
// (exchange/binance/fixture, exchange/ccxt/krakenfixture) do alike to
// their trade lists on a test's request; each answers in its exchange's
// own words.
package fixturekit

import "sync"

// TradeFaults are a fixture's trade-list faults, by trade id (ID): the
// next trade's fields read as given text, the next n trades listed late,
// the history endpoints failing after n more answers. A fixture embeds it:
// TradeText, DelayTrades, ReleaseTrades and FailHistoryAfter are the
// switches a test sets, TakeText, Made, Hidden and HistoryFails what the
// fixture's handlers read. The zero value has no faults; the methods are
// safe for concurrent use (a fixture may call them under its own lock:
// they call nothing back).
type TradeFaults[ID comparable] struct {
	mu        sync.Mutex
	text      map[string]string
	hideNext  int
	hidden    map[ID]bool
	failAfter int
}

// TradeText makes the next trade's field read as raw (TakeText).
func (f *TradeFaults[ID]) TradeText(field, raw string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.text == nil {
		f.text = map[string]string{}
	}
	f.text[field] = raw
}

// TakeText returns the fields TradeText set for the next trade (nil:
// none) and forgets them.
func (f *TradeFaults[ID]) TakeText() map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.text
	f.text = nil
	return t
}

// DelayTrades leaves the next n trades Made out of the list (Hidden) until
// ReleaseTrades.
func (f *TradeFaults[ID]) DelayTrades(n int) {
	f.mu.Lock()
	f.hideNext = n
	f.mu.Unlock()
}

// ReleaseTrades lists the trades DelayTrades held back.
func (f *TradeFaults[ID]) ReleaseTrades() {
	f.mu.Lock()
	f.hidden = nil
	f.mu.Unlock()
}

// Made notes a new trade: held back when DelayTrades asked for it.
func (f *TradeFaults[ID]) Made(id ID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.hideNext <= 0 {
		return
	}
	f.hideNext--
	if f.hidden == nil {
		f.hidden = map[ID]bool{}
	}
	f.hidden[id] = true
}

// Hidden reports whether a trade is held back from the list.
func (f *TradeFaults[ID]) Hidden(id ID) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hidden[id]
}

// FailHistoryAfter makes the history endpoints fail once n more of them
// have been answered (0: no more failures): a service stopped in the
// middle of a backfill.
func (f *TradeFaults[ID]) FailHistoryAfter(n int) {
	f.mu.Lock()
	f.failAfter = n
	f.mu.Unlock()
}

// HistoryFails counts a history request and reports whether it is to
// fail: FailHistoryAfter's count ran out (every later one fails too,
// until FailHistoryAfter(0)).
func (f *TradeFaults[ID]) HistoryFails() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch f.failAfter {
	case 0:
		return false
	case 1:
		return true
	}
	f.failAfter--
	return false
}
