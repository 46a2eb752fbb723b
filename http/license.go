package http

import (
	"crypto/subtle"
	"net/http"

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
		return s.replaceConfig(r, cur.Map(), configCopyMap(req.NewLicenses))
	})
	if err != nil {
		Error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, configOK)
}
