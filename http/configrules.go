package http

import (
	"net/http"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
)

// The rules of configuration writes (the wallet's proof, trading modes,
// secrets) are decided in domain (config_decide.go); this file keeps what
// belongs to the HTTP side of them.

// logConfigChange logs one line for a configuration change: the route and
// the event types written, never a value (values may be secrets).
func logConfigChange(r *http.Request, events []domain.Event) {
	types := make([]string, len(events))
	for i := range events {
		types[i] = events[i].Type
	}
	logger(r).Info("configuration changed", zap.String("path", r.URL.Path), zap.Strings("events", types), zap.String("actor", subject(r)))
}
