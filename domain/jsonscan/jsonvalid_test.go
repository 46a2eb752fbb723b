package jsonscan

import (
	"encoding/json"
	"math/rand"
	"strings"
	"testing"
)

// jsonValidCases are texts at the edges of JSON's grammar.
var jsonValidCases = []string{
	``, ` `, `{}`, `[]`, ` { } `, `[ ]`, `{"a":1}`, `{"a":1,}`, `{,"a":1}`, `{"a" : 1 , "b":[1,2,{"c":null}]}`,
	`{"a"}`, `{"a":}`, `{a:1}`, `{"a":1 "b":2}`, `[1,2`, `[1,,2]`, `[,]`, `[1]]`, `{}}`, `{}{}`, `1 2`, `"a" "b"`,
	`0`, `-0`, `-`, `01`, `1.`, `.1`, `1.5e`, `1.5e+`, `1.5e+3`, `1E-7`, `-12.340e10`, `+1`, `1e5.2`, `00`, `-01`, `0.0`,
	`true`, `false`, `null`, `tru`, `nul`, `nulll`, `True`, `true false`, ` true `,
	`"abc"`, `"a\"b"`, `"\\"`, `"\/\b\f\n\r\t"`, `"\u00e9"`, `"\u00E9"`, `"\u00g9"`, `"\u00"`, `"\x"`, `"a`, `"\`,
	"\"a\tb\"", "\"a\x01b\"", "\"\xff\xfe\"", "\"é\"", "\t[1]\r\n", "[1]\v", "\x00", `[`, `{`, `]`, `}`, `"`, `:`, `,`,
	`{"a":{"b":{"c":[[[[]]]]}}}`, `{"a":[1,2,3],"b":"x","c":true,"d":null,"e":-1.5e-3}`,
	`{"orderId":1,"price":"27123.45","side":"buy"}`, `[{"a":1},{"b":2}]`, `[{"a":1},{"b":2},]`, `{"a":1}x`,
}

func TestValidJSONAgreesWithEncodingJSON(t *testing.T) {
	cases := append([]string(nil), jsonValidCases...)
	// Nesting around the fallback's depth, and past json.Valid's own limit.
	for _, d := range []int{jsonValidMaxDepth - 1, jsonValidMaxDepth, jsonValidMaxDepth + 1, 10000, 10001} {
		cases = append(cases, strings.Repeat("[", d)+strings.Repeat("]", d), strings.Repeat(`{"a":`, d)+"1"+strings.Repeat("}", d),
			strings.Repeat("[", d)+strings.Repeat("]", d-1))
	}
	for _, c := range cases {
		if got, want := ValidJSON([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("ValidJSON(%.60q) = %v, json.Valid says %v", c, got, want)
		}
	}
	// Every text one edit away from the cases: a byte changed, removed or
	// doubled, with the bytes JSON's grammar turns on.
	alphabet := []byte("{}[]\":,.-+0129eEtrufalsn\\u/ \t\n\x01\x80a")
	rng := rand.New(rand.NewSource(1))
	for n := 0; n < 200000; n++ {
		b := []byte(jsonValidCases[rng.Intn(len(jsonValidCases))])
		for k := rng.Intn(3) + 1; k > 0 && len(b) > 0; k-- {
			i := rng.Intn(len(b))
			switch rng.Intn(3) {
			case 0:
				b[i] = alphabet[rng.Intn(len(alphabet))]
			case 1:
				b = append(b[:i], b[i+1:]...)
			default:
				b = append(b[:i+1], b[i:]...)
			}
		}
		if got, want := ValidJSON(b), json.Valid(b); got != want {
			t.Fatalf("ValidJSON(%q) = %v, json.Valid says %v", b, got, want)
		}
	}
}

func FuzzValidJSON(f *testing.F) {
	for _, c := range jsonValidCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := ValidJSON(b), json.Valid(b); got != want {
			t.Fatalf("ValidJSON(%q) = %v, json.Valid says %v", b, got, want)
		}
	})
}

// BenchmarkValidJSON checks an OrderRequested payload with ValidJSON and
// with json.Valid ("ratio" = json.Valid's time ÷ ValidJSON's).
func BenchmarkValidJSON(b *testing.B) {
	data := []byte(`{"orderId":1700000000123,"exchange":"binance","pair":"USDT-BTC","side":"buy","kind":"limit","amount":"0.5","price":"27123.45","clientOrderId":"c1700000000123"}`)
	var fast, std float64
	b.Run("ValidJSON", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for i := 0; i < b.N; i++ {
			if !ValidJSON(data) {
				b.Fatal("invalid")
			}
		}
		fast = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	b.Run("json.Valid", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for i := 0; i < b.N; i++ {
			if !json.Valid(data) {
				b.Fatal("invalid")
			}
		}
		std = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		b.ReportMetric(std/fast, "ratio")
	})
}
