package domain

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestCheckExchangeURL(t *testing.T) {
	for _, c := range []struct {
		v  any
		ok bool
	}{
		{"https://api.binance.us", true},
		{"https://proxy.example.com/binance", true},
		{"http://127.0.0.1:8080", true},
		{"http://[::1]:9000", true},
		{"http://localhost:9000", true},
		{"http://api.binance.com", false},
		{"ftp://api.binance.com", false},
		{"api.binance.com", false},
		{"https://user:pass@api.binance.com", false},
		{"https://api.binance.com/?x=1", false},
		{42, false},
	} {
		err := CheckExchangeURL("config.exchanges.binance.url", c.v)
		if (err == nil) != c.ok {
			t.Errorf("%v: err=%v, want ok=%v", c.v, err, c.ok)
		}
		if err != nil && !strings.Contains(ErrorMessage(err), "config.exchanges.binance.url") {
			t.Errorf("%v: %v does not name the field", c.v, err)
		}
	}
}

func TestPaperActivityParse(t *testing.T) {
	for _, c := range []struct {
		req   PaperActivityRequest
		field string // "" when valid
	}{
		{PaperActivityRequest{Exchange: "binance", Kind: "deposit", Asset: "btc", Amount: "0.5"}, ""},
		{PaperActivityRequest{Exchange: "binance", Kind: "withdrawal", Asset: "USDT", Amount: "100", Fee: "1"}, ""},
		{PaperActivityRequest{Exchange: "binance", Kind: "trade", Pair: "USDT-BTC", Side: "buy", Amount: "0.01", Price: "60000", Fee: "0.6"}, ""},
		{PaperActivityRequest{Exchange: "binance", Kind: "drift", Asset: "ETH", Amount: "-0.1"}, ""},
		{PaperActivityRequest{Exchange: "binance", Kind: "conversion", Asset: "ETH", Amount: "0.001", ToAsset: "BNB", ToAmount: "0.005"}, ""},
		{PaperActivityRequest{Exchange: "", Kind: "deposit", Asset: "BTC", Amount: "1"}, "exchange"},
		{PaperActivityRequest{Exchange: "binance", Kind: "gift", Asset: "BTC", Amount: "1"}, "kind"},
		{PaperActivityRequest{Exchange: "binance", Kind: "", Asset: "BTC", Amount: "1"}, "kind"},
		{PaperActivityRequest{Exchange: "binance", Kind: "deposit", Asset: "BTC", Amount: "x"}, "amount"},
		{PaperActivityRequest{Exchange: "binance", Kind: "deposit", Asset: "BTC", Amount: "-1"}, "amount"},
		{PaperActivityRequest{Exchange: "binance", Kind: "deposit", Asset: "BTC"}, "amount"},
		{PaperActivityRequest{Exchange: "binance", Kind: "deposit", Asset: "B-C", Amount: "1"}, "asset"},
		{PaperActivityRequest{Exchange: "binance", Kind: "deposit", Asset: "BTC", Amount: "1", Fee: "0.1"}, "fee"},
		{PaperActivityRequest{Exchange: "binance", Kind: "withdrawal", Asset: "BTC", Amount: "1", Fee: "-0.1"}, "fee"},
		{PaperActivityRequest{Exchange: "binance", Kind: "trade", Pair: "BTC", Side: "buy", Amount: "1", Price: "1"}, "pair"},
		{PaperActivityRequest{Exchange: "binance", Kind: "trade", Pair: "USDT-BTC", Side: "hold", Amount: "1", Price: "1"}, "side"},
		{PaperActivityRequest{Exchange: "binance", Kind: "trade", Pair: "USDT-BTC", Side: "sell", Amount: "1"}, "price"},
		{PaperActivityRequest{Exchange: "binance", Kind: "drift", Asset: "BTC", Amount: "0"}, "amount"},
		{PaperActivityRequest{Exchange: "binance", Kind: "conversion", Asset: "ETH", Amount: "1", ToAsset: "ETH", ToAmount: "1"}, "toAsset"},
		{PaperActivityRequest{Exchange: "binance", Kind: "deposit", Asset: "BTC", Amount: "0.0000000000001"}, "amount"},
		{PaperActivityRequest{Exchange: "binance", Kind: "conversion", Asset: "ETH", Amount: "1", ToAsset: "", ToAmount: "1"}, "toAsset"},
		{PaperActivityRequest{Exchange: "binance", Kind: "conversion", Asset: "ETH", Amount: "1", ToAsset: "BNB"}, "toAmount"},
		{PaperActivityRequest{Exchange: "binance", Kind: "conversion", Asset: "ETH", Amount: "1", ToAsset: "BNB", ToAmount: "0"}, "toAmount"},
		{PaperActivityRequest{Exchange: "binance", Kind: "trade", Pair: "USDT-BTC", Side: "buy", Amount: "0", Price: "1"}, "amount"},
		{PaperActivityRequest{Exchange: "binance", Kind: "trade", Pair: "USDT-BTC", Side: "buy", Amount: "1", Price: "-1"}, "price"},
		{PaperActivityRequest{Exchange: "binance", Kind: "trade", Pair: "USDT-BTC", Side: "buy", Amount: "1", Price: "1", Asset: "B/C"}, "asset"},
		{PaperActivityRequest{Exchange: "binance", Kind: "trade", Pair: "USDT-BTC", Side: "buy", Amount: "1", Price: "1", Asset: "BNB"}, ""},
		{PaperActivityRequest{Exchange: "binance", Kind: "trade", Pair: "USDT-BTC", Side: "buy", Amount: "10000000000000000", Price: "10000000000000000"}, "amount"},
	} {
		_, err := c.req.Parse()
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%+v: %v", c.req, err)
		case c.field != "" && (err == nil || ErrorCode(err) != EINVALID || !strings.Contains(ErrorMessage(err), `"`+c.field+`"`)):
			t.Errorf("%+v: err=%v, want EINVALID naming %q", c.req, err, c.field)
		}
	}
}

func TestDecidePaperActivityFunds(t *testing.T) {
	clock := NewManualClock(time.Unix(1000, 0))
	avail := func(asset string) Decimal {
		return map[string]Decimal{"USDT": MustDecimal("100"), "BTC": MustDecimal("1")}[asset]
	}
	listed := func(pair string) bool { return pair == "USDT-BTC" }
	ok := []PaperActivity{
		{Exchange: "x", Kind: PaperWithdrawal, Asset: "USDT", Amount: MustDecimal("99"), Fee: MustDecimal("1")},
		{Exchange: "x", Kind: PaperTrade, Pair: "USDT-BTC", Side: Buy, Amount: MustDecimal("0.001"), Price: MustDecimal("99000"), Fee: MustDecimal("1")},
		{Exchange: "x", Kind: PaperDrift, Asset: "BTC", Amount: MustDecimal("-1")},
	}
	for _, p := range ok {
		if _, err := DecidePaperActivity(clock, p, avail, listed); err != nil {
			t.Errorf("%+v: %v", p, err)
		}
	}
	refused := []PaperActivity{
		{Exchange: "x", Kind: PaperWithdrawal, Asset: "USDT", Amount: MustDecimal("99.5"), Fee: MustDecimal("1")},
		{Exchange: "x", Kind: PaperTrade, Pair: "USDT-BTC", Side: Sell, Amount: MustDecimal("1.1"), Price: MustDecimal("1")},
		{Exchange: "x", Kind: PaperTrade, Pair: "USDT-ETH", Side: Sell, Amount: MustDecimal("1"), Price: MustDecimal("1")},
		{Exchange: "x", Kind: PaperDrift, Asset: "BTC", Amount: MustDecimal("-1.5")},
	}
	for _, p := range refused {
		if _, err := DecidePaperActivity(clock, p, avail, listed); ErrorCode(err) != EINVALID {
			t.Errorf("%+v: err=%v, want EINVALID", p, err)
		}
	}
}

// TestDecideBalanceCheck: a difference opens a discrepancy with its
// amounts, an unchanged one appends nothing, a changed one is recorded
// again with the first since, a gone one is cleared; exact to the unit.
func TestDecideBalanceCheck(t *testing.T) {
	clock := NewManualClock(time.Unix(1000, 0))
	implied := map[string]Decimal{"BTC": MustDecimal("1"), "USDT": MustDecimal("100")}
	rep := []AssetBalance{{Asset: "BTC", Available: MustDecimal("0.9"), OnOrder: MustDecimal("0.1")}, {Asset: "USDT", Available: MustDecimal("100.000000000001")}}
	evs := DecideBalanceCheck(clock, "x", implied, rep, nil, 5)
	if len(evs) != 1 || evs[0].Type != TypeBalanceDiscrepancy {
		t.Fatalf("%v", evs)
	}
	var d BalanceDiscrepancy
	if err := evs[0].Decode(&d); err != nil || d.Asset != "USDT" || d.Difference.Cmp(MustDecimal("0.000000000001")) != 0 || d.Since != 5 {
		t.Fatalf("%+v %v", d, err)
	}
	open := map[string]BalanceDiscrepancy{"USDT": d}
	if evs := DecideBalanceCheck(clock, "x", implied, rep, open, 9); len(evs) != 0 {
		t.Fatalf("unchanged: %v", evs)
	}
	rep[1].Available = MustDecimal("101")
	evs = DecideBalanceCheck(clock, "x", implied, rep, open, 9)
	var d2 BalanceDiscrepancy
	if len(evs) != 1 || evs[0].Decode(&d2) != nil || d2.Since != 5 || d2.Difference.Cmp(MustDecimal("1")) != 0 {
		t.Fatalf("changed: %v %+v", evs, d2)
	}
	rep[1].Available = MustDecimal("100")
	evs = DecideBalanceCheck(clock, "x", implied, rep, open, 9)
	if len(evs) != 1 || evs[0].Type != TypeBalanceDiscrepancyCleared {
		t.Fatalf("cleared: %v", evs)
	}
	// An asset on one side only.
	evs = DecideBalanceCheck(clock, "x", implied, append(rep, AssetBalance{Asset: "ETH", Available: MustDecimal("2")}), nil, 9)
	if len(evs) != 1 {
		t.Fatalf("one side: %v", evs)
	}
}

func TestFactIDsFromTheExchange(t *testing.T) {
	clock := NewManualClock(time.Unix(1000, 0))
	f := ExternalFill{Exchange: "b", Pair: "USDT-BTC", TradeID: "28457", Side: Buy, Price: MustDecimal("4.00000100"), Quantity: MustDecimal("12"), Time: 1}
	a, _ := DecideExternalFill(clock, f)
	clock.Advance(time.Hour)
	b, _ := DecideExternalFill(clock, f)
	if a[0].ID != b[0].ID {
		t.Fatal("one trade read twice has two event ids")
	}
	tr := Transfer{Exchange: "b", ID: "769800519366885376", Asset: "BNB", Amount: MustDecimal("0.001"), Status: TransferPending, Address: "bnb136ns6lfw4zs5hg4n85vdthaad7hq5m4gtkgf23", AddressTag: "101764890"}
	p, _ := DecideTransfer(clock, true, tr)
	tr.Status = TransferCompleted
	c, _ := DecideTransfer(clock, true, tr)
	if p[0].ID == c[0].ID {
		t.Fatal("two statuses of a deposit share an event id")
	}
	var got Transfer
	if err := c[0].Decode(&got); err != nil || got.Address != "bnb1…gf23" || got.AddressTag != "1017…4890" {
		t.Fatalf("not masked: %+v %v", got, err)
	}
	if strings.Contains(string(c[0].Data), "4gtkgf23") || strings.Contains(string(c[0].Data), "101764890") {
		t.Fatalf("address in clear: %s", c[0].Data)
	}
}

func TestClientOrderTime(t *testing.T) {
	at := time.Date(2026, 5, 6, 7, 8, 9, 123e6, time.UTC)
	id := ClientOrderID(NewEventID(at))
	ms, ok := ClientOrderTime(id)
	if !ok || ms != at.UnixMilli() {
		t.Fatalf("%s: %d %v, want %d", id, ms, ok, at.UnixMilli())
	}
	if _, ok := ClientOrderTime("web_123"); ok {
		t.Fatal("a client id of another's read as ours")
	}
}

// TestExternalFillJSON: the payload written field by field is the one
// encoding/json writes, and reads back as it was (the one-pass reader and,
// for escapes, encoding/json).
func TestExternalFillJSON(t *testing.T) {
	for _, f := range []ExternalFill{
		{Exchange: "binance", Pair: "USDT-BTC", TradeID: "binance-BTCUSDT-28457", OrderID: "100234", ClientOrderID: "web_\"<&>\u2028", Side: Buy,
			Price: MustDecimal("4.00000100"), Quantity: MustDecimal("12"), QuoteQuantity: MustDecimal("48.000012"), Fee: MustDecimal("10.1"), FeeAsset: "BNB", Time: 1499865549590},
		{Exchange: "k", Pair: "EUR-XBT", TradeID: "T1", Side: Sell, Price: MustDecimal("1"), Quantity: MustDecimal("0.000000000001"), FeeAsset: "", Time: -1},
	} {
		want, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		evs, err := DecideExternalFill(NewManualClock(time.Unix(1, 0)), f)
		if err != nil {
			t.Fatal(err)
		}
		if string(evs[0].Data) != string(want) {
			t.Errorf("field by field:\n%s\nencoding/json:\n%s", evs[0].Data, want)
		}
		var back ExternalFill
		if err := json.Unmarshal(evs[0].Data, &back); err != nil || back != f {
			t.Errorf("read back %+v (%v), want %+v", back, err, f)
		}
	}
}
