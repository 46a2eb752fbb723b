package http

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/secrets"
	"github.com/tradeledger/tradeledger/eventstore"
)

// CurrentConfig returns the configuration in force (projections.Config).
type CurrentConfig interface {
	Current() domain.Config
}

// ConfigReader is the configuration read model as cmd fills Server.Config
// with it (projections.Config): the configuration routes read its
// document and decide against its state, system start/stop answer its
// document and status its version, and chart/data, the reconciliation
// and paper routes the configuration in force.
type ConfigReader interface {
	CurrentConfig
	// Public returns the document as config/full answers it, every
	// secret masked.
	Public() json.RawMessage
	// State returns the configuration and the stored credentials the
	// writes decide against, and the config stream's version they
	// reflect.
	State() (domain.ConfigState, domain.ExpectedVersion)
	// Version returns the config stream's version (-1 before its first
	// event).
	Version() int64
}

// configHandler serves the Configuration section of the spec: it reads
// the ConfigReader and sends its changes through a configWriter, which
// needs the read model and the SecretBox (to encrypt new exchange
// secrets); without them the routes answer 503.
//
// Every change is decided against the projection's current configuration
// and appended to the config stream with that version as the expected
// version, so two concurrent writers cannot silently overwrite each other
// (a conflict is decided again against the new state, a few times, then
// answered 409).
// Exchange credentials travel in the same append as ExchangeKeysSet events
// holding ciphertext only, so a change is all-or-nothing.
type configHandler struct {
	w *configWriter
}

func (h *configHandler) register(r *mux.Router) {
	r.Handle("/config/full", requires(h.w.ready, h.handleConfigFull)).Methods("GET")
	r.Handle("/config/update", handlerFunc(h.handleConfigUpdate)).Methods("POST")
	r.Handle("/config/pair/add", handlerFunc(h.handleConfigPairAdd)).Methods("POST")
	r.Handle("/config/pair/remove", handlerFunc(h.handleConfigPairRemove)).Methods("POST")
	r.Handle("/config/strategy/add", handlerFunc(h.handleConfigStrategyAdd)).Methods("POST")
	r.Handle("/config/strategy/remove", handlerFunc(h.handleConfigStrategyRemove)).Methods("POST")
}

// configWriter runs the configuration commands of the config and license
// routes (runConfig), against the ConfigReader's state, with the rules of
// configuration writes (domain.ConfigRules: the clock, the SecretBox, and
// which exchanges have a real connector).
type configWriter struct {
	config  ConfigReader
	secrets *secrets.SecretBox
	cmds    *eventstore.Commands
	clock   domain.Clock
	// realConnector reports whether an exchange of cfg would trade for
	// real with bot.SIMULATOR false (Server.RealConnector).
	realConnector func(cfg domain.Config, exchange string) bool
}

type configResponse struct {
	Status string          `json:"status"`
	Config json.RawMessage `json:"config"`
}

type configStatusResponse struct {
	Status string `json:"status"`
}

var configOK = configStatusResponse{Status: "success"}

// answerConfigOK answers configOK once err, the outcome of a change, is
// nil; otherwise it returns err (for handlerFunc to answer).
func answerConfigOK(w http.ResponseWriter, err error) error {
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, configOK)
	return nil
}

// errNoConfig is the answer of the routes that need the configuration on a
// server without it.
var errNoConfig = domain.Errorf(domain.EUNAVAILABLE, "configuration is not available")

func (c *configWriter) ready() error {
	if c.config == nil || c.secrets == nil {
		return errNoConfig
	}
	return nil
}

func (h *configHandler) handleConfigFull(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, configResponse{Status: "success", Config: h.w.config.Public()})
	return nil
}

// runConfig runs a configuration command through the command path: the
// state from the config read model, decide, an append to the config stream
// expecting the version decide saw (a conflict is decided again against
// the new state, a few times, then answered 409), and a wait for the
// projections. check, when not nil, vets the decided events before they
// are appended (license keys against the exchange).
func (c *configWriter) run(r *http.Request, decide func(domain.ConfigState) ([]domain.Event, error), check func(context.Context, domain.ConfigState, []domain.Event) error) error {
	if err := c.ready(); err != nil {
		return err
	}
	res, err := eventstore.Run(r.Context(), c.cmds, eventstore.Command[domain.ConfigState]{
		Stream: domain.StreamConfig,
		Load: func(context.Context) (domain.ConfigState, domain.ExpectedVersion, error) {
			st, v := c.config.State()
			return st, v, nil
		},
		Decide:   decide,
		Check:    check,
		Conflict: "the configuration changed during the update; read it again and retry",
	})
	if err == nil && res.Appended() {
		logConfigChange(r, res.Events)
	}
	return err
}

// rules are what the document-replacing commands need.
func (c *configWriter) rules() domain.ConfigRules {
	return domain.ConfigRules{Clock: c.clock, Secrets: c.secrets, RealConnector: c.realConnector}
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

func (h *configHandler) handleConfigUpdate(w http.ResponseWriter, r *http.Request) error {
	var req configUpdateRequest
	if err := decodeJSON(r, &req, false); err != nil {
		return err
	}
	if len(req.Data) == 0 || string(req.Data) == "null" {
		req.Data = req.Config
	}
	if len(req.Data) == 0 || string(req.Data) == "null" {
		return domain.Errorf(domain.EINVALID, "data is required: the new complete configuration (or config, as the SDK sends it)")
	}
	doc, err := domain.DecodeJSONObject(req.Data)
	if err != nil {
		return domain.Errorf(domain.EINVALID, "data %s", domain.ErrorMessage(err))
	}
	err = h.w.run(r, func(st domain.ConfigState) ([]domain.Event, error) {
		return domain.DecideConfigUpdate(st, doc, req.Wallet, h.w.rules())
	}, nil)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, configResponse{Status: "success", Config: h.w.config.Public()})
	return nil
}

type pairAddRequest struct {
	Pair     string         `json:"pair"`
	Exchange string         `json:"exchange"`
	Settings map[string]any `json:"settings"`
}

// defaultPairStrategy is the strategy of a pair added without one: the
// no-op strategy, so that adding a pair never starts trading by itself.
const defaultPairStrategy = "manual"

func (h *configHandler) handleConfigPairAdd(w http.ResponseWriter, r *http.Request) error {
	var req pairAddRequest
	if err := decodeJSON(r, &req, false); err != nil {
		return err
	}
	p, err := pairFromRequest(req)
	if err != nil {
		return err
	}
	return answerConfigOK(w, h.w.run(r, func(st domain.ConfigState) ([]domain.Event, error) {
		return domain.DecidePairAdd(st, p, h.w.clock)
	}, nil))
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

func (h *configHandler) handleConfigPairRemove(w http.ResponseWriter, r *http.Request) error {
	var req pairRemoveRequest
	if err := decodeJSON(r, &req, false); err != nil {
		return err
	}
	if req.Pair == "" || req.Exchange == "" {
		return domain.Errorf(domain.EINVALID, "pair and exchange are required")
	}
	return answerConfigOK(w, h.w.run(r, func(st domain.ConfigState) ([]domain.Event, error) {
		return domain.DecidePairRemove(st, req.Exchange, req.Pair, h.w.clock)
	}, nil))
}

type strategyAddRequest struct {
	Name     string         `json:"name"`
	Settings map[string]any `json:"settings"`
}

func (h *configHandler) handleConfigStrategyAdd(w http.ResponseWriter, r *http.Request) error {
	var req strategyAddRequest
	if err := decodeJSON(r, &req, false); err != nil {
		return err
	}
	if req.Name == "" {
		return domain.Errorf(domain.EINVALID, "name is required")
	}
	if err := domain.ValidateStrategyName(req.Name); err != nil {
		return err
	}
	settings := req.Settings
	if settings == nil {
		settings = map[string]any{}
	}
	if err := domain.CheckStrategyParams("settings", settings); err != nil {
		return err
	}
	return answerConfigOK(w, h.w.run(r, func(st domain.ConfigState) ([]domain.Event, error) {
		return domain.DecideStrategyAdd(st, req.Name, settings, h.w.clock)
	}, nil))
}

type strategyRemoveRequest struct {
	Name string `json:"name"`
}

func (h *configHandler) handleConfigStrategyRemove(w http.ResponseWriter, r *http.Request) error {
	var req strategyRemoveRequest
	if err := decodeJSON(r, &req, false); err != nil {
		return err
	}
	if req.Name == "" {
		return domain.Errorf(domain.EINVALID, "name is required")
	}
	return answerConfigOK(w, h.w.run(r, func(st domain.ConfigState) ([]domain.Event, error) {
		return domain.DecideStrategyRemove(st, req.Name, h.w.clock)
	}, nil))
}
