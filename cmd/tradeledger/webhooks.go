package main

import (
	"context"
	"fmt"
	"os"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain/audit"
	tlhttp "github.com/tradeledger/tradeledger/http"
	"github.com/tradeledger/tradeledger/projections"
	"github.com/tradeledger/tradeledger/projections/webhook"
)

// newWebhooks makes the webhook notifier, a projection: it sends
// only events after the head as of now (a restart does not repeat history)
// to config.notifications.webhooks, read from the configuration at each
// event, so a config change applies at once.
func (m *Main) newWebhooks(ctx context.Context, config *projections.Config) error {
	head, err := m.DataDir.Store.Head(ctx)
	if err != nil {
		return err
	}
	n := webhook.NewNotifier(func() []webhook.Target {
		targets, _ := webhook.Targets(config.Current(), os.Getenv)
		return targets
	})
	n.From, n.Logger = head, m.Logger.Named("webhook")
	m.Webhooks = n
	return nil
}

// startWebhooks starts the sender once the replay is done, and says which
// configured webhooks are refused.
func (m *Main) startWebhooks(config *projections.Config) {
	if _, errs := webhook.Targets(config.Current(), os.Getenv); len(errs) > 0 {
		for _, err := range errs {
			m.Logger.Warn("webhook left out", zap.Error(err))
		}
	}
	m.Webhooks.Start()
}

// wireWebhooks makes audit/verify failures notify the webhooks that want
// verifyFailures.
func (m *Main) wireWebhooks(s *tlhttp.Server) {
	s.Audit.OnVerifyFailure(func(sum audit.VerifySummary) {
		id := fmt.Sprintf("verify-%d-%d", sum.LastPosition, sum.FaultCount)
		m.Webhooks.Notify("verifyFailures", "VerifyFailed", id, sum)
	})
}
