package main

import (
	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/snap"
)

// activityLog is a projection that logs, from the log itself, what
// happens while the service runs: orders placed (accepted by the
// exchange), filled, cancelled and rejected; the bot started and stopped;
// password changes; and configuration or data written by another process
// (import, passwd) beside the service: one info line each, never a secret
// (an import's orders and files are left to its own summary line).
// Events at or before After (the head when the service started) are
// history and are not logged.
type activityLog struct {
	Logger *zap.Logger
	After  uint64
}

func (*activityLog) Name() string { return "activity-log" }

// Apply logs e's line. A payload that does not decode logs no line and is
// returned as an error (EINVALID, naming the event's stream and version):
// the runner's OnError logs it with the event's position (serve.go), so
// that a malformed event is seen, not skipped.
func (p *activityLog) Apply(e *domain.Event) error {
	if e.Position <= p.After {
		return nil
	}
	if e.Actor == domain.ActorImport && e.Type != domain.TypeConfigReplaced {
		return nil // an import's history: its own summary line says it
	}
	ev := []zap.Field{zap.String("stream", e.Stream), zap.String("actor", e.Actor), zap.Uint64("position", e.Position)}
	switch e.Type {
	case domain.TypeOrderAccepted, domain.TypeOrderFilled, domain.TypeOrderCancelled, domain.TypeOrderRejected:
		msg, fields, err := orderLine(e)
		if err != nil {
			return err
		}
		p.Logger.Info(msg, append(ev, fields...)...)
	case domain.TypeSystemStarted:
		p.Logger.Info("bot started: the core cycles the enabled pairs", ev...)
	case domain.TypeSystemStopped:
		p.Logger.Info("bot stopped", ev...)
	case domain.TypePasswordSet:
		var d domain.PasswordSet
		if err := e.Decode(&d); err != nil {
			return err
		}
		p.Logger.Info("login password changed; earlier tokens are revoked", append(ev, zap.Int64("generation", d.Generation))...)
	case domain.TypeConfigReplaced, domain.TypePairAdded, domain.TypePairRemoved, domain.TypeStrategyAdded, domain.TypeStrategyRemoved,
		domain.TypeExchangeKeysSet, domain.TypeFileWritten, domain.TypeFileDeleted:
		// The API logs its own changes with the request; these came from
		// another process (import, passwd) beside the service.
		if e.Actor == domain.ActorImport || e.Actor == domain.ActorCLI {
			p.Logger.Info("configuration changed by "+e.Actor+" beside the service", append(ev, zap.String("type", e.Type))...)
		}
	}
	return nil
}

// orderLine returns the message and fields of an order event's line
// (accepted, filled, cancelled or rejected), or the error Decode gives for
// a payload that does not decode.
func orderLine(e *domain.Event) (msg string, fields []zap.Field, err error) {
	switch e.Type {
	case domain.TypeOrderAccepted:
		var d domain.OrderAccepted
		err = e.Decode(&d)
		msg, fields = "order placed", []zap.Field{zap.String("exchange_order_id", d.ExchangeOrderID)}
	case domain.TypeOrderFilled:
		var d domain.OrderFilled
		err = e.Decode(&d)
		msg, fields = "order filled", []zap.Field{zap.String("price", d.Price.String()), zap.String("quantity", d.Quantity.String()),
			zap.String("fee", d.Fee.String()), zap.String("fee_asset", d.FeeAsset)}
	case domain.TypeOrderCancelled:
		var d domain.OrderCancelled
		err = e.Decode(&d)
		msg, fields = "order cancelled", []zap.Field{zap.String("remaining", d.Remaining.String()), zap.String("reason", d.Reason)}
	case domain.TypeOrderRejected:
		var d domain.OrderRejected
		err = e.Decode(&d)
		msg, fields = "order rejected", []zap.Field{zap.String("reason", d.Reason)}
	}
	return msg, fields, err
}

// SnapshotVersion implements projections.Snapshotter.
func (*activityLog) SnapshotVersion() uint32 { return 1 }

// Freeze implements projections.Snapshotter: the activity log folds
// nothing (it logs the events after After, the head at start), so its
// state in a snapshot is empty.
func (*activityLog) Freeze() func(*snap.Encoder) { return func(*snap.Encoder) {} }

// Load implements projections.Snapshotter (an empty state).
func (*activityLog) Load(*snap.Decoder) (func(), error) { return func() {}, nil }
