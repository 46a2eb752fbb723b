//go:build ccxt

package ccxt

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"

	ccxtlib "github.com/ccxt/ccxt/go/v4"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/exchange"
)

// The account's history (domain.AccountHistory) through ccxt's unified
// methods: fetchMyTrades (the trades; per symbol where the profile says
// the exchange lists them so), fetchDeposits and fetchWithdrawals (the
// transfers, read as ccxt returns them — the exchange's own answer under
// "info", whose decimal text the amounts and fees are parsed from), and
// fetchLedger where the exchange has it (the conversions: a ledger's
// entries of the conversion kinds, "conversion", "spend"/"receive" and
// "dustsweeping", paired by their reference id: what left, what arrived).
// Each call reads the whole window asked for, page after page (Kraken:
// 50 a page by ofs); Kraken's start is exclusive and in seconds, so a
// window is asked from a second earlier and filtered here.
//
// The typed wrappers of ccxt's Go port drop a transfer's info and fee
// (ccxt.Transaction has neither), so the transfers are read from the
// exchange's typed core (its Core field, as coreOf finds the base), whose
// methods answer ccxt's unified structures with the info kept.

// historyPage is Kraken's page of trades and ledger entries.
const historyPage = 50

var _ domain.AccountHistory = (*Exchange)(nil)

// ListedFrom implements domain.AccountHistory: 0 (the exchange's whole
// list; an exchange whose API keeps less says so in its errors).
func (x *Exchange) ListedFrom() int64 { return 0 }

// ActivityScopes implements domain.AccountHistory: trades per market for
// the exchanges that list them so (the configured pairs, those this
// connector traded, the markets between the assets given), in one list
// otherwise; the other kinds in one list.
func (x *Exchange) ActivityScopes(ctx context.Context, kind domain.ActivityKind, assets []string) ([]string, error) {
	if err := x.init(); err != nil {
		return nil, err
	}
	if kind != domain.ActivityTrades || !x.prof.tradesBySymbol {
		return []string{""}, nil
	}
	if err := x.loadMarkets(ctx); err != nil {
		return nil, err
	}
	x.mu.Lock()
	traded := slices.Collect(maps.Keys(x.traded))
	markets := make([]exchange.Market, 0, len(x.markets))
	for _, m := range x.markets {
		markets = append(markets, exchange.Market{Pair: m.pair, Base: m.base, Quote: m.quote})
	}
	x.mu.Unlock()
	return exchange.TradeScopes(x.Pairs, traded, assets, markets), nil
}

// Activity implements domain.AccountHistory: the whole window in one
// answer.
func (x *Exchange) Activity(ctx context.Context, q domain.ActivityQuery) (domain.ActivityPage, error) {
	if err := x.loadMarkets(ctx); err != nil {
		return domain.ActivityPage{}, err
	}
	switch q.Kind {
	case domain.ActivityTrades:
		return x.tradeHistory(ctx, q)
	case domain.ActivityDeposits, domain.ActivityWithdrawals:
		return x.transferHistory(ctx, q)
	case domain.ActivityConversions:
		return x.conversionHistory(ctx, q)
	}
	return domain.ActivityPage{}, domain.Errorf(domain.EINVALID, "%s lists no %q activity", x.ExchangeName, q.Kind)
}

// window returns ccxt's since and until for [from, to): a second before
// from (Kraken's start is exclusive, in seconds), and to's last ms.
func window(from, to int64) (since int64, params map[string]interface{}) {
	return max(from-1000, 0), map[string]interface{}{"until": to - 1}
}

func (x *Exchange) tradeHistory(ctx context.Context, q domain.ActivityQuery) (domain.ActivityPage, error) {
	page := domain.ActivityPage{Next: q.To}
	since, params := window(q.From, q.To)
	var symbol string
	if q.Scope != "" {
		m, err := x.market(ctx, q.Scope)
		if err != nil {
			return page, err
		}
		symbol = m.symbol
	}
	seen := map[string]bool{}
	for ofs := 0; ; {
		p := map[string]interface{}{}
		for k, v := range params {
			p[k] = v
		}
		if !x.prof.tradesBySymbol {
			p["ofs"] = ofs
		}
		opts := []ccxtlib.FetchMyTradesOptions{ccxtlib.WithFetchMyTradesSince(since), ccxtlib.WithFetchMyTradesParams(p)}
		if symbol != "" {
			opts = append(opts, ccxtlib.WithFetchMyTradesSymbol(symbol))
		}
		ts, err := x.myTrades(ctx, "the trade history", opts...)
		if err != nil {
			return page, err
		}
		for _, t := range ts {
			id := str(t.Id)
			if seen[id] || t.Timestamp == nil || *t.Timestamp < q.From || *t.Timestamp >= q.To {
				continue
			}
			seen[id] = true
			f, ok, err := x.fill(ctx, t)
			if err != nil {
				return page, err
			}
			if ok {
				page.Trades = append(page.Trades, f)
			}
		}
		if x.prof.tradesBySymbol || len(ts) < historyPage || ofs > 1_000_000 {
			break
		}
		ofs += len(ts)
	}
	sort.SliceStable(page.Trades, func(i, j int) bool { return page.Trades[i].Time < page.Trades[j].Time })
	return page, nil
}

// raw calls a method of the exchange's typed core (FetchDeposits …) with
// ccxt's positional arguments, under call, and returns its unified answer.
func (x *Exchange) raw(ctx context.Context, what, method string, args ...interface{}) (interface{}, error) {
	var res interface{}
	err := x.call(ctx, what, func() error {
		core := reflect.ValueOf(x.client).Elem().FieldByName("Core")
		if !core.IsValid() {
			return fmt.Errorf("ccxt %T has no Core", x.client)
		}
		m := core.MethodByName(method)
		if !m.IsValid() {
			return ccxtlib.NotSupported(x.ID + " has no " + method)
		}
		in := make([]reflect.Value, len(args))
		for i, a := range args {
			if a == nil {
				in[i] = reflect.Zero(reflect.TypeOf((*interface{})(nil)).Elem())
			} else {
				in[i] = reflect.ValueOf(a)
			}
		}
		out := m.Call(in)
		if len(out) != 1 || out[0].Kind() != reflect.Chan {
			return fmt.Errorf("ccxt %s.%s answers no channel", x.ID, method)
		}
		v, _ := out[0].Recv()
		res = v.Interface()
		if ccxtlib.IsError(res) {
			return ccxtlib.CreateReturnError(res)
		}
		return nil
	})
	return res, err
}

// transferStatus maps a transfer's status: Kraken's own ("Success",
// "Failure", "Initial", "Pending", "Settled", "Partial", with "status-prop"
// on-hold or return) when the info has it, else ccxt's unified one (ok,
// failed, canceled, pending).
func transferStatus(info map[string]interface{}, unified string) (domain.TransferStatus, string) {
	own, _ := info["status"].(string)
	prop, _ := info["status-prop"].(string)
	switch {
	case prop == "return" || own == "Failure" || unified == "failed":
		return domain.TransferFailed, own + prop
	case unified == "canceled":
		return domain.TransferCancelled, own
	case prop == "on-hold" || prop == "onhold" || prop == "cancel-pending":
		return domain.TransferPending, own + " " + prop
	case own == "Success" || (own == "" && unified == "ok"):
		return domain.TransferCompleted, own
	}
	return domain.TransferPending, own
}

func (x *Exchange) transferHistory(ctx context.Context, q domain.ActivityQuery) (domain.ActivityPage, error) {
	page := domain.ActivityPage{Next: q.To}
	method, what := "FetchDeposits", "the deposit history"
	if q.Kind == domain.ActivityWithdrawals {
		method, what = "FetchWithdrawals", "the withdrawal history"
	}
	since, params := window(q.From, q.To)
	res, err := x.raw(ctx, what, method, nil, since, nil, params)
	if err != nil {
		return page, err
	}
	list, _ := res.([]interface{})
	for _, v := range list {
		t, _ := v.(map[string]interface{})
		info, _ := t["info"].(map[string]interface{})
		ms, _ := num(t["timestamp"])
		if int64(ms) < q.From || int64(ms) >= q.To {
			continue
		}
		id, _ := t["id"].(string)
		asset, _ := t["currency"].(string)
		unified, _ := t["status"].(string)
		var n nums
		tr := domain.Transfer{Exchange: x.ExchangeName, ID: id, Asset: asset, Time: int64(ms)}
		tr.Status, tr.ExchangeStatus = transferStatus(info, unified)
		tr.ExchangeStatus = strings.TrimSpace(tr.ExchangeStatus)
		if raw, ok := info["amount"].(string); ok {
			tr.Amount = n.text("amount", raw)
		} else {
			f, _ := num(t["amount"])
			tr.Amount = n.float("amount", &f, decimal.Zero)
		}
		if raw, ok := info["fee"].(string); ok {
			tr.Fee = n.text("fee", raw)
		} else if fee, ok := t["fee"].(map[string]interface{}); ok {
			if f, ok := num(fee["cost"]); ok {
				tr.Fee = n.float("fee", &f, decimal.Zero)
			}
		}
		tr.TxID, _ = t["txid"].(string)
		tr.Network, _ = t["network"].(string)
		addr, _ := t["address"].(string)
		tag, _ := t["tag"].(string)
		tr.Address, tr.AddressTag = domain.MaskAddress(addr), domain.MaskAddress(tag)
		tr.Problem = n.problem
		page.Transfers = append(page.Transfers, tr)
	}
	sort.SliceStable(page.Transfers, func(i, j int) bool { return page.Transfers[i].Time < page.Transfers[j].Time })
	return page, nil
}

// conversionTypes are the ledger entry types of a conversion (Kraken's
// ledger: "conversion", "spend"/"receive" of Buy Crypto, "dustsweeping").
var conversionTypes = map[string]bool{"conversion": true, "spend": true, "receive": true, "dustsweeping": true}

// conversionHistory reads the conversions of q's window from the ledger
// (fetchLedger; none when the exchange has no ledger): the legs of each
// reference id become one conversion (conversionOf), in time order.
func (x *Exchange) conversionHistory(ctx context.Context, q domain.ActivityQuery) (domain.ActivityPage, error) {
	page := domain.ActivityPage{Next: q.To}
	if !x.has("fetchLedger") {
		return page, nil
	}
	refs, byRef, err := x.conversionLegs(ctx, q)
	if err != nil {
		return page, err
	}
	for _, ref := range refs {
		if c, ok := conversionOf(x.ExchangeName, ref, byRef[ref]); ok {
			page.Conversions = append(page.Conversions, c)
		}
	}
	sort.SliceStable(page.Conversions, func(i, j int) bool { return page.Conversions[i].Time < page.Conversions[j].Time })
	return page, nil
}

// ledgerLeg is one ledger entry of a conversion: the asset it moves, its
// amount (signed, fee included) and fee as the exchange's text says them
// (problem names a number that could not be read exactly), its time and
// its ledger type.
type ledgerLeg struct {
	asset      string
	amount     decimal.Decimal // signed
	fee        decimal.Decimal
	ms         int64
	problem    *domain.NumberProblem
	ledgerType string
}

// conversionLegs reads the whole ledger of q's window, page after page
// (by ofs), and returns the legs of its conversions by reference id, refs
// listing the ids in the order first seen; an entry listed twice counts
// once.
func (x *Exchange) conversionLegs(ctx context.Context, q domain.ActivityQuery) (refs []string, byRef map[string][]ledgerLeg, err error) {
	since, params := window(q.From, q.To)
	byRef = map[string][]ledgerLeg{}
	seen := map[string]bool{}
	for ofs := 0; ; {
		p := map[string]interface{}{"ofs": ofs}
		for k, v := range params {
			p[k] = v
		}
		var es []ccxtlib.LedgerEntry
		if err := x.call(ctx, "the ledger", func() (err error) {
			es, err = x.client.FetchLedger(ccxtlib.WithFetchLedgerSince(since), ccxtlib.WithFetchLedgerParams(p))
			return err
		}); err != nil {
			return nil, nil, err
		}
		for _, e := range es {
			id := str(e.Id)
			ref, l, ok := conversionLeg(e, q)
			if !ok || seen[id] {
				continue
			}
			seen[id] = true
			if _, ok := byRef[ref]; !ok {
				refs = append(refs, ref)
			}
			byRef[ref] = append(byRef[ref], l)
		}
		if len(es) < historyPage || ofs > 1_000_000 {
			break
		}
		ofs += len(es)
	}
	return refs, byRef, nil
}

// conversionLeg reads a ledger entry as a conversion's leg and its
// reference id; ok is false for an entry of another type
// (conversionTypes), without a time or outside q's window. The amounts
// come from the exchange's own text where it gives one (info), else from
// ccxt's float.
func conversionLeg(e ccxtlib.LedgerEntry, q domain.ActivityQuery) (ref string, l ledgerLeg, ok bool) {
	info, _ := e.Info["info"].(map[string]interface{})
	if info == nil {
		info = e.Info
	}
	typ, _ := info["type"].(string)
	if !conversionTypes[typ] || e.Timestamp == nil || *e.Timestamp < q.From || *e.Timestamp >= q.To {
		return "", l, false
	}
	ref = str(e.ReferenceId)
	if ref == "" {
		ref, _ = info["refid"].(string)
	}
	var n nums
	l = ledgerLeg{asset: str(e.Currency), ms: *e.Timestamp, ledgerType: typ}
	if raw, ok := info["amount"].(string); ok {
		l.amount = n.text("amount", raw)
	} else {
		l.amount = n.float("amount", e.Amount, decimal.Zero)
	}
	if raw, ok := info["fee"].(string); ok {
		l.fee = n.text("fee", raw)
	}
	l.problem = n.problem
	return ref, l, true
}

// conversionOf makes the conversion of exchange whose ledger legs under
// reference id ref are legs: what left (the legs that moved the balance
// down by amount − fee) and what arrived, its fee (in the asset of the
// legs that charged one), its time the latest leg's, its kind dust when a
// leg is a dust sweep, its problem the first leg's that has one. ok is
// false while either side is missing (a leg not in this window yet: read
// again with it).
func conversionOf(exchange, ref string, legs []ledgerLeg) (c domain.Conversion, ok bool) {
	c = domain.Conversion{Exchange: exchange, ID: "ledger:" + ref, Kind: domain.ConversionLedger}
	for _, l := range legs {
		if l.problem != nil && c.Problem == nil {
			c.Problem = l.problem
		}
		if l.ledgerType == "dustsweeping" {
			c.Kind = domain.ConversionDust
		}
		c.Time = max(c.Time, l.ms)
		// A ledger entry moves the balance by amount − fee.
		moved := l.amount.Sub(l.fee)
		if moved.IsNeg() {
			c.FromAsset, c.FromAmount = l.asset, c.FromAmount.Add(moved.Neg())
		} else {
			c.ToAsset, c.ToAmount = l.asset, c.ToAmount.Add(moved)
		}
		if l.fee.IsPos() {
			c.Fee, c.FeeAsset = c.Fee.Add(l.fee), l.asset
		}
	}
	return c, c.FromAsset != "" && c.ToAsset != ""
}

// has reports whether the exchange has a unified method (ccxt's has map).
func (x *Exchange) has(method string) bool {
	switch v := x.core.Has[method].(type) {
	case bool:
		return v
	case string:
		return v == "emulated" || v == "true"
	}
	return false
}
