package domain

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tradeledger/tradeledger/domain/jsonscan"
)

// CheckJSON refuses what encoding/json lets through silently: repeated keys
// at any depth (also when one is escaped), invalid UTF-8 and data after
// the value (including a stray closing brace, which json.Decoder.More
// misses).
func TestCheckJSON(t *testing.T) {
	tests := []struct {
		in, err string // err: substring of the message, "" for valid
	}{
		{`{"a":1,"b":{"c":[1,{"d":2}]}}`, ""},
		{` [ ] `, ""},
		{`"x"`, ""},
		{`{"a":1,"A":2}`, ""}, // keys are case-sensitive
		{`{"a":1,"a":2}`, `duplicate key "a"`},
		{`{"data":{"amt":1,"pair":"X","amt":2}}`, `duplicate key "data.amt"`},
		{`{"x":[{"k":1},{"k":1,"k":2}]}`, `duplicate key "x[1].k"`},
		{`{"a":1,"\u0061":2}`, `duplicate key "a"`},
		{`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k3":3}`, `duplicate key "k3"`},
		{`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17}`, ""},
		{"{\"a\":\"\xff\"}", `field "a" is not valid UTF-8`},
		{"{\"data\":{\"exch\":\"binance\",\"pair\":\"USDT-BTC\xff\",\"amt\":1}}", `field "data.pair" is not valid UTF-8`},
		{"{\"x\":[\"ok\",{\"k\":\"\xc3\x28\"}]}", `field "x[1].k" is not valid UTF-8`},
		{"{\"data\":{\"p\xffir\":1}}", `a key in "data" is not valid UTF-8`},
		{"{\"\xff\":1}", "a key of the top-level object is not valid UTF-8"},
		{"\"\xff\"", "the top-level string is not valid UTF-8"},
		{"{\"a\":1,\"b\":\xff}", "not valid UTF-8 at byte 11"},
		{`{"a":1}}`, "trailing data"},
		{`{"a":1} {"b":2}`, "trailing data"},
		{`{"a":1}]`, "trailing data"},
		{`{"a":1`, "malformed JSON"},
		{`{"a" 1}`, "malformed JSON at byte"},
		{``, "malformed JSON"},
	}
	for _, tc := range tests {
		if err := jsonscan.CheckJSON([]byte(tc.in)); !invalidAsWanted(err, tc.err) {
			t.Errorf("CheckJSON(%s) = %v, want EINVALID with %q (\"\": nil)", tc.in, err, tc.err)
		}
	}
}

// DecodeJSONObject refuses a stray closing brace after the object, which a
// decoder that trusts json.Decoder.More accepts ('}' reads as the end).
func TestDecodeJSONObjectTrailingBrace(t *testing.T) {
	for _, in := range []string{`{"a":1}}`, `{"a":1}]`, `{"a":1} x`} {
		if _, err := DecodeJSONObject([]byte(in)); ErrorCode(err) != EINVALID {
			t.Errorf("DecodeJSONObject(%s) = %v, want EINVALID", in, err)
		}
	}
	if _, err := DecodeJSONObject([]byte("{\"a\":1}\n")); err != nil {
		t.Errorf("trailing newline: %v", err)
	}
}

// duplicateByTokens is the reference for FuzzCheckJSON: encoding/json's
// tokenizer, one key set per open object.
func duplicateByTokens(b []byte) (bool, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	type frame struct {
		obj    bool
		keys   map[string]bool
		expKey bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				if top != nil && top.obj {
					top.expKey = true
				}
				stack = append(stack, &frame{obj: d == '{', keys: map[string]bool{}, expKey: true})
			default:
				stack = stack[:len(stack)-1]
			}
			continue
		}
		if top != nil && top.obj {
			if top.expKey {
				k := tok.(string)
				if top.keys[k] {
					return true, nil
				}
				top.keys[k] = true
				top.expKey = false
			} else {
				top.expKey = true
			}
		}
	}
}

// FuzzCheckJSON: CheckJSON accepts exactly the valid single UTF-8 values
// without a repeated key, as encoding/json's tokenizer sees them.
func FuzzCheckJSON(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `{"a":{"b":[1,{"c":1,"c":2}]}}`, `{"\u0061":1,"a":1}`, `[1,2]`, `{"a":"\\"}`, `{"a":1}}`, "\"\xff\"", `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		err := jsonscan.CheckJSON(b)
		if !utf8.Valid(b) || !json.Valid(b) {
			if err == nil {
				t.Fatalf("CheckJSON(%q) = nil for invalid input", b)
			}
			return
		}
		dup, terr := duplicateByTokens(b)
		if terr != nil {
			t.Fatalf("tokenizer: %v on valid %q", terr, b)
		}
		if dup != (err != nil) {
			t.Fatalf("CheckJSON(%q) = %v, tokenizer finds duplicate: %v", b, err, dup)
		}
	})
}

// TestCheckJSONLoneSurrogate: a \u escape of half a UTF-16 pair without
// the other half is no character (encoding/json makes it U+FFFD without a
// word): refused, naming where; a whole pair, and other escapes, pass.
func TestCheckJSONLoneSurrogate(t *testing.T) {
	for body, want := range map[string]string{
		`{"config":{"exchanges":{"binance":{"secret":"\ud800"}}}}`: `field "config.exchanges.binance.secret" holds a lone surrogate escape (\ud800)`,
		`{"a":["x","ab\uDFFFc"]}`:                                  `field "a[1]" holds a lone surrogate escape (\uDFFF)`,
		`{"a":"\ud83d\u0041"}`:                                     `field "a" holds a lone surrogate escape (\ud83d)`,
		`{"a":{"\ud800":1}}`:                                       `a key in "a" holds a lone surrogate escape (\ud800)`,
		`"\udc00"`:                                                 `the top-level string holds a lone surrogate escape (\udc00)`,
		`{"a":"\\ud800"}`:                                          "",
		`{"a":"\ud83d\ude00 \u00e9 \" \\ \n"}`:                     "",
		`{"secret":"\ud83d\ude00\ud83d\ude00"}`:                    "",
	} {
		if err := jsonscan.CheckJSON([]byte(body)); !invalidAsWanted(err, want) {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
}

// invalidAsWanted reports whether err is what a test case wants: nil when
// want is "", else EINVALID with a message containing want.
func invalidAsWanted(err error, want string) bool {
	if want == "" {
		return err == nil
	}
	return ErrorCode(err) == EINVALID && strings.Contains(ErrorMessage(err), want)
}
