package projections

import (
	"github.com/tradeledger/tradeledger/domain"
)

// PNL scopes: which pairs a query selects (keys, ["All"], an exchange,
// narrowed by quote), resolved the same way by every PNL reader.

type scoped struct {
	keys   []string    // selected keys, sorted
	books  []*pairBook // known books of keys (same order, nil for keys without fills)
	unit   string      // the one quote currency ("" when several)
	quotes []string    // the quote currencies of keys, sorted
	all    bool
}

// resolve checks the scope and returns its pairs, books and unit.
func (l *Ledger) resolve(sc PnlScope) (scoped, error) {
	known := make([]string, 0, len(l.pairs))
	for _, b := range l.pairs {
		known = append(known, b.key)
	}
	r, err := ResolveScopeMixed(sc, known)
	if err != nil {
		return scoped{}, err
	}
	out := scoped{keys: r.Keys, unit: r.Unit, quotes: r.Quotes, all: r.All}
	for _, k := range r.Keys {
		var b *pairBook
		if i, ok := l.byKey[k]; ok {
			b = l.pairs[i]
		}
		out.books = append(out.books, b)
	}
	return out, nil
}

func splitKey(k string) (quote, base string, err error) {
	_, pair, err := domain.SplitPairKey(k)
	if err != nil {
		return "", "", err
	}
	return domain.SplitPair(pair)
}

// seriesOf returns the series to fold for sc: the quote's series when every
// pair of that quote is selected, else each selected pair's.
func (l *Ledger) seriesOf(sc *scoped) []*series {
	if sc.all || len(sc.books) == l.countQuote(sc.unit) && l.countQuote(sc.unit) > 0 && allKnown(sc.books) {
		if q := l.quotes[sc.unit]; q != nil {
			return []*series{&q.series}
		}
	}
	var ss []*series
	for _, b := range sc.books {
		if b != nil {
			ss = append(ss, &b.series)
		}
	}
	return ss
}

func allKnown(bs []*pairBook) bool {
	for _, b := range bs {
		if b == nil {
			return false
		}
	}
	return true
}

func (l *Ledger) countQuote(q string) int {
	n := 0
	for _, b := range l.pairs {
		if b.quote == q {
			n++
		}
	}
	return n
}
