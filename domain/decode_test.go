package domain

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/jsonscan"
)

// FuzzDecode checks that the hand-written decoders give exactly what
// encoding/json gives: the same value, and an error exactly when it errs.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"orderId":12,"exchange":"binance","pair":"USDT-BTC","side":"buy","kind":"limit","amount":"1.00000000","price":"100.00000000","clientOrderId":"c-1"}`,
		`{"fillId":"f1","price":"100.00000000","quantity":"0.50000000","fee":"0.00100000","feeAsset":"USDT","seq":7}`,
		`{"orderId":-0,"ocoId":3, "stopPrice" : "1" , "limitPrice":"2.5"}`,
		`{"OrderId":1}`, `{"orderId":1.0}`, `{"amount":1.5}`, `{"amount":null}`, `{"pair":"a\u0062"}`, `{"pair":"é"}`,
		// In the order encoding/json writes (the in-order path), with the
		// omitempty fields, and near misses it must leave to the scanner.
		`{"orderId":7,"exchange":"binance","pair":"USDT-BTC","side":"sell","kind":"stop_limit","amount":"1.00000000","price":"0.00000000","stopPrice":"9.00000000","limitPrice":"8.50000000","clientOrderId":"c-7","ocoId":3,"idempotencyKey":"k","idempotencyFingerprint":"ab"}`,
		`{"orderId":7,"exchange":"binance","pair":"USDT-BTC","side":"sell","kind":"limit","amount":"1.00000000","price":"2.00000000","clientOrderId":"c-7"} `,
		`{"orderId":7,"exchange":"binance","pair":"USDT-BTC","side":"sell","kind":"limit","amount":"1.00000000","price":"2.00000000","clientOrderId":"c-7","orderId":8}`,
		`{"orderId":7 ,"exchange":"binance","pair":"USDT-BTC","side":"sell","kind":"limit","amount":"1.000000001","price":"2","clientOrderId":"c-7"}`,
		`{"orderId":7,"exchange":"binance","pair":"USDT-BTC","side":"sell","kind":"limit","amount":"1","price":"2","clientOrderId":"c-7","ocoId":01}`,
		`{"fillId":"f1","price":"100.00000000","quantity":"0.50000000","fee":"0.00100000","feeAsset":"USDT","seq":7,"exchangeTime":1767225600000}`,
		`{"fillId":"f1","price":"100.00000000","quantity":"0.50000000","fee":"0.00100000","feeAsset":"USDT","seq":-7}`,
		`{"fillId":"f1","price":"100","quantity":"0.5","fee":"0","feeAsset":"USDT","exchangeTime":1,"seq":2}`,
		`{"fillId":"f1","price":"100","quantity":"0.5","fee":"0","feeAsset":"US\u0044T"}`,
		`{"exchangeOrderId":"x-1"}`, `{"idempotencyKey":"k"}`, `{"idempotencyKey":"k","idempotencyFingerprint":"0123456789abcdef"}`, `{"orderId":1}x`, `{}`, ` { } `, `{"fee":"1e3"}`, `{"seq":-1}`, `{"orderId":99999999999999999999}`, `{"price":"0.123456789"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var fast, slow OrderRequested
		errF, errS := DecodeOrderRequested(b, &fast, nil), json.Unmarshal(b, &slow)
		if (errF == nil) != (errS == nil) || (errS == nil && fast != slow) {
			t.Fatalf("OrderRequested %q: fast %+v, %v; json %+v, %v", b, fast, errF, slow, errS)
		}
		var lean OrderRequested
		errF = DecodeOrderRequested(b, &lean, jsonscan.Interner{})
		slow.ClientOrderID, slow.IdempotencyKey, slow.IdempotencyFingerprint = "", "", ""
		if (errF == nil) != (errS == nil) || (errS == nil && lean != slow) {
			t.Fatalf("lean OrderRequested %q: fast %+v, %v; json %+v, %v", b, lean, errF, slow, errS)
		}
		var ff, fs OrderFilled
		errF, errS = DecodeOrderFilled(b, &ff, nil), json.Unmarshal(b, &fs)
		if (errF == nil) != (errS == nil) || (errS == nil && ff != fs) {
			t.Fatalf("OrderFilled %q: fast %+v, %v; json %+v, %v", b, ff, errF, fs, errS)
		}
		var lf OrderFilled
		errF = DecodeOrderFilled(b, &lf, jsonscan.Interner{})
		fs.FillID = ""
		if (errF == nil) != (errS == nil) || (errS == nil && lf != fs) {
			t.Fatalf("lean OrderFilled %q: fast %+v, %v; json %+v, %v", b, lf, errF, fs, errS)
		}
		var fa, sa OrderAccepted
		errF, errS = DecodeOrderAccepted(b, &fa), json.Unmarshal(b, &sa)
		if (errF == nil) != (errS == nil) || (errS == nil && fa != sa) {
			t.Fatalf("OrderAccepted %q: fast %+v, %v; json %+v, %v", b, fa, errF, sa, errS)
		}
		checkPredecoded(t, b)
		checkBatch(t, b)
	})
}

// checkBatch: a replay's batch decoding (Predecoder.Batch, in-order path
// first) gives what encoding/json gives, for every hot type.
func checkBatch(t *testing.T, b []byte) {
	t.Helper()
	batch := []Event{{Type: TypeOrderRequested, Data: b}, {Type: TypeOrderFilled, Data: b}, {Type: TypeOrderAccepted, Data: b}}
	NewPredecoder().Batch(batch)
	var r1, r2 OrderRequested
	e1, e2 := batch[0].Decode(&r1), json.Unmarshal(b, &r2)
	if (e1 == nil) != (e2 == nil) || (e2 == nil && r1 != r2) {
		t.Fatalf("batch OrderRequested %q: %+v, %v; json %+v, %v", b, r1, e1, r2, e2)
	}
	var f1, f2 OrderFilled
	e1, e2 = batch[1].Decode(&f1), json.Unmarshal(b, &f2)
	if (e1 == nil) != (e2 == nil) || (e2 == nil && f1 != f2) {
		t.Fatalf("batch OrderFilled %q: %+v, %v; json %+v, %v", b, f1, e1, f2, e2)
	}
	var a1, a2 OrderAccepted
	e1, e2 = batch[2].Decode(&a1), json.Unmarshal(b, &a2)
	if (e1 == nil) != (e2 == nil) || (e2 == nil && a1 != a2) {
		t.Fatalf("batch OrderAccepted %q: %+v, %v; json %+v, %v", b, a1, e1, a2, e2)
	}
}

// checkPredecoded: an event's Decode gives the same answer whether or not
// Predecode ran first, for every hot type, with or without an Interner.
func checkPredecoded(t *testing.T, b []byte) {
	t.Helper()
	for _, typ := range []string{TypeOrderRequested, TypeOrderFilled, TypeOrderAccepted} {
		plain := Event{Type: typ, Data: b}
		pre := Event{Type: typ, Data: b}
		pre.Predecode(jsonscan.Interner{})
		for _, in := range []jsonscan.Interner{nil, {}} {
			var r1, r2 OrderRequested
			e1, e2 := plain.DecodeInterned(&r1, in), pre.DecodeInterned(&r2, in)
			if in != nil { // a lean decode leaves the ids out; a predecoded one may keep them
				r2.ClientOrderID, r2.IdempotencyKey, r2.IdempotencyFingerprint = "", "", ""
			}
			if (e1 == nil) != (e2 == nil) || r1 != r2 {
				t.Fatalf("%s %q as OrderRequested: plain %+v, %v; predecoded %+v, %v", typ, b, r1, e1, r2, e2)
			}
			var f1, f2 OrderFilled
			e1, e2 = plain.DecodeInterned(&f1, in), pre.DecodeInterned(&f2, in)
			if in != nil {
				f2.FillID = ""
			}
			if (e1 == nil) != (e2 == nil) || f1 != f2 {
				t.Fatalf("%s %q as OrderFilled: plain %+v, %v; predecoded %+v, %v", typ, b, f1, e1, f2, e2)
			}
			var a1, a2 OrderAccepted
			e1, e2 = plain.DecodeInterned(&a1, in), pre.DecodeInterned(&a2, in)
			if (e1 == nil) != (e2 == nil) || a1 != a2 {
				t.Fatalf("%s %q as OrderAccepted: plain %+v, %v; predecoded %+v, %v", typ, b, a1, e1, a2, e2)
			}
		}
	}
}

// TestPredecodeBatch: a replay's batch decoding (interning through the
// last strings of each field) gives every event exactly what decoding it
// alone gives, whatever the fields of the events before it.
func TestPredecodeBatch(t *testing.T) {
	payloads := []struct{ typ, data string }{
		{TypeOrderRequested, `{"orderId":1,"exchange":"binance","pair":"USDT-BTC","side":"buy","kind":"limit","amount":"1","price":"100","clientOrderId":"c-1"}`},
		{TypeOrderRequested, `{"orderId":2,"exchange":"binance","pair":"USDT-BTC","side":"buy","kind":"limit","amount":"2","price":"101","clientOrderId":"c-2"}`},
		{TypeOrderRequested, `{"orderId":3,"exchange":"kraken","pair":"USDT-ETH","side":"sell","kind":"market","amount":"3"}`},
		{TypeOrderRequested, `{"orderId":4,"exchange":"","pair":"","side":"","kind":""}`},
		{TypeOrderRequested, `{"orderId":5,"exchange":"binance","pair":"USDT-BTC"}`},
		{TypeOrderAccepted, `{"exchangeOrderId":"x-1"}`},
		{TypeOrderFilled, `{"fillId":"f1","price":"100","quantity":"0.5","fee":"0.001","feeAsset":"USDT","seq":1}`},
		{TypeOrderFilled, `{"fillId":"f2","price":"100","quantity":"0.5","fee":"0.001","feeAsset":"USDT","seq":2}`},
		{TypeOrderFilled, `{"fillId":"f3","price":"100","quantity":"0.5","fee":"0.001","feeAsset":"BNB"}`},
		{TypeOrderFilled, `{"fillId":"f4","price":"100","quantity":"0.5","fee":"0","feeAsset":""}`},
		{TypeOrderRequested, `{"orderId":6,"exchange":"binance","pair":"USDT-B\u0054C","side":"buy"}`}, // escapes: encoding/json's path
		{TypeOrderRequested, `{"orderId":7,"exchange":"binance","pair":"USDT-BTC","side":"buy","kind":"limit"}`},
	}
	var evs []Event
	for round := 0; round < 3; round++ {
		for i, p := range payloads {
			if (i+round)%2 == 0 || round == 0 {
				evs = append(evs, Event{Type: p.typ, Data: []byte(p.data)})
			}
		}
	}
	batch := append([]Event(nil), evs...)
	NewPredecoder().Batch(batch)
	for i := range evs {
		alone := evs[i]
		alone.Predecode(nil)
		var r1, r2 OrderRequested
		e1, e2 := alone.Decode(&r1), batch[i].Decode(&r2)
		if (e1 == nil) != (e2 == nil) || r1 != r2 {
			t.Fatalf("event %d (%s) as OrderRequested: alone %+v, %v; in the batch %+v, %v", i, evs[i].Data, r1, e1, r2, e2)
		}
		var f1, f2 OrderFilled
		e1, e2 = alone.Decode(&f1), batch[i].Decode(&f2)
		if (e1 == nil) != (e2 == nil) || f1 != f2 {
			t.Fatalf("event %d (%s) as OrderFilled: alone %+v, %v; in the batch %+v, %v", i, evs[i].Data, f1, e1, f2, e2)
		}
	}
}

// BenchmarkPredecodeBatch is the replay's decoding of the hot payloads
// (Predecoder.Batch) on batches shaped like a trading log: each order's
// OrderRequested, OrderAccepted and OrderFilled, as encoding/json wrote them.
func BenchmarkPredecodeBatch(b *testing.B) {
	evs := benchEvents()
	pd := NewPredecoder()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pd.Batch(evs)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(evs)), "ns/event")
}

// benchEvents returns a batch of order events: each order's
// OrderRequested, OrderAccepted and OrderFilled, as encoding/json wrote them,
// pairs and sides alternating.
func benchEvents() []Event {
	const orders = 1024 / 3
	var evs []Event
	for id := int64(1); id <= orders; id++ {
		side, pair := Buy, "USDT-BTC"
		if id%2 == 1 {
			side, pair = Sell, "USDT-ETH"
		}
		price := decimal.DecimalFromInt(id%50 + 100)
		evs = append(evs,
			eventOf(TypeOrderRequested, OrderRequested{OrderID: id, Exchange: "binance", Pair: pair, Side: side, Kind: KindLimit,
				Amount: decimal.MustDecimal("0.5"), Price: price, ClientOrderID: "c" + strconv.FormatInt(id, 10)}),
			eventOf(TypeOrderAccepted, OrderAccepted{ExchangeOrderID: "x" + strconv.FormatInt(id, 10)}),
			eventOf(TypeOrderFilled, OrderFilled{FillID: "f" + strconv.FormatInt(id, 10), Price: price, Quantity: decimal.MustDecimal("0.5"),
				Fee: decimal.MustDecimal("0.05"), FeeAsset: "USDT", Seq: uint64(id)}))
	}
	return evs
}

func eventOf(typ string, payload any) Event {
	data, err := json.Marshal(payload)
	if err != nil {
		panic(err)
	}
	return Event{Type: typ, Data: data}
}
