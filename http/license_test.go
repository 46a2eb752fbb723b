package http

import (
	"testing"

	"github.com/tradeledger/tradeledger/domain/secrets"
)

func TestLicenseKeysEdit(t *testing.T) {
	e := newCfgEnv(t)
	licenses := func() map[string]any {
		return map[string]any{
			"binance": map[string]any{"key": clearKey2, "secret": clearSec2, "isEncrypted": false, "delay": 10},
			"kraken":  map[string]any{"key": "kraken-new-key-1", "secret": "kraken-new-secret-1", "isEncrypted": false},
		}
	}
	body := func(wallet, verify string, nl any) map[string]any {
		return map[string]any{"wallet": wallet, "verifyExchange": verify, "newLicenses": nl}
	}
	// No exchange has credentials yet: verifyExchange cannot authenticate.
	e.refuse(401, "has no registered credentials", "POST", "/license/keys/edit", body(cfgWallet, "binance", licenses()))

	e.must(200, "POST", "/config/update", map[string]any{"data": withKeys()})
	oldCipher := e.srv.Config.Ciphertexts("binance")["secret"]

	e.refuse(400, "wallet is required", "POST", "/license/keys/edit", body("", "binance", licenses()))
	e.refuse(401, "wallet does not match", "POST", "/license/keys/edit", body("0xwrongwallet000000000000", "binance", licenses()))
	e.refuse(401, "wallet does not match", "POST", "/license/keys/edit", body(secrets.Mask, "binance", licenses()))
	e.refuse(400, "verifyExchange is required", "POST", "/license/keys/edit", body(cfgWallet, "", licenses()))
	e.refuse(400, "is not a configured exchange", "POST", "/license/keys/edit", body(cfgWallet, "bitfinex", licenses()))
	e.refuse(400, "newLicenses is required", "POST", "/license/keys/edit", map[string]any{"wallet": cfgWallet, "verifyExchange": "binance"})
	e.refuse(400, "newLicenses.kraken must be an object", "POST", "/license/keys/edit", body(cfgWallet, "binance", map[string]any{"kraken": 1}))
	e.refuse(400, `field \"newLicenses\" must be an object`, "POST", "/license/keys/edit", body(cfgWallet, "binance", "x"))
	e.refuse(400, "isEncrypted", "POST", "/license/keys/edit", body(cfgWallet, "binance",
		map[string]any{"binance": map[string]any{"key": "foreign-blob", "isEncrypted": true}}))
	if got := e.srv.Config.Ciphertexts("binance")["secret"]; got != oldCipher {
		t.Fatal("a refused edit changed the stored secret")
	}

	// Two exchanges changed at once.
	b := e.must(200, "POST", "/license/keys/edit", body(cfgWallet, "binance", licenses()))
	if string(b) != "{\"status\":\"success\"}\n" {
		t.Fatalf("body %s", b)
	}
	for ex, want := range map[string]string{"binance": clearSec2, "kraken": "kraken-new-secret-1"} {
		sec, err := e.srv.Config.Secrets(ex, e.box)
		if err != nil || sec["secret"] != want {
			t.Fatalf("%s secret=%q, %v", ex, sec["secret"], err)
		}
	}
	cfg := e.fullConfig()
	if got := cfgPath(cfg, "exchanges", "kraken", "key"); got != secrets.Mask {
		t.Fatalf("kraken key shown as %v", got)
	}
	if got := cfgPath(cfg, "exchanges", "kraken", "isEncrypted"); got != true {
		t.Fatalf("kraken isEncrypted=%v", got)
	}

	// Masks keep stored keys; a removed exchange loses its keys.
	krakenCipher := e.srv.Config.Ciphertexts("kraken")["secret"]
	e.must(200, "POST", "/license/keys/edit", body(cfgWallet, "kraken",
		map[string]any{"kraken": map[string]any{"key": secrets.Mask, "secret": secrets.Mask, "isEncrypted": true}}))
	if got := e.srv.Config.Ciphertexts("kraken")["secret"]; got != krakenCipher {
		t.Fatal("masked secret was not kept")
	}
	if e.srv.Config.HasCredentials("binance") {
		t.Fatal("binance keys kept after its removal")
	}
	assertNoSecrets(t, e, clearKey, clearSecret, clearKey2, clearSec2, "kraken-new-key-1", "kraken-new-secret-1")
}
