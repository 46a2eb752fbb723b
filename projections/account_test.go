package projections_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/projections"
	"github.com/tradeledger/tradeledger/projections/snaptest"
)

// accountLog builds a log by hand: events appended to their streams with
// versions and dense positions.
type accountLog struct {
	events   []domain.Event
	versions map[string]int64
}

func (l *accountLog) add(stream, typ, actor string, t int64, payload any) {
	if l.versions == nil {
		l.versions = map[string]int64{}
	}
	b, err := json.Marshal(payload)
	if err != nil {
		panic(err)
	}
	v := l.versions[stream]
	l.versions[stream] = v + 1
	l.events = append(l.events, domain.Event{ID: domain.DerivedEventID(fmt.Sprint(len(l.events))), Stream: stream, Version: v,
		Position: uint64(len(l.events) + 1), Type: typ, Schema: 1, Time: t, Actor: actor, Data: b})
}

func dec(s string) domain.Decimal { return domain.MustDecimal(s) }

// TestAccountsImpliedBalance: the balance the ledger implies is the
// opening, then every own fill, external trade, fee, deposit, withdrawal
// (with its network fee) and conversion after it; facts at or before the
// opening are in it already; a transfer's later status moves the
// difference; imported orders move nothing.
func TestAccountsImpliedBalance(t *testing.T) {
	var l accountLog
	acct := domain.AccountStream("bin")
	// An order before the opening, filled before it: in the opening.
	l.add("order-1", domain.TypeOrderRequested, "core", 1000, domain.OrderRequested{OrderID: 1, Exchange: "bin", Pair: "USDT-BTC", Side: domain.Buy, Kind: domain.KindLimit, Amount: dec("1"), Price: dec("100")})
	l.add("order-1", domain.TypeOrderFilled, "core", 1500, domain.OrderFilled{FillID: "f1", Price: dec("100"), Quantity: dec("0.5"), Fee: dec("0.05"), FeeAsset: "USDT", ExchangeTime: 1400})
	// A deposit pending before the opening, recorded once the account is opened.
	l.add(acct, domain.TypeAccountOpened, "sync", 2000, domain.AccountOpened{Exchange: "bin", Time: 2000,
		Balances: []domain.AssetBalance{{Asset: "USDT", Available: dec("900"), OnOrder: dec("50")}, {Asset: "BTC", Available: dec("0.5")}}})
	l.add(acct, domain.TypeDeposit, "sync", 2100, domain.Transfer{Exchange: "bin", ID: "d1", Asset: "ETH", Amount: dec("2"), Status: domain.TransferPending, Time: 1900})
	// The same order's late fill after the opening (a fill of a known order).
	l.add("order-1", domain.TypeOrderFilled, "sync", 2200, domain.OrderFilled{FillID: "f2", Price: dec("100"), Quantity: dec("0.5"), Fee: dec("0.0005"), FeeAsset: "BTC", ExchangeTime: 2150})
	// An imported order moves nothing.
	l.add("order-9000000000", domain.TypeOrderRequested, domain.ActorImport, 500, domain.OrderRequested{OrderID: 9000000000, Exchange: "bin", Pair: "USDT-BTC", Side: domain.Sell, Kind: domain.KindLimit, Amount: dec("1"), Price: dec("1")})
	l.add("order-9000000000", domain.TypeOrderFilled, domain.ActorImport, 2300, domain.OrderFilled{FillID: "imp", Price: dec("1"), Quantity: dec("1")})
	l.add(acct, domain.TypeDeposit, "sync", 2400, domain.Transfer{Exchange: "bin", ID: "d1", Asset: "ETH", Amount: dec("2"), Status: domain.TransferCompleted, Time: 1900})
	l.add(acct, domain.TypeExternalFill, "sync", 2500, domain.ExternalFill{Exchange: "bin", Pair: "USDT-ETH", TradeID: "t1", Side: domain.Sell, Price: dec("10"), Quantity: dec("1"), Fee: dec("0.01"), FeeAsset: "USDT", Time: 2450})
	l.add(acct, domain.TypeWithdrawal, "sync", 2600, domain.Transfer{Exchange: "bin", ID: "w1", Asset: "USDT", Amount: dec("100"), Fee: dec("1"), Status: domain.TransferPending, Time: 2550})
	l.add(acct, domain.TypeWithdrawal, "sync", 2700, domain.Transfer{Exchange: "bin", ID: "w2", Asset: "USDT", Amount: dec("10"), Fee: dec("1"), Status: domain.TransferPending, Time: 2560})
	l.add(acct, domain.TypeWithdrawal, "sync", 2800, domain.Transfer{Exchange: "bin", ID: "w2", Asset: "USDT", Amount: dec("10"), Fee: dec("1"), Status: domain.TransferFailed, Time: 2560})
	l.add(acct, domain.TypeConversion, "sync", 2900, domain.Conversion{Exchange: "bin", ID: "c1", Kind: domain.ConversionDust, FromAsset: "ETH", FromAmount: dec("0.001"), ToAsset: "BNB", ToAmount: dec("0.0002"), Fee: dec("0.000004"), FeeAsset: "BNB", Time: 2850})
	// An external trade before the opening, read back by a backfill: in the opening.
	l.add(acct, domain.TypeExternalFill, "sync", 3000, domain.ExternalFill{Exchange: "bin", Pair: "USDT-BTC", TradeID: "t0", Side: domain.Buy, Price: dec("1"), Quantity: dec("1"), Time: 100})

	a := projections.NewAccounts()
	for i := range l.events {
		if err := a.Apply(&l.events[i]); err != nil {
			t.Fatal(err)
		}
	}
	v, ok := a.View("bin")
	if !ok || !v.Opened {
		t.Fatal("bin not opened")
	}
	want := map[string]string{
		// 950 − 50 (fill) + 9.99 (external sell less fee) − 101 (withdrawal w1, w2 failed)
		"USDT": "808.99",
		// 0.5 + 0.5 − 0.0005 (fee in BTC)
		"BTC": "0.9995",
		// 2 (deposit completed after the opening) − 1 (external sell) − 0.001 (dust)
		"ETH": "0.999",
		"BNB": "0.0002",
	}
	for asset, w := range want {
		if got := v.Implied[asset]; got.Cmp(dec(w)) != 0 {
			t.Errorf("implied %s = %s, want %s", asset, got, w)
		}
	}
	if v.Pending != 2550 {
		t.Errorf("pending since %d, want 2550 (w1)", v.Pending)
	}
	if got := fmt.Sprint(v.Assets); got != "[BNB BTC ETH USDT]" {
		t.Errorf("assets %s", got)
	}
	if _, _, _, ok := a.OrderOf(9000000000); ok {
		t.Error("an imported order is known")
	}
	if x, p, s, ok := a.OrderOf(1); !ok || x != "bin" || p != "USDT-BTC" || s != domain.Buy {
		t.Errorf("order 1 = %s %s %s %v", x, p, s, ok)
	}
	pos, ver := a.ScanStart("bin", 2000)
	if pos != 2 || ver != 1 {
		// By the hour: the first fill of hour 0 (position 2), and the
		// pending deposit (version 1).
		t.Errorf("scan start %d/%d, want position 2 and version 1", pos, ver)
	}
	if pos, ver := a.ScanStart("bin", 10*3_600_000); pos != 0 || ver != -1 {
		t.Errorf("scan start later = %d/%d, want none", pos, ver)
	}
}

// TestAccountsDiscrepancies: an open discrepancy is listed until cleared.
func TestAccountsDiscrepancies(t *testing.T) {
	var l accountLog
	acct := domain.AccountStream("p")
	l.add(acct, domain.TypeBalanceDiscrepancy, "core", 10, domain.BalanceDiscrepancy{Account: "p", Asset: "BTC", Ledger: dec("1"), Exchange: dec("1.5"), Difference: dec("0.5"), Since: 10})
	l.add(acct, domain.TypeBalanceDiscrepancy, "core", 20, domain.BalanceDiscrepancy{Account: "p", Asset: "ETH", Ledger: dec("1"), Exchange: dec("0"), Difference: dec("-1"), Since: 20})
	l.add(acct, domain.TypeBalanceDiscrepancyCleared, "core", 30, domain.BalanceDiscrepancyCleared{Account: "p", Asset: "BTC", Balance: dec("1.5"), Since: 10})
	a := projections.NewAccounts()
	for i := range l.events {
		if err := a.Apply(&l.events[i]); err != nil {
			t.Fatal(err)
		}
	}
	d := a.Discrepancies()
	if len(d) != 1 || d[0].Asset != "ETH" || d[0].Difference.Cmp(dec("-1")) != 0 {
		t.Fatalf("discrepancies %+v", d)
	}
}

// randomAccountEvents gives RandomLog account facts of the exchanges its
// orders trade on: openings, external trades, transfers in several
// statuses, conversions, cursors, mismatches and discrepancies.
func randomAccountEvents(rng *rand.Rand, log []domain.Event) []domain.Event {
	var t int64
	if n := len(log); n > 0 {
		t = log[n-1].Time
	}
	exchanges := []string{"binance", "kraken"}
	x := exchanges[rng.IntN(len(exchanges))]
	stream := domain.AccountStream(x)
	clock := domain.NewManualClock(timeOf(t))
	var evs []domain.Event
	id := fmt.Sprint(rng.IntN(40))
	ft := t - int64(rng.IntN(3))*3_600_000
	switch rng.IntN(8) {
	case 0:
		evs = domain.DecideAccountOpened(clock, false, x, t-int64(rng.IntN(2))*3_600_000, []domain.AssetBalance{{Asset: "USDT", Available: dec("1000")}, {Asset: "BTC", Available: dec("0.1"), OnOrder: dec("0.01")}})
	case 1:
		evs, _ = domain.DecideExternalFill(clock, domain.ExternalFill{Exchange: x, Pair: "USDT-BTC", TradeID: id, Side: domain.Buy, Price: dec("100"), Quantity: dec("0.01"), Fee: dec("0.001"), Time: ft})
	case 2, 3:
		st := []domain.TransferStatus{domain.TransferPending, domain.TransferCredited, domain.TransferCompleted, domain.TransferFailed}[rng.IntN(4)]
		evs, _ = domain.DecideTransfer(clock, rng.IntN(2) == 0, domain.Transfer{Exchange: x, ID: id, Asset: "ETH", Amount: dec("1.5"), Fee: dec("0.01"), Status: st, Address: "0x1234567890abcdef", Time: ft})
	case 4:
		evs, _ = domain.DecideConversion(clock, domain.Conversion{Exchange: x, ID: id, Kind: domain.ConversionDust, FromAsset: "DOGE", FromAmount: dec("3"), ToAsset: "BNB", ToAmount: dec("0.001"), Time: ft})
	case 5:
		evs = domain.DecideActivitySynced(clock, domain.ActivitySynced{Exchange: x, Kind: domain.ActivityTrades, Scope: "USDT-BTC", From: ft, Through: ft + int64(rng.IntN(5))*3_600_000})
	case 6:
		evs = domain.DecideFillMismatch(clock, domain.FillMismatch{Exchange: x, Pair: "USDT-BTC", FillID: id, Field: "price", Log: "1", Listed: "2", Time: ft})
	case 7:
		a := []string{"BTC", "ETH"}[rng.IntN(2)]
		if rng.IntN(2) == 0 {
			evs = []domain.Event{domain.NewEvent(clock, domain.TypeBalanceDiscrepancy, domain.BalanceDiscrepancy{Account: x, Asset: a, Ledger: dec("1"), Exchange: dec("2"), Difference: dec("1"), Since: t})}
		} else {
			evs = []domain.Event{domain.NewEvent(clock, domain.TypeBalanceDiscrepancyCleared, domain.BalanceDiscrepancyCleared{Account: x, Asset: a, Balance: dec("1"), Since: t})}
		}
	}
	for i := range evs {
		evs[i].Stream = stream
		evs[i].Actor = domain.ActorSync
	}
	return evs
}

// TestSnapshotAccounts: the accounts' read model loaded from a snapshot at
// random positions of random logs with account facts, then fed the rest,
// equals the model fed the whole log.
func TestSnapshotAccounts(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		rng := rand.New(rand.NewPCG(seed, 38))
		size := 2000
		if seed == 4 {
			size = 20_000 // orders over several chunks of the combo index
		}
		events := snaptest.RandomLog(rng, snaptest.LogOptions{Events: size, Extra: randomAccountEvents})
		newProjs := func() []projections.Snapshotter { return []projections.Snapshotter{projections.NewAccounts()} }
		snaptest.Check(t, events, snaptest.Cuts(rng, len(events), 4), newProjs, func(t *testing.T, full, restored []projections.Snapshotter) {
			f, r := full[0].(*projections.Accounts), restored[0].(*projections.Accounts)
			for _, x := range f.Exchanges() {
				fv, _ := f.View(x)
				rv, _ := r.View(x)
				if !reflect.DeepEqual(fv, rv) {
					t.Fatalf("%s: restored ≠ full replay:\n%+v\n%+v", x, rv, fv)
				}
			}
			if !reflect.DeepEqual(full[0], restored[0]) {
				t.Fatal("accounts: restored ≠ full replay")
			}
		})
	}
}

func timeOf(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// An account event whose payload does not decode is an error, whatever
// its type, and changes nothing the account shows.
func TestAccountsRefuseUndecodablePayloads(t *testing.T) {
	var l accountLog
	acct := domain.AccountStream("bin")
	l.add(acct, domain.TypeAccountOpened, "sync", 2000, domain.AccountOpened{Exchange: "bin", Time: 2000,
		Balances: []domain.AssetBalance{{Asset: "USDT", Available: dec("900")}}})
	a := projections.NewAccounts()
	if err := a.Apply(&l.events[0]); err != nil {
		t.Fatal(err)
	}
	before, _ := a.View("bin")
	for i, typ := range []string{domain.TypeAccountOpened, domain.TypeExternalFill, domain.TypeDeposit, domain.TypeWithdrawal,
		domain.TypeConversion, domain.TypeActivitySynced, domain.TypeFillMismatch, domain.TypeFillUnlisted,
		domain.TypeBalanceDiscrepancy, domain.TypeBalanceDiscrepancyCleared} {
		e := domain.Event{ID: domain.DerivedEventID(fmt.Sprint("bad", i)), Stream: acct, Version: int64(i + 1), Position: uint64(i + 2),
			Type: typ, Schema: 1, Time: 3000, Actor: "sync", Data: json.RawMessage(`[1]`)}
		if err := a.Apply(&e); err == nil {
			t.Errorf("%s with an undecodable payload: no error", typ)
		}
	}
	if after, _ := a.View("bin"); !reflect.DeepEqual(after, before) {
		t.Fatalf("undecodable events changed the account:\n%+v\nwant\n%+v", after, before)
	}
}
