package books

import (
	"bytes"
	"encoding/csv"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
)

// The headers are those the tools' import pages document, column for
// column (the pages are cited at each header's declaration in export.go).
func TestExportHeadersAsDocumented(t *testing.T) {
	documented := map[Format][]string{
		// support.koinly.io article 9489976, Universal template: required
		// then optional fields.
		FormatKoinly: {"Date", "Sent Amount", "Sent Currency", "Received Amount", "Received Currency",
			"Fee Amount", "Fee Currency", "Net Worth Amount", "Net Worth Currency", "Tag", "Description", "TxHash"},
		// support.cointracker.io article 4413071299729: columns A to H.
		FormatCoinTracker: {"Date", "Received Quantity", "Received Currency", "Sent Quantity", "Sent Currency",
			"Fee Amount", "Fee Currency", "Tag"},
		// cointracking.info import/import_csv.
		FormatCoinTracking: {"Type", "Buy Amount", "Buy Currency", "Sell Amount", "Sell Currency", "Fee",
			"Fee Currency", "Exchange", "Trade-Group", "Comment", "Date"},
	}
	for f, want := range documented {
		got, err := csv.NewReader(strings.NewReader(Header(f))).Read()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s header %q, documented %q", f, got, want)
		}
	}
	if !strings.HasPrefix(Header(FormatCoinTracking), `"Type","Buy Amount",`) {
		t.Errorf("CoinTracking header not quoted as its template: %s", Header(FormatCoinTracking))
	}
	for _, f := range Formats {
		if p, err := ParseFormat(strings.ToUpper(string(f))); err != nil || p != f {
			t.Errorf("ParseFormat(%s) = %v, %v", f, p, err)
		}
	}
	if _, err := ParseFormat("xlsx"); domain.ErrorCode(err) != domain.EINVALID {
		t.Errorf("ParseFormat(xlsx): %v", err)
	}
}

func export(t *testing.T, src Source, f Format, q Query) string {
	t.Helper()
	var b bytes.Buffer
	if _, err := Export(&b, src, f, q, nil); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// Each format's rows for goldenSource's January 2024 (FIFO), line by line.
func TestExportGolden(t *testing.T) {
	q := Query{From: day(2024, 1, 1, 0), To: day(2024, 2, 1, 0), Method: domain.FIFO, Currency: "EUR"}
	tests := []struct {
		f    Format
		want []string
	}{
		{FormatKoinly, []string{
			KoinlyHeader,
			// #21 buys 1 ETH for 0.05 BTC; no BTC→EUR rate: no net worth
			"2024-01-02 00:00:00,0.05000000,BTC,1.00000000,ETH,,,,,,binance BTC-ETH buy order 21,tradeledger:binance:21:6",
			// #22 sells 1.5 ETH for 0.09 BTC, fee 1 BNB
			"2024-01-03 00:00:00,1.50000000,ETH,0.09000000,BTC,1.00000000,BNB,,,,binance BTC-ETH sell order 22,tradeledger:binance:22:7",
			"2024-01-09 12:00:00,20.00000000,USDT,1.00000000,SOL,,,10.00000000,EUR,,binance USDT-SOL buy order 13,tradeledger:binance:13:3",
			"2024-01-10 12:00:00,40.00000000,USDT,1.00000000,SOL,,,20.00000000,EUR,,binance USDT-SOL buy order 14,tradeledger:binance:14:4",
			// 70 USDT at 0.5 = 35 EUR
			"2024-01-11 10:00:00,2.00000000,SOL,70.00000000,USDT,0.20000000,USDT,35.00000000,EUR,,binance USDT-SOL sell order 15,tradeledger:binance:15:5",
		}},
		{FormatCoinTracker, []string{
			CoinTrackerHeader,
			"01/02/2024 00:00:00,1.00000000,ETH,0.05000000,BTC,,,",
			"01/03/2024 00:00:00,0.09000000,BTC,1.50000000,ETH,1.00000000,BNB,",
			"01/09/2024 12:00:00,1.00000000,SOL,20.00000000,USDT,,,",
			"01/10/2024 12:00:00,1.00000000,SOL,40.00000000,USDT,,,",
			"01/11/2024 10:00:00,70.00000000,USDT,2.00000000,SOL,0.20000000,USDT,",
		}},
		{FormatCoinTracking, []string{
			CoinTrackingHeader,
			`"Trade","1.00000000","ETH","0.05000000","BTC","","","binance","binance/BTC-ETH","tradeledger order 21 position 6","2024-01-02 00:00:00"`,
			// the BNB fee is a third asset's: in the Fee column only
			`"Trade","0.09000000","BTC","1.50000000","ETH","1.00000000","BNB","binance","binance/BTC-ETH","tradeledger order 22 position 7","2024-01-03 00:00:00"`,
			`"Trade","1.00000000","SOL","20.00000000","USDT","","","binance","binance/USDT-SOL","tradeledger order 13 position 3","2024-01-09 12:00:00"`,
			`"Trade","1.00000000","SOL","40.00000000","USDT","","","binance","binance/USDT-SOL","tradeledger order 14 position 4","2024-01-10 12:00:00"`,
			// the USDT fee is in the currency bought: off Buy Amount, 70 − 0.2
			`"Trade","69.80000000","USDT","2.00000000","SOL","0.20000000","USDT","binance","binance/USDT-SOL","tradeledger order 15 position 5","2024-01-11 10:00:00"`,
		}},
		{FormatRealized, []string{
			RealizedHeader,
			// #22: 1 ETH against #21's lot (0.06 − 0 − 0.05 = 0.01, 1 day), then 0.5 unmatched
			"2024-01-03T00:00:00.000Z,1704240000000,binance,BTC-ETH,ETH,BTC,22,7,2024-01-02T00:00:00.000Z,1704153600000,21,1.00000000,0.06000000,0.00000000,0.05000000,0.01000000,1,short,BNB,1.00000000,false,EUR,,,,,fifo,order,order,account",
			"2024-01-03T00:00:00.000Z,1704240000000,binance,BTC-ETH,ETH,BTC,22,7,,,,0.50000000,0.03000000,,,,,unmatched,BNB,1.00000000,false,EUR,,,,,fifo,order,,account",
			"2024-01-11T10:00:00.000Z,1704967200000,binance,USDT-SOL,SOL,USDT,15,5,2023-01-10T12:00:00.000Z,1673352000000,11,1.00000000,35.00000000,0.10000000,10.00000000,24.90000000,366,long,USDT,0.20000000,true,EUR,17.50000000,0.05000000,9.00000000,8.45000000,fifo,order,order,account",
			"2024-01-11T10:00:00.000Z,1704967200000,binance,USDT-SOL,SOL,USDT,15,5,2023-06-01T12:00:00.000Z,1685620800000,12,1.00000000,35.00000000,0.10000000,30.00000000,4.90000000,224,short,USDT,0.20000000,true,EUR,17.50000000,0.05000000,24.00000000,-6.55000000,fifo,order,order,account",
		}},
		{FormatFills, []string{
			FillsHeader,
			"2024-01-02T00:00:00.000Z,1704153600000,6,binance,BTC-ETH,ETH,BTC,buy,21,0.05000000,1.00000000,0.05000000,0.00000000,,true,0.00000000,0.00000000,0,0.05000000,1.00000000,0.00000000,0.05000000,0.00000000,1.00000000,1.00000000,0.05000000,0.05000000,fifo,order,,,0.00000000",
			"2024-01-03T00:00:00.000Z,1704240000000,7,binance,BTC-ETH,ETH,BTC,sell,22,0.06000000,1.50000000,0.09000000,1.00000000,BNB,false,,,,0.09000000,1.00000000,0.50000000,0.05000000,0.01000000,-0.50000000,0.00000000,0.00000000,0.00000000,fifo,order,,,0.00000000",
			// the lots before January are A {1, 10} and B {2, 60}: after C 4 for 90, ABP 22.5
			"2024-01-09T12:00:00.000Z,1704801600000,3,binance,USDT-SOL,SOL,USDT,buy,13,20.00000000,1.00000000,20.00000000,0.00000000,,true,0.00000000,0.00000000,0,20.00000000,1.00000000,0.00000000,20.00000000,0.00000000,4.00000000,4.00000000,90.00000000,22.50000000,fifo,order,,,0.00000000",
			"2024-01-10T12:00:00.000Z,1704888000000,4,binance,USDT-SOL,SOL,USDT,buy,14,40.00000000,1.00000000,40.00000000,0.00000000,,true,0.00000000,0.00000000,0,40.00000000,1.00000000,0.00000000,40.00000000,0.00000000,5.00000000,5.00000000,130.00000000,26.00000000,fifo,order,,,0.00000000",
			"2024-01-11T10:00:00.000Z,1704967200000,5,binance,USDT-SOL,SOL,USDT,sell,15,35.00000000,2.00000000,70.00000000,0.20000000,USDT,true,0.20000000,1.00000000,1704967200000,69.80000000,2.00000000,0.00000000,40.00000000,29.80000000,3.00000000,3.00000000,90.00000000,30.00000000,fifo,order,,,0.00000000",
		}},
	}
	for _, tt := range tests {
		t.Run(string(tt.f), func(t *testing.T) {
			got := export(t, goldenSource(), tt.f, q)
			want := strings.Join(tt.want, "\r\n") + "\r\n"
			if got != want {
				gl, wl := strings.Split(got, "\r\n"), strings.Split(want, "\r\n")
				for i := range min(len(gl), len(wl)) {
					if gl[i] != wl[i] {
						t.Errorf("line %d:\n got %s\nwant %s", i, gl[i], wl[i])
					}
				}
				if len(gl) != len(wl) {
					t.Errorf("%d lines, want %d:\n%s", len(gl), len(wl), got)
				}
			}
			// Every row has the header's number of fields.
			recs, err := csv.NewReader(strings.NewReader(got)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range recs {
				if len(r) != len(recs[0]) {
					t.Errorf("row %d has %d fields, the header %d", i, len(r), len(recs[0]))
				}
			}
		})
	}
}

// The same source and query give the same bytes, in every format, and the
// dates the tax tools read parse back in their layouts as the fills'
// times in UTC.
func TestExportDeterministicAndDated(t *testing.T) {
	src := randomLog(rand.New(rand.NewPCG(3, 3)), 400)
	ams, _ := time.LoadLocation("Europe/Amsterdam")
	q := Query{From: day(2024, 1, 3, 0), To: day(2024, 1, 12, 0), Method: domain.HIFO, Loc: ams, Currency: "USDT"}
	layouts := map[Format]struct {
		col    int
		layout string
	}{FormatKoinly: {0, "2006-01-02 15:04:05"}, FormatCoinTracker: {0, "01/02/2006 15:04:05"},
		FormatCoinTracking: {10, "2006-01-02 15:04:05"}, FormatFills: {0, time.RFC3339Nano}, FormatRealized: {0, time.RFC3339Nano}}
	for _, f := range Formats {
		a, b := export(t, src, f, q), export(t, src, f, q)
		if a != b {
			t.Errorf("%s: two exports differ", f)
		}
		recs, err := csv.NewReader(strings.NewReader(a)).ReadAll()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(recs) < 10 {
			t.Fatalf("%s: %d rows", f, len(recs))
		}
		l := layouts[f]
		for _, r := range recs[1:] {
			tm, err := time.Parse(l.layout, r[l.col])
			if err != nil {
				t.Fatalf("%s: date %q: %v", f, r[l.col], err)
			}
			if tm.UnixMilli() < q.From || tm.UnixMilli() >= q.To {
				t.Fatalf("%s: date %s outside the period", f, tm)
			}
		}
	}
}
