package main

import (
	"context"
	"fmt"
	"strings"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/secrets"
	"github.com/tradeledger/tradeledger/exchange"
	"github.com/tradeledger/tradeledger/exchange/binance"
	"github.com/tradeledger/tradeledger/exchange/ccxt"
	"github.com/tradeledger/tradeledger/exchange/engine"
	"github.com/tradeledger/tradeledger/exchange/paper"
	tlhttp "github.com/tradeledger/tradeledger/http"
	"github.com/tradeledger/tradeledger/projections"
)

// connectorList is every exchange connector this binary has, one line
// each: adding a connector is its package and its line here. The engine
// chooses one per configured exchange (engine.Connectors.Choose). ccxt's
// descriptor in a binary built without -tags ccxt says how to build one
// that has it.
func connectorList(sim *paper.Simulator) []exchange.Connector {
	return []exchange.Connector{
		sim.Connector(),
		binance.Connector,
		ccxt.Connector,
	}
}

// newConnectors wires the engine's chooser to this binary's connectors,
// the configuration read model and the stored (encrypted) credentials.
func (m *Main) newConnectors(configView *projections.Config) (*engine.Connectors, error) {
	box, err := secrets.NewSecretBox(m.DataDir.MasterKey)
	if err != nil {
		return nil, fmt.Errorf("master key: %w", err)
	}
	return &engine.Connectors{
		List:   connectorList(m.Simulator),
		Config: configView.Current,
		Keys: func(exchange string) (map[string]string, error) {
			out := map[string]string{}
			for field, ct := range configView.Ciphertexts(exchange) {
				v, err := box.Open(ct)
				if err != nil {
					return nil, domain.Errorf(domain.EINVALID, "the stored %s of exchange %s cannot be decrypted with this master key", field, exchange)
				}
				out[strings.ToLower(field)] = v
			}
			return out, nil
		},
		Now:  m.Clock.Now,
		URLs: m.ConnectorURLs,
	}, nil
}

// connectorStatuses is Connectors.Statuses as /healthz shows them.
func (m *Main) connectorStatuses() []tlhttp.ConnectorStatus {
	var out []tlhttp.ConnectorStatus
	for _, s := range m.Connectors.Statuses() {
		out = append(out, tlhttp.ConnectorStatus{Exchange: s.Exchange, Connector: s.Connector, Reason: s.Reason, Error: s.Error})
	}
	return out
}

// logConnectors logs which connector each configured exchange uses.
func (m *Main) logConnectors() {
	for _, ch := range m.Connectors.Choices() {
		log := m.Logger.Info
		if ch.Fallback {
			log = m.Logger.Warn
		}
		log("exchange connector", zap.String("exchange", ch.Exchange), zap.String("connector", ch.Connector), zap.String("reason", ch.Reason))
	}
}

// verifyKeys checks an exchange's new keys with its real connector
// (engine.Connectors.VerifyKeys) and logs what the check could not refuse:
// keys that may withdraw, or a connector that cannot tell.
func (m *Main) verifyKeys(ctx context.Context, cfg domain.Config, exchange string, fields map[string]string) error {
	kc, ch, checked, err := m.Connectors.VerifyKeys(ctx, cfg, exchange, fields)
	switch {
	case err != nil:
		return err
	case !checked:
		m.Logger.Info("exchange keys not checked: the exchange trades on paper", zap.String("exchange", exchange), zap.String("reason", ch.Reason))
	case kc.Withdraw:
		m.Logger.Warn("exchange keys may withdraw funds: a trading bot needs only reading and spot trading; create keys without withdrawal permission",
			zap.String("exchange", exchange))
	case kc.Unknown:
		m.Logger.Info("exchange keys accepted; "+ch.Connector+" cannot tell whether they may withdraw: create keys without withdrawal permission",
			zap.String("exchange", exchange), zap.String("connector", ch.Connector))
	}
	return nil
}
