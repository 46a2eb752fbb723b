package domain

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain/secrets"
)

const decideWallet = "wallet-0123456789abcdef"

var decideClock = NewManualClock(time.UnixMilli(1_700_000_000_000))

func decideDoc() map[string]any {
	return map[string]any{
		"bot":       map[string]any{"service_wallet": decideWallet, "SIMULATOR": true},
		"exchanges": map[string]any{"binance": map[string]any{"isEncrypted": false, "key": "", "secret": "", "delay": 10}},
		"pairs":     map[string]any{"binance": map[string]any{"USDT-BTC": map[string]any{"strategy": "gain", "enabled": true, "override": map[string]any{}}}},
		"strategies": map[string]any{
			"gain":   map[string]any{"GAIN": 1},
			"manual": map[string]any{},
		},
		"GUI": map[string]any{},
	}
}

// decideState is the state of a configured service: decideDoc, and
// binance's key and secret stored as the ciphertexts "c-key", "c-secret".
func decideState(t *testing.T) ConfigState {
	t.Helper()
	cfg, err := ConfigFromMap(decideDoc())
	if err != nil {
		t.Fatal(err)
	}
	return ConfigState{Config: cfg, Credentials: map[string]map[string]string{"binance": {"key": "c-key", "secret": "c-secret"}}}
}

func decideBox(t *testing.T) *secrets.SecretBox {
	t.Helper()
	box, err := secrets.NewSecretBox([]byte(strings.Repeat("k", 32)))
	if err != nil {
		t.Fatal(err)
	}
	return box
}

// types lists the events' types, and refused the error's code and message.
func eventTypes(events []Event) string {
	types := make([]string, len(events))
	for i := range events {
		types[i] = events[i].Type
	}
	return strings.Join(types, ",")
}

func checkDecision(t *testing.T, name string, events []Event, err error, wantTypes, wantCode, wantMsg string) {
	t.Helper()
	if got := ErrorCode(err); got != wantCode {
		t.Fatalf("%s: code=%q (%v), want %q", name, got, err, wantCode)
	}
	if wantMsg != "" && !strings.Contains(ErrorMessage(err), wantMsg) {
		t.Fatalf("%s: message=%q, want it to contain %q", name, ErrorMessage(err), wantMsg)
	}
	if got := eventTypes(events); got != wantTypes {
		t.Fatalf("%s: events=%q, want %q", name, got, wantTypes)
	}
}

func TestDecideConfigEdits(t *testing.T) {
	st := decideState(t)
	var zero ConfigState
	cases := []struct {
		name              string
		decide            func(ConfigState) ([]Event, error)
		st                ConfigState
		types, code, text string
	}{
		{"pair add", func(st ConfigState) ([]Event, error) {
			return DecidePairAdd(st, PairConfig{Exchange: "binance", Pair: "USDT-ETH", Strategy: "manual", Enabled: true}, decideClock)
		}, st, TypePairAdded, "", ""},
		{"pair add unknown exchange", func(st ConfigState) ([]Event, error) {
			return DecidePairAdd(st, PairConfig{Exchange: "kraken", Pair: "USDT-ETH", Strategy: "manual"}, decideClock)
		}, st, "", EINVALID, `exchange "kraken" is not in config.exchanges`},
		{"pair add unknown strategy", func(st ConfigState) ([]Event, error) {
			return DecidePairAdd(st, PairConfig{Exchange: "binance", Pair: "USDT-ETH", Strategy: "nope"}, decideClock)
		}, st, "", EINVALID, `settings.strategy: strategy "nope" does not exist`},
		{"pair add before init", func(st ConfigState) ([]Event, error) {
			return DecidePairAdd(st, PairConfig{Exchange: "binance", Pair: "USDT-ETH", Strategy: "manual"}, decideClock)
		}, zero, "", EUNAVAILABLE, "not initialized"},
		{"pair remove", func(st ConfigState) ([]Event, error) {
			return DecidePairRemove(st, "binance", "USDT-BTC", decideClock)
		}, st, TypePairRemoved, "", ""},
		{"pair remove unknown", func(st ConfigState) ([]Event, error) {
			return DecidePairRemove(st, "binance", "USDT-XRP", decideClock)
		}, st, "", ENOTFOUND, "pair USDT-XRP is not configured on exchange binance"},
		{"strategy add", func(st ConfigState) ([]Event, error) {
			return DecideStrategyAdd(st, "grid", map[string]any{"STEP": json.Number("1")}, decideClock)
		}, st, TypeStrategyAdded, "", ""},
		{"strategy add bad name", func(st ConfigState) ([]Event, error) {
			return DecideStrategyAdd(st, "", nil, decideClock)
		}, st, "", EINVALID, ""},
		{"strategy remove in use", func(st ConfigState) ([]Event, error) {
			return DecideStrategyRemove(st, "gain", decideClock)
		}, st, "", ECONFLICT, `strategy "gain" is used by pair USDT-BTC on binance`},
		{"strategy remove unknown", func(st ConfigState) ([]Event, error) {
			return DecideStrategyRemove(st, "nope", decideClock)
		}, st, "", ENOTFOUND, ""},
		{"strategy remove", func(st ConfigState) ([]Event, error) {
			return DecideStrategyRemove(st, "manual", decideClock)
		}, st, TypeStrategyRemoved, "", ""},
	}
	for _, tc := range cases {
		events, err := tc.decide(tc.st)
		checkDecision(t, tc.name, events, err, tc.types, tc.code, tc.text)
	}
}

func TestDecidePairAddPayload(t *testing.T) {
	events, err := DecidePairAdd(decideState(t), PairConfig{Exchange: "binance", Pair: "USDT-ETH", Strategy: "gain", Enabled: false,
		Override: map[string]any{"GAIN": json.Number("2")}}, decideClock)
	if err != nil {
		t.Fatal(err)
	}
	var d PairAdded
	if err := events[0].Decode(&d); err != nil {
		t.Fatal(err)
	}
	if d.Exchange != "binance" || d.Pair != "USDT-ETH" || d.Strategy != "gain" || d.Enabled || string(d.Override) != `{"GAIN":2}` {
		t.Fatalf("payload=%+v override=%s", d, d.Override)
	}
	if got, want := events[0].Time, int64(1_700_000_000_000); got != want {
		t.Fatalf("time=%d, want the clock's %d", got, want)
	}
}

func withExchange(entry map[string]any) map[string]any {
	doc := decideDoc()
	doc["exchanges"] = map[string]any{"binance": entry}
	return doc
}

func TestDecideConfigUpdate(t *testing.T) {
	box := decideBox(t)
	rules := ConfigRules{Clock: decideClock, Secrets: box}
	noSim := decideDoc()
	noSim["bot"].(map[string]any)["SIMULATOR"] = false
	newWallet := decideDoc()
	newWallet["bot"].(map[string]any)["service_wallet"] = "another-wallet-0123456789"
	cases := []struct {
		name              string
		doc               map[string]any
		proof             string
		rules             ConfigRules
		types, code, text string
	}{
		{"secrets kept by mask", withExchange(map[string]any{"key": secrets.Mask, "secret": secrets.Mask}), "", rules, TypeConfigReplaced, "", ""},
		{"secrets kept by ciphertext", withExchange(map[string]any{"key": "c-key", "secret": "c-secret"}), "", rules, TypeConfigReplaced, "", ""},
		{"new secret sealed", withExchange(map[string]any{"key": "k2", "secret": secrets.Mask}), "", rules, TypeConfigReplaced + "," + TypeExchangeKeysSet, "", ""},
		{"secrets cleared", withExchange(map[string]any{"key": "", "secret": ""}), "", rules, TypeConfigReplaced + "," + TypeExchangeKeysSet, "", ""},
		{"mask without stored secret", withExchange(map[string]any{"key": secrets.Mask, "secret": secrets.Mask, "password": secrets.Mask}), "", rules, "", EINVALID, "is the mask"},
		{"isEncrypted foreign secret", withExchange(map[string]any{"isEncrypted": true, "key": "theirs", "secret": secrets.Mask}), "", rules, "", EINVALID, "is marked isEncrypted"},
		{"no master key", withExchange(map[string]any{"key": "k2", "secret": secrets.Mask}), "", ConfigRules{Clock: decideClock}, "", EUNAVAILABLE, ""},
		{"exchanges not an object", map[string]any{"bot": map[string]any{}, "exchanges": []any{}}, "", rules, "", EINVALID, "config.exchanges must be an object"},
		{"real trading without connector", noSim, "", rules, "", EINVALID, `exchange "binance" has no real connector`},
		{"real trading with connector", noSim, "", ConfigRules{Clock: decideClock, Secrets: box,
			RealConnector: func(Config, string) bool { return true }}, TypeConfigReplaced + "," + TypeExchangeKeysSet, "", ""},
		{"new wallet without proof", newWallet, "", rules, "", EINVALID, "wallet is required"},
		{"new wallet wrong proof", newWallet, "nope", rules, "", EUNAUTHORIZED, "wallet does not match"},
		{"new wallet with proof", newWallet, decideWallet, rules, TypeConfigReplaced + "," + TypeExchangeKeysSet, "", ""},
	}
	for _, tc := range cases {
		before, _ := json.Marshal(tc.doc)
		events, err := DecideConfigUpdate(decideState(t), tc.doc, tc.proof, tc.rules)
		checkDecision(t, tc.name, events, err, tc.types, tc.code, tc.text)
		if after, _ := json.Marshal(tc.doc); string(after) != string(before) {
			t.Fatalf("%s: the request's document was modified", tc.name)
		}
	}
	if _, err := DecideConfigUpdate(ConfigState{}, decideDoc(), "", rules); ErrorCode(err) != EUNAVAILABLE {
		t.Fatalf("before init: err=%v, want EUNAVAILABLE", err)
	}
}

// The events hold no secret in clear: the new key is sealed with the box,
// the replaced document has none, and a kept secret keeps its ciphertext.
func TestDecideConfigUpdateSealsSecrets(t *testing.T) {
	box := decideBox(t)
	events, err := DecideConfigUpdate(decideState(t), withExchange(map[string]any{"key": "new-key-in-clear", "secret": secrets.Mask}), "", ConfigRules{Clock: decideClock, Secrets: box})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if strings.Contains(string(e.Data), "new-key-in-clear") {
			t.Fatalf("%s holds the secret in clear: %s", e.Type, e.Data)
		}
	}
	var k ExchangeKeysSet
	if err := events[1].Decode(&k); err != nil {
		t.Fatal(err)
	}
	if k.Fields["secret"] != "c-secret" {
		t.Fatalf("masked secret=%q, want the stored c-secret", k.Fields["secret"])
	}
	if plain, err := box.Open(k.Fields["key"]); err != nil || plain != "new-key-in-clear" {
		t.Fatalf("sealed key opens to %q, %v", plain, err)
	}
	var r ConfigReplaced
	if err := events[0].Decode(&r); err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseConfig(r.Config)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Wallet() != decideWallet {
		t.Fatalf("wallet=%q, want the current one kept", cfg.Wallet())
	}
}

func TestDecideLicenseKeysEdit(t *testing.T) {
	rules := ConfigRules{Clock: decideClock, Secrets: decideBox(t)}
	noCreds := decideState(t)
	noCreds.Credentials = nil
	newKeys := map[string]any{"binance": map[string]any{"key": "k2", "secret": "s2"}}
	cases := []struct {
		name              string
		st                ConfigState
		edit              LicenseKeysEdit
		types, code, text string
	}{
		{"accepted", decideState(t), LicenseKeysEdit{decideWallet, "binance", newKeys}, TypeConfigReplaced + "," + TypeExchangeKeysSet, "", ""},
		{"wrong wallet", decideState(t), LicenseKeysEdit{"nope", "binance", newKeys}, "", EUNAUTHORIZED, "wallet does not match"},
		{"unknown verify exchange", decideState(t), LicenseKeysEdit{decideWallet, "kraken", newKeys}, "", EINVALID, `verifyExchange "kraken" is not a configured exchange`},
		{"verify exchange without credentials", noCreds, LicenseKeysEdit{decideWallet, "binance", newKeys}, "", EUNAUTHORIZED, "has no registered credentials"},
		{"entry not an object", decideState(t), LicenseKeysEdit{decideWallet, "binance", map[string]any{"binance": "x"}}, "", EINVALID, "newLicenses.binance must be an object"},
		{"unchanged keys", decideState(t), LicenseKeysEdit{decideWallet, "binance", map[string]any{"binance": map[string]any{"key": secrets.Mask, "secret": secrets.Mask}}}, TypeConfigReplaced, "", ""},
	}
	for _, tc := range cases {
		events, err := DecideLicenseKeysEdit(tc.st, tc.edit, rules)
		checkDecision(t, tc.name, events, err, tc.types, tc.code, tc.text)
	}
}

func TestDecideConfigInit(t *testing.T) {
	events, err := DecideConfigInit(false, decideDoc(), decideClock)
	checkDecision(t, "first init", events, err, TypeConfigReplaced, "", "")
	events, err = DecideConfigInit(true, decideDoc(), decideClock)
	checkDecision(t, "initialized already", events, err, "", "", "")
	events, err = DecideConfigInit(false, map[string]any{"bot": map[string]any{}}, decideClock)
	checkDecision(t, "invalid document", events, err, "", EINVALID, "")
}
