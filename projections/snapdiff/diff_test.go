package snapdiff

import (
	"sync"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
)

type diffBook struct {
	pnl   domain.Decimal
	lots  []diffLot
	when  time.Time
	owner *diffState // a cycle back to the root
}

type diffLot struct {
	qty  domain.Compact
	note string
}

type diffState struct {
	mu    sync.Mutex     `snap:"-"`
	cache map[string]int `snap:"-"`
	books map[string]*diffBook
	count int64
	kinds map[int][]string
	any   any
	flags [2]bool
	ratio float64
	size  uint32
	first *diffLot
}

func compact(s string) domain.Compact {
	c, _ := domain.CompactOf(domain.MustDecimal(s))
	return c
}

func newDiffState() *diffState {
	s := &diffState{cache: map[string]int{}, count: 3, kinds: map[int][]string{1: {"a"}}, any: int64(5)}
	s.books = map[string]*diffBook{
		"binance/USDT-BTC": {pnl: domain.MustDecimal("12.5"), lots: []diffLot{{qty: compact("1.5"), note: "x"}}, when: time.UnixMilli(5).UTC(), owner: s},
		"kraken/EUR-ETH":   {pnl: domain.MustDecimal("-1"), owner: s},
	}
	return s
}

// TestDiff: the first value that differs between two states is named by
// its path, with both values as text (a decimal as its digits); fields
// left out of snapshots, and equal states, show no difference; a cycle of
// pointers ends.
func TestDiff(t *testing.T) {
	if p, as, bs, found := Diff(newDiffState(), newDiffState()); found {
		t.Fatalf("equal states differ at %s: %s, %s", p, as, bs)
	}
	cases := []struct {
		name         string
		edit         func(s *diffState)
		path, as, bs string
	}{
		{"a decimal", func(s *diffState) { s.books["binance/USDT-BTC"].pnl = domain.MustDecimal("99.5") },
			`.books["binance/USDT-BTC"].pnl`, "12.50000000", "99.50000000"},
		{"a slice element", func(s *diffState) { s.books["binance/USDT-BTC"].lots[0].note = "y" },
			`.books["binance/USDT-BTC"].lots[0].note`, "x", "y"},
		{"a slice's length", func(s *diffState) { s.books["kraken/EUR-ETH"].lots = []diffLot{{}} },
			`.books["kraken/EUR-ETH"].lots`, "nil", "1 elements"},
		{"a map entry", func(s *diffState) { delete(s.books, "kraken/EUR-ETH") },
			`.books["kraken/EUR-ETH"]`, "", "absent"},
		{"a number", func(s *diffState) { s.count = 4 }, `.count`, "3", "4"},
		{"a compact amount", func(s *diffState) { s.books["binance/USDT-BTC"].lots[0].qty = compact("2.25") },
			`.books["binance/USDT-BTC"].lots[0].qty`, "1.50000000", "2.25000000"},
		{"a time", func(s *diffState) { s.books["binance/USDT-BTC"].when = time.UnixMilli(6).UTC() },
			`.books["binance/USDT-BTC"].when`, "", ""},
		{"an interface", func(s *diffState) { s.any = "five" }, `.any`, "int64 5", "string five"},
		{"an int key", func(s *diffState) { s.kinds[1][0] = "b" }, `.kinds["1"][0]`, "a", "b"},
		{"a longer slice", func(s *diffState) { s.kinds[1] = append(s.kinds[1], "c") }, `.kinds["1"]`, "1 elements", "2 elements"},
		{"an array element", func(s *diffState) { s.flags[1] = true }, `.flags[1]`, "false", "true"},
		{"a float", func(s *diffState) { s.ratio = 0.5 }, `.ratio`, "0", "0.5"},
		{"an unsigned number", func(s *diffState) { s.size = 7 }, `.size`, "0", "7"},
		{"a nil pointer", func(s *diffState) { s.first = &diffLot{note: "z"} }, `.first`, "nil", ""},
		{"through a pointer", func(s *diffState) { s.books["kraken/EUR-ETH"].owner = &diffState{count: 9} }, `.books["kraken/EUR-ETH"].owner.books`, "2 elements", "nil"},
		{"a nil interface", func(s *diffState) { s.any = nil }, `.any`, "int64 5", "nil"},
		{"a nil map", func(s *diffState) { s.kinds = nil }, `.kinds`, "1 elements", "nil"},
	}
	for _, c := range cases {
		a, b := newDiffState(), newDiffState()
		c.edit(b)
		p, as, bs, found := Diff(a, b)
		if !found || p != c.path || (c.as != "" && as != c.as) || (c.bs != "" && bs != c.bs) {
			t.Errorf("%s: %v at %s: %q, %q; want %s: %q, %q", c.name, found, p, as, bs, c.path, c.as, c.bs)
		}
	}
	a, b := newDiffState(), newDiffState()
	b.cache["x"] = 1
	b.mu.Lock()
	if p, _, _, found := Diff(a, b); found {
		t.Fatalf("a field left out of snapshots differs at %s", p)
	}
}
