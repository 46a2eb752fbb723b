package projections

import "reflect"

// OrderListDiff names the fields of two order indexes that differ.
func OrderListDiff(a, b *OrderList) []string {
	var out []string
	for _, c := range []struct {
		n    string
		x, y any
	}{{"keys", a.keys, b.keys}, {"byName", a.byName, b.byName}, {"states", a.states, b.states},
		{"entries", a.entries, b.entries}, {"open", a.open, b.open}, {"unsorted", a.unsorted, b.unsorted}} {
		if !reflect.DeepEqual(c.x, c.y) {
			out = append(out, c.n)
		}
	}
	return out
}

// LedgerDiff names the fields of two Ledgers that differ (the lock, the
// interner and the page cache aside; the records' chunk ownership aside).
func LedgerDiff(a, b *Ledger) []string {
	var out []string
	if len(a.pairs) != len(b.pairs) {
		return []string{"pairs"}
	}
	for i := range a.pairs {
		pa, pb := *a.pairs[i], *b.pairs[i]
		pa.recs.frozen, pb.recs.frozen, pa.enc, pb.enc = 0, 0, nil, nil
		if !reflect.DeepEqual(pa, pb) {
			out = append(out, "pair "+pa.key)
		}
	}
	for _, c := range []struct {
		n    string
		x, y any
	}{{"byKey", a.byKey, b.byKey}, {"byName", a.byName, b.byName}, {"orders", a.orders, b.orders}, {"open", a.open, b.open},
		{"quotes", a.quotes, b.quotes}, {"strat", a.strat, b.strat}, {"assets", a.assets, b.assets}, {"rates", a.conv.rates, b.conv.rates}, {"conv", convByKey(a), convByKey(b)},
		{"booksM", a.booksM, b.booksM}, {"head", a.head, b.head}, {"records", a.records, b.records},
		{"version", a.version, b.version}, {"feeAsts", a.feeAsts, b.feeAsts}, {"method", a.Method, b.Method}} {
		if !reflect.DeepEqual(c.x, c.y) {
			out = append(out, c.n)
		}
	}
	return out
}

// convByKey is the Ledger's converted series by pair key and currency
// (the map's keys are pair books: pointers of one Ledger).
func convByKey(l *Ledger) map[[2]string]pairConv {
	out := map[[2]string]pairConv{}
	for k, pc := range l.conv.pairs {
		out[[2]string{k.b.key, k.to}] = *pc
	}
	return out
}
