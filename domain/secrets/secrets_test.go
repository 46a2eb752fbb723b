package secrets_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/secrets"
)

// IsSecretPath is the one rule for credentials: any string under
// exchanges.*, at any depth, whose nearest key names a secret.
func TestIsSecretPath(t *testing.T) {
	cases := []struct {
		path string // elements separated by "/"
		want bool
	}{
		{"exchanges/binance/key", true},
		{"exchanges/binance/secret", true},
		{"exchanges/binance/apiSecretKey", true},
		{"exchanges/binance/clientSecret", true},
		{"exchanges/binance/accessKey", true},
		{"exchanges/binance/secret2", true},
		{"exchanges/binance/SECRET", true},
		{"exchanges/binance/masterkey", true},
		{"exchanges/binance/passphrase", true},
		{"exchanges/binance/pass", true},
		{"exchanges/binance/api_token", true},
		{"exchanges/binance/privateKeyPem", true},
		{"exchanges/binance/Authorization", true},
		{"exchanges/binance/subaccount/secret", true},
		{"exchanges/binance/a/b/c/apiKey", true},
		{"exchanges/binance/accounts/[0]/secret", true},
		{"exchanges/binance/apiKeys/[1]", true}, // an array of keys: the nearest key names a secret
		{"exchanges/binance/subaccount/name", false},
		{"exchanges/binance/delay", false},
		{"exchanges/binance/isEncrypted", false},
		{"exchanges/binance/tradingFees", false},
		{"exchanges/binance/accounts/[0]", false},
		{"exchanges/binance", false}, // the entry itself
		{"exchanges/secret", false},  // an exchange named secret is not a value
		{"bot/service_wallet", false},
		{"bot/apiKey", false}, // only exchanges hold credentials
		{"pairs/binance/USDT-BTC/key", false},
		{"strategies/gain/secretSauce", false},
		{"", false},
	}
	for _, c := range cases {
		if got := secrets.IsSecretPath(strings.Split(c.path, "/")...); got != c.want {
			t.Errorf("IsSecretPath(%s) = %v, want %v", c.path, got, c.want)
		}
	}
	if !secrets.IsSecretField("apiSecretKey") || secrets.IsSecretField("delay") {
		t.Error("IsSecretField disagrees with IsSecretPath")
	}
}

func TestExtractAndPutSecrets(t *testing.T) {
	var entry map[string]any
	if err := json.Unmarshal([]byte(`{"key":"K","secret":"","delay":5,"useAuth":true,
		"subaccount":{"name":"sub","secret":"S","we.ird":{"token":"T"}},
		"accounts":[{"accessKey":"A"},"plain"]}`), &entry); err != nil {
		t.Fatal(err)
	}
	stripped, inClear := secrets.ExtractSecrets(entry)
	want := map[string]string{"key": "K", "secret": "", "subaccount.secret": "S", `subaccount.we\.ird.token`: "T", "accounts.[0].accessKey": "A"}
	if len(inClear) != len(want) {
		t.Fatalf("secrets %v, want %v", inClear, want)
	}
	for k, v := range want {
		if inClear[k] != v {
			t.Fatalf("secrets %v, want %v", inClear, want)
		}
	}
	b, _ := json.Marshal(stripped)
	if got := string(b); got != `{"accounts":[{},"plain"],"delay":5,"subaccount":{"name":"sub","we.ird":{}},"useAuth":true}` {
		t.Fatalf("stripped %s", got)
	}
	if entry["key"] != "K" {
		t.Fatal("ExtractSecrets changed its argument")
	}
	for k, v := range inClear {
		if !secrets.PutSecret(stripped, k, v) {
			t.Fatalf("PutSecret %s failed", k)
		}
	}
	b1, _ := json.Marshal(stripped)
	b2, _ := json.Marshal(entry)
	if string(b1) != string(b2) {
		t.Fatalf("put back %s, want %s", b1, b2)
	}
	masked, _ := json.Marshal(secrets.MaskExchange(entry))
	for _, secret := range []string{`"K"`, `"S"`, `"T"`, `"A"`} {
		if strings.Contains(string(masked), secret) {
			t.Fatalf("masked %s still shows %s", masked, secret)
		}
	}
	if !strings.Contains(string(masked), `"secret":""`) || !strings.Contains(string(masked), `"accessKey":"********"`) {
		t.Fatalf("masked %s: empty secrets stay empty, others masked", masked)
	}
}

func TestMaskSecretsIn(t *testing.T) {
	var v any
	json.Unmarshal([]byte(`{"config":{"bot":{"service_wallet":"0xwallet"},"exchanges":{"kraken":{"apiSecret":"plain","sub":{"clientSecret":"deep"},"delay":1}},"pairs":{"k":{"key":"not-a-credential"}}}}`), &v)
	if !secrets.MaskSecretsIn(v) {
		t.Fatal("nothing masked")
	}
	b, _ := json.Marshal(v)
	for _, s := range []string{"0xwallet", "plain", "deep"} {
		if strings.Contains(string(b), s) {
			t.Fatalf("%s still in %s", s, b)
		}
	}
	if !strings.Contains(string(b), "not-a-credential") || !strings.Contains(string(b), `"delay":1`) {
		t.Fatalf("masked too much: %s", b)
	}
	if secrets.MaskSecretsIn(v) {
		t.Fatal("masking twice changed something")
	}
}

// TestCredentialMustBeAString: a number, a boolean, an object or an array
// where a credential goes is refused when a document is written, naming its path; a log that
// holds one (written before the rule) shows it masked.
func TestCredentialMustBeAString(t *testing.T) {
	doc := func(entry string) map[string]any {
		var m map[string]any
		if err := json.Unmarshal([]byte(`{"bot":{},"pairs":{},"strategies":{},"GUI":{},"exchanges":{"binance":`+entry+`}}`), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, tt := range []struct{ entry, path string }{
		{`{"key":"k","secret":123}`, "config.exchanges.binance.secret"},
		{`{"apiKey":true}`, "config.exchanges.binance.apiKey"},
		{`{"accounts":[{"authToken":1.5}]}`, "config.exchanges.binance.accounts[0].authToken"},
		// An object or an array where a credential goes: the strings
		// inside would sit at paths no rule calls credentials.
		{`{"secrets":["s",7]}`, "config.exchanges.binance.secrets"},
		{`{"secret":{"value":"s3cr3t"}}`, "config.exchanges.binance.secret"},
		{`{"sub":{"apiKey":["k"]}}`, "config.exchanges.binance.sub.apiKey"},
		{`{"accounts":[{"key":{"v":"k"}}]}`, "config.exchanges.binance.accounts[0].key"},
	} {
		_, err := domain.ConfigFromMap(doc(tt.entry))
		if domain.ErrorCode(err) != domain.EINVALID || !strings.Contains(domain.ErrorMessage(err), tt.path+" must be a string, not ") {
			t.Errorf("%s: err = %v, want EINVALID naming %s", tt.entry, err, tt.path)
		}
	}
	for _, entry := range []string{`{"key":"k","secret":"123","delay":5}`, `{"secret":null}`, `{"sub":{"delay":3}}`} {
		if _, err := domain.ConfigFromMap(doc(entry)); err != nil {
			t.Errorf("%s: %v, want accepted", entry, err)
		}
	}
	var old any
	json.Unmarshal([]byte(`{"exchanges":{"binance":{"secret":123,"flagKey":true,"delay":5}}}`), &old)
	if !secrets.MaskSecretsIn(old) {
		t.Fatal("a number at a credential's path was not masked")
	}
	if b, _ := json.Marshal(old); string(b) != `{"exchanges":{"binance":{"delay":5,"flagKey":"********","secret":"********"}}}` {
		t.Errorf("masked: %s", b)
	}
}

// The copies ExtractSecrets and MaskExchange make keep an empty array an
// empty array: a ConfigReplaced event or a masked config read must not
// turn "pairs": [] into null.
func TestCopiesKeepEmptyArrays(t *testing.T) {
	entry := map[string]any{"key": "k", "secret": "s", "pairs": []any{}, "nested": map[string]any{"list": []any{}}}
	stripped, _ := secrets.ExtractSecrets(entry)
	masked := secrets.MaskExchange(entry)
	for name, got := range map[string]map[string]any{"ExtractSecrets": stripped, "MaskExchange": masked} {
		b, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		if s := string(b); !strings.Contains(s, `"pairs":[]`) || !strings.Contains(s, `"list":[]`) {
			t.Errorf("%s's copy is %s: an empty array became something else", name, s)
		}
	}
}
