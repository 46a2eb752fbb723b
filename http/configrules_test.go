package http

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/secrets"
)

func setBot(doc map[string]any, key string, v any) map[string]any {
	doc["bot"].(map[string]any)[key] = v
	return doc
}

// bot.SIMULATOR false for an exchange without a real connector would
// trade on paper while the operator believes it trades for real: both
// config writes refuse it with 400 naming the exchange, and accept it
// once the wiring says the exchange has a real connector.
func TestRealTradingRefusedWithoutConnector(t *testing.T) {
	e := newCfgEnv(t)
	e.refuse(400, `exchange \"binance\" has no real connector`, "POST", "/config/update",
		map[string]any{"data": setBot(cfgInitial(), "SIMULATOR", false)})
	noFlag := cfgInitial()
	delete(noFlag["bot"].(map[string]any), "SIMULATOR")
	e.refuse(400, `exchange \"binance\" has no real connector`, "POST", "/config/update", map[string]any{"data": noFlag})

	// An exchange whose entry says simulator: true trades on paper by
	// its own word: not silent, accepted.
	paper := setBot(cfgInitial(), "SIMULATOR", false)
	paper["exchanges"].(map[string]any)["binance"].(map[string]any)["simulator"] = true
	e.must(200, "POST", "/config/update", map[string]any{"data": paper})

	// license/keys/edit on a configuration that already says false (as an
	// import may have written it).
	e.must(200, "POST", "/config/update", map[string]any{"data": withKeys()})
	cur := setBot(withKeys(), "SIMULATOR", false)
	cur["exchanges"] = map[string]any{"binance": map[string]any{"isEncrypted": true, "delay": 10}}
	body, _ := json.Marshal(cur)
	e.append(domain.StreamConfig, domain.NewEvent(e.clock, domain.TypeConfigReplaced, domain.ConfigReplaced{Config: body}))
	edit := map[string]any{"wallet": cfgWallet, "verifyExchange": "binance", "newLicenses": map[string]any{
		"binance": map[string]any{"key": secrets.Mask, "secret": secrets.Mask, "delay": 10},
		"kraken":  map[string]any{"key": "kraken-key-0001", "secret": "kraken-secret-0001"},
	}}
	e.refuse(400, `exchanges \"binance\", \"kraken\" have no real connector`, "POST", "/license/keys/edit", edit)

	// Once the wiring has a real connector for binance, binance alone
	// may trade for real; kraken still may not.
	e.srv.RealConnector = func(_ domain.Config, name string) bool { return name == "binance" }
	e.refuse(400, `exchange \"kraken\" has no real connector`, "POST", "/license/keys/edit", edit)
	e.must(200, "POST", "/config/update", map[string]any{"data": setBot(withKeys(), "SIMULATOR", false)})
	if e.srv.Config.Current().Simulator() {
		t.Fatal("SIMULATOR false not written with a real connector")
	}
}

// bot.service_wallet is the login key: shorter than 16 bytes is refused,
// and changing it needs the current one as proof.
func TestWalletCannotBeBrokenByAWrite(t *testing.T) {
	e := newCfgEnv(t)
	const next = "0x1111222233334444555566667777888899990000"
	e.refuse(400, "at least 16 bytes", "POST", "/config/update",
		map[string]any{"data": setBot(cfgInitial(), "service_wallet", "0xshort"), "wallet": cfgWallet})
	e.refuse(400, "at least 16 bytes", "POST", "/config/update", map[string]any{"data": setBot(cfgInitial(), "service_wallet", "")})
	e.refuse(400, "wallet is required to change", "POST", "/config/update", map[string]any{"data": setBot(cfgInitial(), "service_wallet", next)})
	e.refuse(401, "wallet does not match", "POST", "/config/update",
		map[string]any{"data": setBot(cfgInitial(), "service_wallet", next), "wallet": "0x0000000000000000000000000000"})
	e.refuse(401, "wallet does not match", "POST", "/config/update",
		map[string]any{"data": setBot(cfgInitial(), "service_wallet", next), "wallet": secrets.Mask})

	// The mask, the same wallet, or none at all keep it, without proof.
	for _, w := range []any{secrets.Mask, cfgWallet, nil} {
		doc := cfgInitial()
		if w == nil {
			delete(doc["bot"].(map[string]any), "service_wallet")
		} else {
			setBot(doc, "service_wallet", w)
		}
		e.must(200, "POST", "/config/update", map[string]any{"data": doc})
		if got := e.srv.Config.Wallet(); got != cfgWallet {
			t.Fatalf("wallet %v sent: stored wallet %q, want it kept", w, got)
		}
	}
	e.must(200, "POST", "/config/update", map[string]any{"data": setBot(cfgInitial(), "service_wallet", next), "wallet": cfgWallet})
	if got := e.srv.Config.Wallet(); got != next {
		t.Fatalf("wallet after a proven change = %q", got)
	}
	for _, b := range e.bodies {
		if strings.Contains(b, next) || strings.Contains(b, cfgWallet) {
			t.Fatalf("a response shows the wallet: %s", b)
		}
	}
}
