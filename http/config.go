package http

import (
	"encoding/json"
	"net/http"
	"sort"

	"github.com/gorilla/mux"

	"github.com/tradeledger/tradeledger/domain"
)

// registerConfigRoutes serves the Configuration section of the spec. It
// needs s.Config (the read model) and s.Secrets (to encrypt new exchange
// secrets); without them the routes answer 503.
//
// Every change is decided against the projection's current configuration
// and appended to the config stream with that version as the expected
// version, so two concurrent writers cannot silently overwrite each other
// (a conflict is retried once against the new state, then answered 409).
// Exchange credentials travel in the same append as ExchangeKeysSet events
// holding ciphertext only, so a change is all-or-nothing.
func (s *Server) registerConfigRoutes(r *mux.Router) {
	r.HandleFunc("/config/full", s.handleConfigFull).Methods("GET")
	r.HandleFunc("/config/update", s.handleConfigUpdate).Methods("POST")
	r.HandleFunc("/config/pair/add", s.handleConfigPairAdd).Methods("POST")
	r.HandleFunc("/config/pair/remove", s.handleConfigPairRemove).Methods("POST")
	r.HandleFunc("/config/strategy/add", s.handleConfigStrategyAdd).Methods("POST")
	r.HandleFunc("/config/strategy/remove", s.handleConfigStrategyRemove).Methods("POST")
}

type configResponse struct {
	Status string          `json:"status"`
	Config json.RawMessage `json:"config"`
}

type configStatusResponse struct {
	Status string `json:"status"`
}

var configOK = configStatusResponse{Status: "success"}

func (s *Server) configReady() error {
	if s.Config == nil || s.Secrets == nil {
		return domain.Errorf(domain.EUNAVAILABLE, "configuration is not available")
	}
	return nil
}

func (s *Server) handleConfigFull(w http.ResponseWriter, r *http.Request) {
	if err := s.configReady(); err != nil {
		Error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, configResponse{Status: "success", Config: s.Config.Public()})
}

// decideConfig runs decide against the current configuration and appends
// the events it returns to the config stream, expecting the version decide
// saw. On a version conflict it decides once more against the new state.
func (s *Server) decideConfig(r *http.Request, decide func(cur domain.Config) ([]domain.Event, error)) error {
	if err := s.configReady(); err != nil {
		return err
	}
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		cur, version := s.Config.Snapshot()
		if cur.IsZero() {
			return domain.Errorf(domain.EUNAVAILABLE, "the configuration is not initialized")
		}
		var events []domain.Event
		if events, err = decide(cur); err != nil {
			return err
		}
		if len(events) == 0 {
			return nil
		}
		if _, err = s.commit(r, domain.StreamConfig, version, events...); domain.ErrorCode(err) != domain.ECONFLICT {
			if err == nil {
				logConfigChange(r, events)
			}
			return err
		}
	}
	return domain.Errorf(domain.ECONFLICT, "the configuration changed during the update; read it again and retry")
}

// configUpdateRequest is config/update's body: the new document under data
// (the spec) or config (the Gunbot SDK's ConfigUpdateRequest model); data
// wins when both are sent.
type configUpdateRequest struct {
	Data   json.RawMessage `json:"data"`
	Config json.RawMessage `json:"config"`
	// Wallet is the current service wallet: proof needed to change it.
	Wallet string `json:"wallet"`
}

func (s *Server) handleConfigUpdate(w http.ResponseWriter, r *http.Request) {
	var req configUpdateRequest
	if err := decodeJSON(r, &req, false); err != nil {
		Error(w, r, err)
		return
	}
	if len(req.Data) == 0 || string(req.Data) == "null" {
		req.Data = req.Config
	}
	if len(req.Data) == 0 || string(req.Data) == "null" {
		Error(w, r, domain.Errorf(domain.EINVALID, "data is required: the new complete configuration (or config, as the SDK sends it)"))
		return
	}
	doc, err := domain.DecodeJSONObject(req.Data)
	if err != nil {
		Error(w, r, domain.Errorf(domain.EINVALID, "data %s", domain.ErrorMessage(err)))
		return
	}
	err = s.decideConfig(r, func(cur domain.Config) ([]domain.Event, error) {
		next := configCopyMap(doc)
		if err := checkNewWallet(next, cur, req.Wallet); err != nil {
			return nil, err
		}
		exchanges, ok := next["exchanges"].(map[string]any)
		if !ok {
			return nil, domain.Errorf(domain.EINVALID, "config.exchanges must be an object")
		}
		return s.replaceConfig(r, next, exchanges)
	})
	if err != nil {
		Error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, configResponse{Status: "success", Config: s.Config.Public()})
}

// replaceConfig returns the events that make doc (with exchanges as its
// exchanges section, secrets in clear, masked or as stored ciphertext) the
// configuration: ConfigReplaced without secrets, then ExchangeKeysSet for
// every exchange whose stored secrets change. EINVALID if the document is
// invalid or a secret field cannot be resolved.
func (s *Server) replaceConfig(r *http.Request, doc, exchanges map[string]any) ([]domain.Event, error) {
	stripped, creds, err := s.resolveSecrets(exchanges)
	if err != nil {
		return nil, err
	}
	doc["exchanges"] = stripped
	cfg, err := domain.ConfigFromMap(doc)
	if err != nil {
		return nil, err
	}
	if err := s.checkTradingModes(cfg); err != nil {
		return nil, err
	}
	body, err := json.Marshal(cfg.WithoutSecrets())
	if err != nil {
		return nil, err
	}
	events := []domain.Event{domain.NewEvent(s.Clock, domain.TypeConfigReplaced, domain.ConfigReplaced{Config: body})}
	names := map[string]bool{}
	for name := range creds {
		names[name] = true
	}
	for _, name := range s.Config.CredentialExchanges() {
		names[name] = true
	}
	for _, name := range configSortedNames(names) {
		if !sameSecretFields(creds[name], s.Config.Ciphertexts(name)) {
			fields := creds[name]
			if fields == nil {
				fields = map[string]string{}
			}
			events = append(events, domain.NewEvent(s.Clock, domain.TypeExchangeKeysSet, domain.ExchangeKeysSet{Exchange: name, Fields: fields}))
		}
	}
	return events, nil
}

// resolveSecrets splits exchange entries into the entries without secrets
// and the ciphertext of their secrets. A secret field holding the mask keeps
// the stored secret (EINVALID if none is stored); the stored ciphertext
// itself keeps it too; "" clears it; any other string is a new secret in
// clear and is encrypted, unless the entry says isEncrypted: true (we cannot
// decrypt another program's encryption: EINVALID asking for isEncrypted
// false).
func (s *Server) resolveSecrets(exchanges map[string]any) (map[string]any, map[string]map[string]string, error) {
	stripped := map[string]any{}
	creds := map[string]map[string]string{}
	for name, v := range exchanges {
		entry, ok := v.(map[string]any)
		if !ok {
			return nil, nil, domain.Errorf(domain.EINVALID, "config.exchanges.%s must be an object", name)
		}
		stored := s.Config.Ciphertexts(name)
		encrypted, _ := entry["isEncrypted"].(bool)
		fields := map[string]string{}
		// Credentials by domain.IsSecretPath, at any depth of the entry.
		out, secrets := domain.ExtractSecrets(entry)
		for field, val := range secrets {
			switch {
			case val == "":
				fields[field] = ""
			case val == domain.Mask:
				c, ok := stored[field]
				if !ok || c == "" {
					return nil, nil, domain.Errorf(domain.EINVALID, "config.exchanges.%s.%s is the mask %q but no secret is stored for it; send the value in clear with isEncrypted false", name, field, domain.Mask)
				}
				fields[field] = c
			case stored[field] != "" && val == stored[field]:
				fields[field] = val
			case encrypted:
				return nil, nil, domain.Errorf(domain.EINVALID, "config.exchanges.%s.%s is marked isEncrypted but is not a stored secret; send new keys in clear with isEncrypted false", name, field)
			default:
				fields[field] = s.Secrets.Seal(val)
			}
		}
		has := false
		for _, c := range fields {
			has = has || c != ""
		}
		out["isEncrypted"] = has
		stripped[name] = out
		if len(fields) > 0 {
			creds[name] = fields
		}
	}
	return stripped, creds, nil
}

func sameSecretFields(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func configSortedNames(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func configCopyMap(m map[string]any) map[string]any {
	b, _ := json.Marshal(m)
	out, _ := domain.DecodeJSONObject(b)
	return out
}

type pairAddRequest struct {
	Pair     string         `json:"pair"`
	Exchange string         `json:"exchange"`
	Settings map[string]any `json:"settings"`
}

// defaultPairStrategy is the strategy of a pair added without one: the
// no-op strategy, so that adding a pair never starts trading by itself.
const defaultPairStrategy = "manual"

func (s *Server) handleConfigPairAdd(w http.ResponseWriter, r *http.Request) {
	var req pairAddRequest
	if err := decodeJSON(r, &req, false); err != nil {
		Error(w, r, err)
		return
	}
	p, err := pairFromRequest(req)
	if err != nil {
		Error(w, r, err)
		return
	}
	err = s.decideConfig(r, func(cur domain.Config) ([]domain.Event, error) {
		if _, ok := cur.Exchange(p.Exchange); !ok {
			return nil, domain.Errorf(domain.EINVALID, "exchange %q is not in config.exchanges", p.Exchange)
		}
		if _, ok := cur.Strategy(p.Strategy); !ok {
			return nil, domain.Errorf(domain.EINVALID, "settings.strategy: strategy %q does not exist in config.strategies", p.Strategy)
		}
		if _, err := cur.WithPair(p); err != nil {
			return nil, err
		}
		override, _ := json.Marshal(p.Override)
		return []domain.Event{domain.NewEvent(s.Clock, domain.TypePairAdded, domain.PairAdded{
			Exchange: p.Exchange, Pair: p.Pair, Strategy: p.Strategy, Enabled: p.Enabled, Override: override,
		})}, nil
	})
	if err != nil {
		Error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, configOK)
}

// pairFromRequest reads settings: strategy (default "manual"), enabled
// (default true), override (an object of parameters); any other key is a
// strategy parameter and joins override.
func pairFromRequest(req pairAddRequest) (domain.PairConfig, error) {
	if req.Pair == "" {
		return domain.PairConfig{}, domain.Errorf(domain.EINVALID, "pair is required, e.g. USDT-BTC")
	}
	if req.Exchange == "" {
		return domain.PairConfig{}, domain.Errorf(domain.EINVALID, "exchange is required")
	}
	if err := domain.ValidatePair(req.Pair); err != nil {
		return domain.PairConfig{}, err
	}
	if err := domain.ValidateExchangeName(req.Exchange); err != nil {
		return domain.PairConfig{}, err
	}
	p := domain.PairConfig{Exchange: req.Exchange, Pair: req.Pair, Strategy: defaultPairStrategy, Enabled: true, Override: map[string]any{}}
	for k, v := range req.Settings {
		switch k {
		case "strategy":
			name, ok := v.(string)
			if !ok || name == "" {
				return p, domain.Errorf(domain.EINVALID, "settings.strategy must be a non-empty string")
			}
			p.Strategy = name
		case "enabled":
			b, ok := v.(bool)
			if !ok {
				return p, domain.Errorf(domain.EINVALID, "settings.enabled must be a boolean")
			}
			p.Enabled = b
		case "override":
			if v == nil {
				continue
			}
			m, ok := v.(map[string]any)
			if !ok {
				return p, domain.Errorf(domain.EINVALID, "settings.override must be an object")
			}
			for ok, ov := range m {
				if err := checkConfigParam("settings.override."+ok, ov); err != nil {
					return p, err
				}
				p.Override[ok] = ov
			}
		default:
			if err := checkConfigParam("settings."+k, v); err != nil {
				return p, err
			}
			p.Override[k] = v
		}
	}
	if err := domain.CheckStrategyParams("settings", p.Override); err != nil {
		return p, err
	}
	return p, nil
}

func checkConfigParam(field string, v any) error {
	switch v.(type) {
	case string, bool, float64, json.Number:
		return nil
	}
	return domain.Errorf(domain.EINVALID, "%s must be a number, a string or a boolean", field)
}

type pairRemoveRequest struct {
	Pair     string `json:"pair"`
	Exchange string `json:"exchange"`
}

func (s *Server) handleConfigPairRemove(w http.ResponseWriter, r *http.Request) {
	var req pairRemoveRequest
	if err := decodeJSON(r, &req, false); err != nil {
		Error(w, r, err)
		return
	}
	if req.Pair == "" || req.Exchange == "" {
		Error(w, r, domain.Errorf(domain.EINVALID, "pair and exchange are required"))
		return
	}
	err := s.decideConfig(r, func(cur domain.Config) ([]domain.Event, error) {
		if _, err := cur.WithoutPair(req.Exchange, req.Pair); err != nil {
			return nil, err
		}
		return []domain.Event{domain.NewEvent(s.Clock, domain.TypePairRemoved, domain.PairRemoved{Exchange: req.Exchange, Pair: req.Pair})}, nil
	})
	if err != nil {
		Error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, configOK)
}

type strategyAddRequest struct {
	Name     string         `json:"name"`
	Settings map[string]any `json:"settings"`
}

func (s *Server) handleConfigStrategyAdd(w http.ResponseWriter, r *http.Request) {
	var req strategyAddRequest
	if err := decodeJSON(r, &req, false); err != nil {
		Error(w, r, err)
		return
	}
	if req.Name == "" {
		Error(w, r, domain.Errorf(domain.EINVALID, "name is required"))
		return
	}
	if err := domain.ValidateStrategyName(req.Name); err != nil {
		Error(w, r, err)
		return
	}
	settings := req.Settings
	if settings == nil {
		settings = map[string]any{}
	}
	if err := domain.CheckStrategyParams("settings", settings); err != nil {
		Error(w, r, err)
		return
	}
	err := s.decideConfig(r, func(cur domain.Config) ([]domain.Event, error) {
		if _, err := cur.WithStrategy(req.Name, settings); err != nil {
			return nil, err
		}
		b, _ := json.Marshal(settings)
		return []domain.Event{domain.NewEvent(s.Clock, domain.TypeStrategyAdded, domain.StrategyAdded{Name: req.Name, Settings: b})}, nil
	})
	if err != nil {
		Error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, configOK)
}

type strategyRemoveRequest struct {
	Name string `json:"name"`
}

func (s *Server) handleConfigStrategyRemove(w http.ResponseWriter, r *http.Request) {
	var req strategyRemoveRequest
	if err := decodeJSON(r, &req, false); err != nil {
		Error(w, r, err)
		return
	}
	if req.Name == "" {
		Error(w, r, domain.Errorf(domain.EINVALID, "name is required"))
		return
	}
	err := s.decideConfig(r, func(cur domain.Config) ([]domain.Event, error) {
		if _, err := cur.WithoutStrategy(req.Name); err != nil {
			return nil, err
		}
		return []domain.Event{domain.NewEvent(s.Clock, domain.TypeStrategyRemoved, domain.StrategyRemoved{Name: req.Name})}, nil
	})
	if err != nil {
		Error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, configOK)
}
