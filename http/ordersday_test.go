package http

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// orders/day encodes its records itself; the body is byte for byte what
// writeJSON (encoding/json) gives for the same response.
func TestOrdersDayJSONIsEncodingJSON(t *testing.T) {
	l := benchLedger(t, 3000, 3)
	keys := []string{"binance/USDT-C0", "binance/USDT-C2", "binance/USDT-C9"}
	from := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	out := ordersDayResponse{Days: []string{"2024-01-01"}, Orders: []int{7}, CloseOrders: []int{0}}
	out.Summaries, out.OrderRecords, out.CloseOrderRecords = l.Day(keys, out.Days[0], from.UnixMilli(), from.Add(time.Hour).UnixMilli())
	if len(out.OrderRecords) == 0 || len(out.CloseOrderRecords) == 0 {
		t.Fatalf("%d records, %d closing: the fixture should have both", len(out.OrderRecords), len(out.CloseOrderRecords))
	}
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		t.Fatal(err)
	}
	got, err := out.appendJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("appendJSON:\n%s\nencoding/json:\n%s", got, want.Bytes())
	}
	empty := ordersDayResponse{Days: []string{"2024-01-01"}, Orders: []int{0}, CloseOrders: []int{0}}
	empty.Summaries, empty.OrderRecords, empty.CloseOrderRecords = l.Day(nil, "2024-01-01", 0, 1)
	want.Reset()
	_ = enc.Encode(empty)
	if got, _ := empty.appendJSON(nil); !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("appendJSON:\n%s\nencoding/json:\n%s", got, want.Bytes())
	}
}
