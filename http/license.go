package http

import (
	"context"
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/tradeledger/tradeledger/domain"
)

// licenseHandler serves license/keys/edit (spec "System, time, license")
// through the config routes' configWriter, checking the new keys with
// verifyKeys (Server.VerifyKeys) when set.
type licenseHandler struct {
	w          *configWriter
	verifyKeys func(ctx context.Context, cfg domain.Config, exchange string, fields map[string]string) error
}

func (h *licenseHandler) register(r *mux.Router) {
	r.Handle("/license/keys/edit", handlerFunc(h.handleLicenseKeysEdit)).Methods("POST")
}

type licenseEditRequest struct {
	Wallet         string         `json:"wallet"`
	NewLicenses    map[string]any `json:"newLicenses"`
	VerifyExchange string         `json:"verifyExchange"`
}

// handleLicenseKeysEdit replaces config.exchanges with newLicenses. The
// request must name the configured wallet (401 otherwise) and an exchange
// that has stored credentials now (verifyExchange: 400 when it is not
// configured, 401 when it has no credentials). New keys (isEncrypted
// false) are encrypted; masked or stored values keep the stored secret.
// With verifyKeys set, verifyExchange's keys are checked against the
// exchange before anything is written: keys the exchange refuses are 401,
// an exchange that does not answer 503.
// Every refusal changes nothing; the change is one atomic append.
func (h *licenseHandler) handleLicenseKeysEdit(w http.ResponseWriter, r *http.Request) error {
	var req licenseEditRequest
	if err := decodeJSON(r, &req, false); err != nil {
		return err
	}
	switch {
	case req.Wallet == "":
		return domain.Errorf(domain.EINVALID, "wallet is required")
	case req.VerifyExchange == "":
		return domain.Errorf(domain.EINVALID, "verifyExchange is required")
	case req.NewLicenses == nil:
		return domain.Errorf(domain.EINVALID, "newLicenses is required: the complete config.exchanges object")
	}
	edit := domain.LicenseKeysEdit{Wallet: req.Wallet, VerifyExchange: req.VerifyExchange, NewLicenses: req.NewLicenses}
	return answerConfigOK(w, h.w.run(r, func(st domain.ConfigState) ([]domain.Event, error) {
		return domain.DecideLicenseKeysEdit(st, edit, h.w.rules())
	}, func(ctx context.Context, st domain.ConfigState, events []domain.Event) error {
		return h.check(ctx, st, events, req.VerifyExchange)
	}))
}

// check checks exchange's credentials of the new configuration (events of
// DecideLicenseKeysEdit against st) with verifyKeys, in clear only in
// memory.
func (h *licenseHandler) check(ctx context.Context, st domain.ConfigState, events []domain.Event, exchange string) error {
	if h.verifyKeys == nil || len(events) == 0 {
		return nil
	}
	var replaced domain.ConfigReplaced
	if err := events[0].Decode(&replaced); err != nil {
		return err
	}
	cfg, err := domain.ParseConfig(replaced.Config)
	if err != nil {
		return err
	}
	cipher := st.Credentials[exchange]
	for _, e := range events[1:] {
		var k domain.ExchangeKeysSet
		if e.Type == domain.TypeExchangeKeysSet && e.Decode(&k) == nil && k.Exchange == exchange {
			cipher = k.Fields
		}
	}
	fields := make(map[string]string, len(cipher))
	for f, c := range cipher {
		v, err := h.w.secrets.Open(c)
		if err != nil {
			return domain.Errorf(domain.EINVALID, "newLicenses.%s.%s cannot be decrypted", exchange, f)
		}
		fields[strings.ToLower(f)] = v
	}
	return h.verifyKeys(ctx, cfg, exchange, fields)
}
