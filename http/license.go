package http

import (
	"context"
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/tradeledger/tradeledger/domain"
)

// registerLicenseRoutes serves license/keys/edit (spec "System, time,
// license"). It needs s.Config and s.Secrets, like the config routes.
func (s *Server) registerLicenseRoutes(r *mux.Router) {
	r.HandleFunc("/license/keys/edit", s.handleLicenseKeysEdit).Methods("POST")
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
// With s.VerifyKeys set, verifyExchange's keys are checked against the
// exchange before anything is written: keys the exchange refuses are 401,
// an exchange that does not answer 503.
// Every refusal changes nothing; the change is one atomic append.
func (s *Server) handleLicenseKeysEdit(w http.ResponseWriter, r *http.Request) {
	var req licenseEditRequest
	if err := decodeJSON(r, &req, false); err != nil {
		Error(w, r, err)
		return
	}
	switch {
	case req.Wallet == "":
		Error(w, r, domain.Errorf(domain.EINVALID, "wallet is required"))
		return
	case req.VerifyExchange == "":
		Error(w, r, domain.Errorf(domain.EINVALID, "verifyExchange is required"))
		return
	case req.NewLicenses == nil:
		Error(w, r, domain.Errorf(domain.EINVALID, "newLicenses is required: the complete config.exchanges object"))
		return
	}
	edit := domain.LicenseKeysEdit{Wallet: req.Wallet, VerifyExchange: req.VerifyExchange, NewLicenses: req.NewLicenses}
	err := s.runConfig(r, func(st domain.ConfigState) ([]domain.Event, error) {
		return domain.DecideLicenseKeysEdit(st, edit, s.configRules())
	}, func(ctx context.Context, st domain.ConfigState, events []domain.Event) error {
		return s.verifyKeys(ctx, st, events, req.VerifyExchange)
	})
	if err != nil {
		Error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, configOK)
}

// verifyKeys checks exchange's credentials of the new configuration
// (events of DecideLicenseKeysEdit against st) with s.VerifyKeys, in clear
// only in memory.
func (s *Server) verifyKeys(ctx context.Context, st domain.ConfigState, events []domain.Event, exchange string) error {
	if s.VerifyKeys == nil || len(events) == 0 {
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
		v, err := s.Secrets.Open(c)
		if err != nil {
			return domain.Errorf(domain.EINVALID, "newLicenses.%s.%s cannot be decrypted", exchange, f)
		}
		fields[strings.ToLower(f)] = v
	}
	return s.VerifyKeys(ctx, cfg, exchange, fields)
}
