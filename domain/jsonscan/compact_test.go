package jsonscan

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestIsFlatCompact(t *testing.T) {
	for _, c := range []struct {
		in   string
		want bool
	}{
		{`{}`, true},
		{`{"a":1}`, true},
		{`{"orderId":12,"pair":"USDT-BTC","amount":"1.5","x":-0.5e-3,"t":true,"f":false,"n":null}`, true},
		{`{"a":1,"b":"x"}`, true},
		{`{ "a":1}`, false},   // whitespace: compacting changes it
		{`{"a":[1]}`, false},  // nested: the slow path decides
		{`{"a":{}}`, false},   // nested
		{`{"a":"\n"}`, false}, // escape
		{`{"a":"é"}`, false},  // non-ASCII
		{`{"a":01}`, false},   // not a JSON number
		{`{"a":1.}`, false},   // not a JSON number
		{`{"a":-}`, false},    // not a JSON number
		{`{"a":1,}`, false},   // trailing comma
		{`{"a":1}x`, false},   // trailing bytes
		{`{"a":1`, false},     // cut
		{`[1]`, false},        // not an object
		{`{"a":tru}`, false},  // cut literal
		{`{"a"1}`, false},     // no colon
	} {
		if got := isFlatCompact([]byte(c.in)); got != c.want {
			t.Errorf("isFlatCompact(%s) = %v, want %v", c.in, got, c.want)
		}
	}
}

// Whatever isFlatCompact accepts, json.Compact accepts and leaves as it is.
func FuzzIsFlatCompact(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `{"a":"b","c":-1.5E+3,"d":null}`, `{"a":1}x`, `{ "a" : 1 }`, `{"a":[1,2]}`, `{"a":"\u00e9"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !isFlatCompact(b) {
			return
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, b); err != nil {
			t.Fatalf("accepted %q, which json.Compact refuses: %v", b, err)
		}
		if !bytes.Equal(buf.Bytes(), b) {
			t.Fatalf("accepted %q, which json.Compact changes to %q", b, buf.Bytes())
		}
		got := map[string]string{}
		FlatObject(b, func(k, v []byte) { got[string(k)] = string(v) })
		var want map[string]json.RawMessage
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatalf("accepted %q, which json.Unmarshal refuses: %v", b, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%q: fields %v, json %v", b, got, want)
		}
		for k, v := range want {
			if got[k] != string(v) {
				t.Fatalf("%q: field %q = %s, json %s", b, k, got[k], v)
			}
		}
	})
}

// FlatObject hands over each key and raw value as encoding/json reads them.
func TestFlatObjectFields(t *testing.T) {
	b := []byte(`{"exch":"binance","amt":0.001,"price":"1000","x":null,"amt":2}`)
	got := map[string]string{}
	if !FlatObject(b, func(k, v []byte) { got[string(k)] = string(v) }) {
		t.Fatal("not read")
	}
	var want map[string]json.RawMessage
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("fields %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != string(v) {
			t.Fatalf("field %s = %s, want %s", k, got[k], v)
		}
	}
}
