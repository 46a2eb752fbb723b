package http

import (
	"crypto/subtle"
	"net/http"
	"sort"
	"strings"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
)

// logConfigChange logs one line for a configuration change: the route and
// the event types written, never a value (values may be secrets).
func logConfigChange(r *http.Request, events []domain.Event) {
	types := make([]string, len(events))
	for i := range events {
		types[i] = events[i].Type
	}
	logger(r).Info("configuration changed", zap.String("path", r.URL.Path), zap.Strings("events", types), zap.String("actor", subject(r)))
}

// MinWalletBytes is the shortest bot.service_wallet a write may set: its
// first 16 bytes are the key of encrypted login passwords.
const MinWalletBytes = 16

// checkNewWallet applies the login key's rules to the document a
// config/update would write (doc's bot section is edited in place): the
// mask, or no wallet at all, keeps the current one; a wallet shorter than
// MinWalletBytes is EINVALID; a different wallet needs proof, the current
// one, in the request's wallet field (EINVALID when missing, EUNAUTHORIZED
// when wrong), as license/keys/edit asks, so that a stolen token cannot
// lock the owner out.
func checkNewWallet(doc map[string]any, cur domain.Config, proof string) error {
	bot, ok := doc["bot"].(map[string]any)
	if !ok {
		return nil // ConfigFromMap names the missing section
	}
	current := cur.Wallet()
	v, present := bot["service_wallet"]
	if !present || v == domain.Mask {
		if current != "" {
			bot["service_wallet"] = current
		}
		return nil
	}
	next, ok := v.(string)
	if !ok {
		return domain.Errorf(domain.EINVALID, "config.bot.service_wallet must be a string")
	}
	if next == current {
		return nil
	}
	if len(next) < MinWalletBytes {
		return domain.Errorf(domain.EINVALID, "config.bot.service_wallet must be at least %d bytes: its first %d are the login encryption key", MinWalletBytes, MinWalletBytes)
	}
	if current == "" {
		return nil
	}
	if proof == "" {
		return domain.Errorf(domain.EINVALID, "wallet is required to change config.bot.service_wallet: send the current service wallet as proof")
	}
	if subtle.ConstantTimeCompare([]byte(proof), []byte(current)) != 1 {
		return domain.Errorf(domain.EUNAUTHORIZED, "wallet does not match the configured service wallet")
	}
	return nil
}

// checkTradingModes refuses a configuration that asks an exchange to trade
// for real (bot.SIMULATOR false, and not simulator: true in its entry)
// when no real connector exists for it: it would silently trade on
// paper. EINVALID naming the exchanges.
func (s *Server) checkTradingModes(cfg domain.Config) error {
	if cfg.Simulator() {
		return nil
	}
	var missing []string
	for _, name := range cfg.ExchangeNames() {
		entry, _ := cfg.Exchange(name)
		if sim, _ := entry["simulator"].(bool); sim {
			continue // on paper, as the entry itself says
		}
		if s.RealConnector == nil || !s.RealConnector(cfg, name) {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	sort.Strings(missing)
	what := "exchange " + quoteJoin(missing) + " has"
	if len(missing) > 1 {
		what = "exchanges " + quoteJoin(missing) + " have"
	}
	return domain.Errorf(domain.EINVALID, "config.bot.SIMULATOR is false but %s no real connector in this build: it would trade on paper; set SIMULATOR true", what)
}

func quoteJoin(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = `"` + n + `"`
	}
	return strings.Join(q, ", ")
}
