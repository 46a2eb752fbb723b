package projections

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/books"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// The books over the whole account (issue 38): each scenario of
// testdata/account-books is a log of the accounts' activity (its README
// has every figure by hand), replayed into the Ledger; the figures the
// hand computed are checked here, and each export's bytes and the
// statement against the scenario's golden files (the shapes are the
// point: each tax tool's rows for trades placed by hand, deposits,
// withdrawals and conversions). go test -run TestAccountBooks -update
// writes the golden files again.

var updateGolden = flag.Bool("update", false, "write the golden files of testdata/account-books again")

// accountLog is testLog with the accounts' facts.
type accountLog struct{ testLog }

func (g *accountLog) external(exchange, pair, id string, side domain.Side, price, qty, fee, feeAsset string, day, hh int) {
	t := at(day, hh, 0).UnixMilli()
	g.add(domain.AccountStream(exchange), domain.TypeExternalFill, at(day, hh, 0), domain.ExternalFill{Exchange: exchange, Pair: pair,
		TradeID: id, Side: side, Price: dec(price), Quantity: dec(qty), Fee: dec(fee), FeeAsset: feeAsset, Time: t})
}

func (g *accountLog) transfer(deposit bool, t domain.Transfer, day, hh, mm int) {
	typ := domain.TypeWithdrawal
	if deposit {
		typ = domain.TypeDeposit
	}
	t.Time = at(day, hh, mm).UnixMilli()
	if t.Status == "" {
		t.Status = domain.TransferCompleted
	}
	g.add(domain.AccountStream(t.Exchange), typ, at(day, hh, mm), t)
}

func (g *accountLog) convert(c domain.Conversion, day, hh int) {
	c.Time = at(day, hh, 0).UnixMilli()
	g.add(domain.AccountStream(c.Exchange), domain.TypeConversion, at(day, hh, 0), c)
}

// accountScenarios are the scenarios' logs, by folder name.
func accountScenarios(t *testing.T) map[string][]domain.Event {
	out := map[string][]domain.Event{}
	cfg := func(g *accountLog) {
		g.add(domain.StreamConfig, domain.TypeConfigReplaced, at(0, 0, 0), map[string]any{"config": map[string]any{
			"bot": map[string]any{"REPORTING_CURRENCY": "USDT", "PNL_METHOD": "fifo"}, "pairs": map[string]any{}}})
	}
	{ // A trade placed by hand between two of the service's.
		g := &accountLog{testLog{t: t}}
		cfg(g)
		g.filled(1, "binance", "USDT-BTC", domain.Buy, "100", "1", "0.1", "USDT", at(0, 10, 0))
		g.external("binance", "USDT-BTC", "h1", domain.Buy, "80", "1", "0.08", "USDT", 1, 10)
		g.filled(2, "binance", "USDT-BTC", domain.Sell, "120", "1.5", "0.18", "USDT", at(2, 10, 0))
		g.external("binance", "USDT-BTC", "h2", domain.Sell, "130", "0.5", "0.065", "USDT", 3, 10)
		out["external-trade"] = g.events
	}
	{ // A withdrawal from binance matched by txid to a deposit on bitstamp.
		g := &accountLog{testLog{t: t}}
		cfg(g)
		g.filled(1, "binance", "USDT-BTC", domain.Buy, "100", "1", "0", "USDT", at(0, 10, 0))
		g.order(2, "bitstamp", "USDT-BTC", domain.Buy, "0.1", at(0, 11, 0)) // the pair is known on bitstamp: never filled
		g.transfer(false, domain.Transfer{Exchange: "binance", ID: "w1", Asset: "BTC", Amount: dec("0.5"), Fee: dec("0.001"), TxID: "T1"}, 1, 10, 0)
		g.transfer(true, domain.Transfer{Exchange: "bitstamp", ID: "d1", Asset: "BTC", Amount: dec("0.5"), TxID: "T1"}, 1, 11, 0)
		g.filled(3, "bitstamp", "USDT-BTC", domain.Sell, "150", "0.5", "0", "USDT", at(2, 10, 0))
		out["transfer-carries-lots"] = g.events
	}
	{ // Coins from the outside, of unknown cost, sold after a bought lot.
		g := &accountLog{testLog{t: t}}
		cfg(g)
		g.transfer(true, domain.Transfer{Exchange: "binance", ID: "d1", Asset: "BTC", Amount: dec("1"), Status: domain.TransferPending}, 0, 9, 0)
		g.transfer(true, domain.Transfer{Exchange: "binance", ID: "d1", Asset: "BTC", Amount: dec("1"), Status: domain.TransferCredited}, 0, 9, 0)
		g.filled(1, "binance", "USDT-BTC", domain.Buy, "100", "1", "0", "USDT", at(1, 10, 0))
		g.filled(2, "binance", "USDT-BTC", domain.Sell, "120", "1.5", "0", "USDT", at(2, 10, 0))
		out["deposit-unknown-cost"] = g.events
	}
	{ // Coins from the outside when the log has a price of them.
		g := &accountLog{testLog{t: t}}
		cfg(g)
		g.filled(1, "binance", "USDT-BTC", domain.Buy, "100", "1", "0", "USDT", at(0, 10, 0))
		g.transfer(true, domain.Transfer{Exchange: "binance", ID: "d1", Asset: "BTC", Amount: dec("1"), Status: domain.TransferCredited}, 0, 10, 30)
		g.filled(2, "binance", "USDT-BTC", domain.Sell, "120", "1.5", "0", "USDT", at(1, 10, 0))
		out["deposit-at-market"] = g.events
	}
	{ // Dust converted to BNB, valued at the rates of its time.
		g := &accountLog{testLog{t: t}}
		cfg(g)
		g.filled(1, "binance", "USDT-ETH", domain.Buy, "1500", "1", "0", "USDT", at(0, 10, 0))
		g.filled(2, "binance", "USDT-BNB", domain.Buy, "400", "1", "0", "USDT", at(0, 11, 0))
		g.add(domain.RateStream("binance"), domain.TypeRateObserved, at(1, 9, 30), domain.RateObserved{Exchange: "binance", Base: "BNB", Quote: "USDT", Rate: dec("500")})
		g.add(domain.RateStream("binance"), domain.TypeRateObserved, at(1, 9, 30), domain.RateObserved{Exchange: "binance", Base: "ETH", Quote: "USDT", Rate: dec("2000")})
		g.convert(domain.Conversion{Exchange: "binance", ID: "c1", Kind: domain.ConversionDust, FromAsset: "ETH", FromAmount: dec("0.01"),
			ToAsset: "BNB", ToAmount: dec("0.04"), Fee: dec("0.0008"), FeeAsset: "BNB"}, 1, 10)
		out["dust-conversion"] = g.events
	}
	return out
}

// TestAccountBooks checks each scenario's figures (by hand, in its
// README) and its golden files.
func TestAccountBooks(t *testing.T) {
	scenarios := accountScenarios(t)
	for name, events := range scenarios {
		t.Run(name, func(t *testing.T) {
			l := replay(t, domain.FIFO, events)
			dir := filepath.Join("..", "testdata", "account-books", name)
			for _, f := range books.Formats {
				for _, sc := range []domain.CostBasisScope{domain.ScopeAccount, domain.ScopeUniversal} {
					if sc == domain.ScopeUniversal && f != books.FormatRealized && f != books.FormatFills {
						continue // the tax tools' rows do not depend on the scope
					}
					var b bytes.Buffer
					if _, err := books.Export(&b, l, f, books.Query{Method: domain.FIFO, Currency: "USDT", Scope: sc}, nil); err != nil {
						t.Fatal(err)
					}
					golden(t, filepath.Join(dir, sc.String()+"-"+string(f)+".csv"), b.Bytes())
				}
			}
			st, err := books.StatementReport(l, books.Query{Method: domain.FIFO, Scope: domain.ScopeAccount})
			if err != nil {
				t.Fatal(err)
			}
			js, _ := json.MarshalIndent(st, "", "  ")
			golden(t, filepath.Join(dir, "account-statement.json"), append(js, '\n'))
			accountFigures[name](t, l)
		})
	}
}

// golden compares got with the file at path (writing it with -update).
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run TestAccountBooks -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range max(len(gl), len(wl)) {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("%s line %d:\n got %s\nwant %s", path, i+1, g, w)
			}
		}
	}
}

// realizedOf returns the realized report of l under FIFO in scope sc.
func realizedOf(t *testing.T, l *Ledger, sc domain.CostBasisScope) *books.Realized {
	t.Helper()
	r, err := books.RealizedReport(l, books.Query{Method: domain.FIFO, Scope: sc}, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func lineOf(t *testing.T, l *Ledger, sc domain.CostBasisScope, key string) books.Line {
	t.Helper()
	st, err := books.StatementReport(l, books.Query{Method: domain.FIFO, Scope: sc})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range st.Lines {
		if x.Key == key {
			return x
		}
	}
	t.Fatalf("no line %s in %+v", key, st.Lines)
	return books.Line{}
}

func eqNum(t *testing.T, what string, got decimal.Number, want string) {
	t.Helper()
	if decimal.Decimal(got) != dec(want) {
		t.Errorf("%s = %s, want %s", what, decimal.Decimal(got), want)
	}
}

// accountFigures are each scenario's figures computed by hand (README).
var accountFigures = map[string]func(t *testing.T, l *Ledger){
	"external-trade": func(t *testing.T, l *Ledger) {
		r := realizedOf(t, l, domain.ScopeAccount)
		if len(r.Rows) != 2 || r.Rows[1].Kind != "external" || !r.Rows[1].External || r.Rows[0].Kind != "order" {
			t.Fatalf("rows %+v", r.Rows)
		}
		eqNum(t, "#2 gain", r.Rows[0].Gain, "39.68")
		eqNum(t, "h2 gain", r.Rows[1].Gain, "24.895")
		if u := r.Rows[0].Lots[1]; u.Acquired != "external" || u.BuyOrderID != 0 {
			t.Errorf("#2's second lot %+v, want the external trade's", u)
		}
		recs := l.Orders("binance/USDT-BTC")
		if len(recs) != 4 || !recs[0].External || recs[0].ID != 0 || recs[1].External || !recs[2].External {
			t.Fatalf("records %+v", recs)
		}
		if b := recs[0].AppendJSON(nil); !bytes.Contains(b, []byte(`"external":true`)) {
			t.Errorf("record JSON %s", b)
		}
		if ms := l.Marks("binance", "USDT-BTC", 0, 1<<40); len(ms) != 4 || ms[1].Tooltip[len(ms[1].Tooltip)-1] != "External trade" ||
			len(ms[0].Tooltip) != 4 {
			t.Errorf("chart marks %+v: the trade by hand says so", ms)
		}
		tot, err := l.Total("binance/USDT-BTC")
		if err != nil {
			t.Fatal(err)
		}
		if decimal.Decimal(tot.Pnl) != dec("64.575") {
			t.Errorf("pnl/total %s, want 39.68 + 24.895", tot.Pnl)
		}
	},
	"transfer-carries-lots": func(t *testing.T, l *Ledger) {
		r := realizedOf(t, l, domain.ScopeAccount)
		if len(r.Rows) != 1 || len(r.Rows[0].Lots) != 1 {
			t.Fatalf("rows %+v", r.Rows)
		}
		u := r.Rows[0].Lots[0]
		eqNum(t, "carried lot quantity", u.Quantity, "0.5")
		eqNum(t, "carried lot cost (the fee's included)", u.CostBasis, "50.1")
		eqNum(t, "gain", u.Gain, "24.9")
		if u.AcquiredAt != at(0, 10, 0).UnixMilli() || u.BuyOrderID != 1 || u.HoldingDays != 2 {
			t.Errorf("lot %+v: acquired by #1 on binance at D 10:00, held 2 days", u)
		}
		src, dst := lineOf(t, l, domain.ScopeAccount, "binance/USDT-BTC"), lineOf(t, l, domain.ScopeAccount, "bitstamp/USDT-BTC")
		eqNum(t, "withdrawn", src.Withdrawn.Quantity, "0.501")
		eqNum(t, "withdrawn cost", src.Withdrawn.CostBasis, "50.1")
		eqNum(t, "network fee", src.Withdrawn.NetworkFees, "0.001")
		eqNum(t, "binance closing cost", src.Closing.CostBasis, "49.9")
		eqNum(t, "deposited", dst.Deposited.Quantity, "0.5")
		eqNum(t, "deposited cost", dst.Deposited.Cost, "50.1")
		if src.Withdrawn.Transfers != 1 || dst.Deposited.Transfers != 1 || !decimal.Decimal(dst.Deposited.UnknownCostQuantity).IsZero() {
			t.Errorf("transfer lines %+v, %+v", src.Withdrawn, dst.Deposited)
		}
		// Across accounts, FIFO takes binance's older part first.
		ru := realizedOf(t, l, domain.ScopeUniversal)
		if len(ru.Rows) != 1 {
			t.Fatalf("universal rows %+v", ru.Rows)
		}
		eqNum(t, "universal gain", ru.Rows[0].Gain, "24.9998")
		tot, _ := l.Total("bitstamp/USDT-BTC")
		if decimal.Decimal(tot.Pnl) != dec("24.9") {
			t.Errorf("bitstamp pnl/total %s, want 24.9", tot.Pnl)
		}
	},
	"deposit-unknown-cost": func(t *testing.T, l *Ledger) {
		r := realizedOf(t, l, domain.ScopeAccount)
		if len(r.Rows) != 1 {
			t.Fatalf("rows %+v", r.Rows)
		}
		d := r.Rows[0]
		eqNum(t, "known gain", d.Gain, "20")
		eqNum(t, "unknown-cost quantity", d.UnknownCost.Quantity, "0.5")
		eqNum(t, "unknown-cost proceeds", d.UnknownCost.Proceeds, "60")
		if d.GainKnown || len(d.UnknownLots) != 1 || d.UnknownLots[0].AcquiredAt != at(0, 9, 0).UnixMilli() {
			t.Errorf("disposal %+v: its gain is partial, 0.5 came from the deposit of D 09:00", d)
		}
		line := lineOf(t, l, domain.ScopeAccount, "binance/USDT-BTC")
		eqNum(t, "deposited of unknown cost", line.Deposited.UnknownCostQuantity, "1")
		eqNum(t, "closing of unknown cost", line.Closing.UnknownCostQuantity, "0.5")
		eqNum(t, "closing position", line.ClosingPosition, "0.5")
		tot, _ := l.Total("binance/USDT-BTC")
		if decimal.Decimal(tot.Pnl) != dec("20") {
			t.Errorf("pnl/total %s, want 20: no gain on coins of unknown cost", tot.Pnl)
		}
	},
	"deposit-at-market": func(t *testing.T, l *Ledger) {
		r := realizedOf(t, l, domain.ScopeAccount)
		if len(r.Rows) != 1 || len(r.Rows[0].Lots) != 2 || !r.Rows[0].GainKnown {
			t.Fatalf("rows %+v", r.Rows)
		}
		d := r.Rows[0]
		eqNum(t, "gain (20 on the bought lot, 10 on half the deposit)", d.Gain, "30")
		if u := d.Lots[1]; u.Acquired != "deposit" || u.AcquiredAt != at(0, 10, 30).UnixMilli() || decimal.Decimal(u.CostBasis) != dec("50") {
			t.Errorf("the deposit's lot %+v: at 100, the price of D 10:00", u)
		}
		line := lineOf(t, l, domain.ScopeAccount, "binance/USDT-BTC")
		if line.Deposited.AtMarket != 1 || decimal.Decimal(line.Deposited.Cost) != dec("100") {
			t.Errorf("deposited %+v", line.Deposited)
		}
		tot, _ := l.Total("binance/USDT-BTC")
		if decimal.Decimal(tot.Pnl) != dec("30") {
			t.Errorf("pnl/total %s, want 30", tot.Pnl)
		}
	},
	"dust-conversion": func(t *testing.T, l *Ledger) {
		r := realizedOf(t, l, domain.ScopeAccount)
		if len(r.Rows) != 1 || r.Rows[0].Kind != "conversion" {
			t.Fatalf("rows %+v", r.Rows)
		}
		d := r.Rows[0]
		eqNum(t, "proceeds (0.04 BNB at 500)", d.Proceeds, "20")
		eqNum(t, "cost (0.01 of the 1500 lot)", d.CostBasis, "15")
		eqNum(t, "gain", d.Gain, "5")
		bnb := lineOf(t, l, domain.ScopeAccount, "binance/USDT-BNB")
		eqNum(t, "BNB acquired", bnb.Acquired.Quantity, "1.04")
		eqNum(t, "BNB cost (0.01 ETH at 2000)", bnb.Acquired.Cost, "420")
		if bnb.Acquired.Conversions != 1 {
			t.Errorf("BNB acquired %+v", bnb.Acquired)
		}
		tot, _ := l.Total("binance/USDT-ETH")
		if decimal.Decimal(tot.Pnl) != dec("5") {
			t.Errorf("USDT-ETH pnl/total %s, want 5", tot.Pnl)
		}
	},
}
