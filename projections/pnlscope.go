package projections

import (
	"sort"
	"strings"

	"github.com/tradeledger/tradeledger/domain"
)

// PNL scopes: which pairs a query selects (keys, ["All"], an exchange,
// narrowed by quote), resolved the same way by every PNL reader.

// PnlScope selects pairs for a PNL query.
type PnlScope struct {
	// Keys are pair keys; ["All"] (or a single "All") selects every pair.
	Keys []string
	// Exchange, when set instead of Keys, selects every pair of it.
	Exchange string
	// Quote restricts to pairs of one quote currency (no conversion).
	Quote string
}

type scoped struct {
	keys   []string    // selected keys, sorted
	books  []*pairBook // known books of keys (same order, nil for keys without fills)
	unit   string      // the one quote currency ("" when several)
	quotes []string    // the quote currencies of keys, sorted
	all    bool
}

// ScopeKeys is a PnlScope resolved against the known pair keys.
type ScopeKeys struct {
	Keys   []string // selected keys, sorted
	Unit   string   // their one quote currency ("" when several)
	Quotes []string // their quote currencies, sorted
	All    bool     // the scope was ["All"]
}

// ResolveScope is ResolveScopeMixed for a reader that does not convert
// between currencies (the ClickHouse reader): a selection spanning several
// quote currencies is EINVALID, naming them and telling to pass quote.
func ResolveScope(sc PnlScope, known []string) (ScopeKeys, error) {
	out, err := ResolveScopeMixed(sc, known)
	if err == nil && len(out.Quotes) > 1 {
		return out, domain.Errorf(domain.EINVALID, "the selected pairs are quoted in %s; this PNL source does not convert between currencies: pass quote (one of them) or keys of one quote", strings.Join(out.Quotes, ", "))
	}
	return out, err
}

// ResolveScopeMixed checks sc and selects its pair keys among known (every
// pair key the read model has seen). Explicit keys need not be known.
// sc.Quote narrows the selection to one quote currency (an explicit key of
// another quote is EINVALID). Every PNL reader resolves scopes here.
func ResolveScopeMixed(sc PnlScope, known []string) (ScopeKeys, error) {
	var out ScopeKeys
	all := len(sc.Keys) == 1 && strings.EqualFold(sc.Keys[0], "All")
	var keys []string
	switch {
	case all:
		out.All = true
		keys = append(keys, known...)
	case sc.Exchange != "":
		for _, k := range known {
			if ex, _, err := domain.SplitPairKey(k); err == nil && ex == sc.Exchange {
				keys = append(keys, k)
			}
		}
	case len(sc.Keys) == 0:
		return out, domain.Errorf(domain.EINVALID, "keys must name at least one pair key, or be [\"All\"]")
	default:
		seen := map[string]bool{}
		for _, k := range sc.Keys {
			if _, _, err := splitKey(k); err != nil {
				return out, err
			}
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	quotes := map[string]bool{}
	for _, k := range keys {
		q, _, _ := splitKey(k)
		if sc.Quote != "" && q != sc.Quote {
			if out.All || sc.Exchange != "" {
				continue
			}
			return out, domain.Errorf(domain.EINVALID, "key %q is not quoted in %s", k, sc.Quote)
		}
		quotes[q] = true
		out.Keys = append(out.Keys, k)
	}
	for q := range quotes {
		out.Quotes = append(out.Quotes, q)
	}
	sort.Strings(out.Quotes)
	if len(out.Quotes) == 1 {
		out.Unit = out.Quotes[0]
	}
	if sc.Quote != "" {
		out.Unit = sc.Quote
	}
	return out, nil
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
			return []*series{q}
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
