package http

import (
	"crypto/subtle"
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
	err := s.decideConfig(r, func(cur domain.Config) ([]domain.Event, error) {
		wallet := cur.Wallet()
		if wallet == "" || subtle.ConstantTimeCompare([]byte(wallet), []byte(req.Wallet)) != 1 {
			return nil, domain.Errorf(domain.EUNAUTHORIZED, "wallet does not match the configured service wallet")
		}
		if _, ok := cur.Exchange(req.VerifyExchange); !ok {
			return nil, domain.Errorf(domain.EINVALID, "verifyExchange %q is not a configured exchange", req.VerifyExchange)
		}
		if !s.Config.HasCredentials(req.VerifyExchange) {
			return nil, domain.Errorf(domain.EUNAUTHORIZED, "verifyExchange %q has no registered credentials", req.VerifyExchange)
		}
		for name, v := range req.NewLicenses {
			if _, ok := v.(map[string]any); !ok {
				return nil, domain.Errorf(domain.EINVALID, "newLicenses.%s must be an object", name)
			}
		}
		events, err := s.replaceConfig(r, cur.Map(), configCopyMap(req.NewLicenses))
		if err != nil {
			return nil, err
		}
		return events, s.verifyKeys(r, events, req.VerifyExchange)
	})
	if err != nil {
		Error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, configOK)
}

// verifyKeys checks verifyExchange's credentials of the new configuration
// (events from replaceConfig) with s.VerifyKeys, in clear only in memory.
func (s *Server) verifyKeys(r *http.Request, events []domain.Event, exchange string) error {
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
	cipher := s.Config.Ciphertexts(exchange)
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
	return s.VerifyKeys(r.Context(), cfg, exchange, fields)
}
