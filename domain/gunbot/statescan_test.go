package gunbot

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// sameDecode fails t unless decodeStateOrders decodes in as the reference
// does; it reports whether the scanner took it.
func sameDecode(t testing.TB, in []byte) bool {
	t.Helper()
	_, scanned := scanStateOrders(in)
	got, gotErr := decodeStateOrders(in)
	want, wantErr := decodeStateOrdersJSON(in)
	if (gotErr != nil) != (wantErr != nil) || len(got) != len(want) {
		t.Fatalf("%q: got %d orders, %v; want %d, %v", in, len(got), gotErr, len(want), wantErr)
	}
	for i := range got {
		g, w := got[i], want[i]
		if (g.err != nil) != (w.err != nil) || fmt.Sprintf("%#v", g.stateOrder) != fmt.Sprintf("%#v", w.stateOrder) {
			t.Fatalf("%q: order %d = %#v (%v), want %#v (%v)", in, i, g.stateOrder, g.err, w.stateOrder, w.err)
		}
	}
	return scanned
}

var stateScanCases = []string{
	`{"orders": []}`, `{}`, `{"orders": null}`, `[]`, `{"orders": [`, `{"orders": []} x`, ` {"orders": []}  `, `null`,
	`{"orders": [{"time": 1700000000000, "pair": "USDT-BTC", "type": "buy", "rate": 30000.5, "amount": 1e-3, "id": 18446744073709551615, "cost": 1}]}`,
	`{"a": {"orders": [1]}, "orders": [{"time": 1, "id": "x-1"}, {"id": null}, {"id": -12.5E+3}, {}], "b": [1, "]", {"c": "\"}"}], "d": -1.5e3, "e": true, "f": null}`,
	`{"orders": [{"time": "1700000000000", "id": "a\"b\u00e9"}]}`,
	`{"orders": [{"ID": 7, "Pair": "X"}]}`, `{"Orders": [{"time": 1}]}`, `{"orderſ": [{"time": 1}]}`, `{"orders": [{"pair": "é"}]}`,
	`{"orders": [{"id": true}, {"id": {"a": 1}}, {"id": [1, 2]}, {"id": false}]}`,
	`{"orders": [{"time": {}}, {"time": 1, "id": 5}, 7, {"rate": "abc"}, {"rate": "12.5"}]}`,
	`{"orders": [{"time": 1, "id": 1}], "orders": [{"time": 2, "id": 2}]}`,
	`{"orders": [{"time": 1, "time": 2}]}`, `{"orders": [null, {"time": 3}]}`, `{"orders": [{"time": null, "pair": null}]}`,
	`{"orders": [{"x": 1, "time": 2}]}`, `{"orders": {"time": 1}}`, `{"orders": 5}`, "{\"orders\": [{\"pair\": \"a\xffb\"}]}",
}

// TestScanStateOrders: the scanner takes Gunbot's plain shape and decodes
// it as encoding/json does; everything else goes to encoding/json.
func TestScanStateOrders(t *testing.T) {
	for _, in := range stateScanCases {
		sameDecode(t, []byte(in))
	}
	plain := []byte(`{"orders": [{"time": 1700000000000, "pair": "USDT-BTC", "type": "buy", "rate": 30000.5, "amount": 0.002, "id": 123, "cost": 60}], "balances": {"BTC": "1"}}`)
	if !sameDecode(t, plain) {
		t.Fatal("the plain shape was not scanned")
	}
	// Random edits of a plain file: whatever the scanner takes, it
	// decodes as encoding/json does.
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte(`{}[]",: -.0123456789eEtruefalsnlidpmcyx\é` + "\t\n")
	for i := 0; i < 20000; i++ {
		b := bytes.Clone(plain)
		for n := r.IntN(4); n >= 0; n-- {
			j := r.IntN(len(b))
			switch r.IntN(3) {
			case 0:
				b[j] = alphabet[r.IntN(len(alphabet))]
			case 1:
				b = append(b[:j], b[j+1:]...)
			default:
				b = append(b[:j], append([]byte{alphabet[r.IntN(len(alphabet))]}, b[j:]...)...)
			}
		}
		sameDecode(t, b)
	}
}

func FuzzScanStateOrders(f *testing.F) {
	for _, in := range stateScanCases {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) { sameDecode(t, in) })
}
