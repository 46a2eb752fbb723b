package engine

import (
	"context"
	"sync"
	"time"

	"github.com/tradeledger/tradeledger/domain"
)

// Guard returns x with the placement guard every connector the engine
// uses goes through: a client order id sent before is looked up before it
// is sent again (found, or still unknown, is the answer: never send
// blindly), and a placement the exchange refuses as a duplicate of its
// client order id (ECONFLICT) is answered with the order it has. So placing
// one client order id twice never makes two orders, even on an exchange
// that accepts a reused id once the first order is closed (Binance).
// Connectors.Exchange guards what it hands out; the conformance suite
// (exchangetest) runs every connector through Guard.
func Guard(x domain.Exchange) domain.Exchange {
	return guarded{Exchange: x, sent: &sentIDs{}}
}

// guarded is a connector behind the placement guard.
type guarded struct {
	domain.Exchange
	sent *sentIDs
}

func (g guarded) PlaceOrder(ctx context.Context, req domain.PlaceOrderRequest) (domain.ExchangeOrder, error) {
	if g.sent.add(req.ClientOrderID) {
		o, err := g.Exchange.Order(ctx, req.Pair, req.ClientOrderID)
		if domain.ErrorCode(err) != domain.ENOTFOUND {
			return o, err // found, or still unknown: never send blindly
		}
	}
	o, err := g.Exchange.PlaceOrder(ctx, req)
	if domain.ErrorCode(err) == domain.ECONFLICT {
		return g.Exchange.Order(ctx, req.Pair, req.ClientOrderID)
	}
	return o, err
}

// sentIDs are the client order ids a guard has sent.
type sentIDs struct {
	mu  sync.Mutex
	ids map[string]struct{}
}

// add records id and reports whether it was sent before.
func (s *sentIDs) add(id string) (before bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, before = s.ids[id]; !before {
		if s.ids == nil {
			s.ids = map[string]struct{}{}
		}
		s.ids[id] = struct{}{}
	}
	return before
}

// watched is a connector whose failures to answer /healthz reports
// (Connectors.Statuses).
type watched struct {
	domain.Exchange
	c *Connectors
}

func (w watched) Markets(ctx context.Context) ([]domain.Market, error) {
	v, err := w.Exchange.Markets(ctx)
	w.c.note(w.Name(), err)
	return v, err
}

func (w watched) Ticker(ctx context.Context, pair string) (domain.Ticker, error) {
	v, err := w.Exchange.Ticker(ctx, pair)
	w.c.note(w.Name(), err)
	return v, err
}

func (w watched) OrderBook(ctx context.Context, pair string, depth int) (domain.OrderBook, error) {
	v, err := w.Exchange.OrderBook(ctx, pair, depth)
	w.c.note(w.Name(), err)
	return v, err
}

func (w watched) Candles(ctx context.Context, pair string, interval time.Duration, limit int) ([]domain.Candle, error) {
	v, err := w.Exchange.Candles(ctx, pair, interval, limit)
	w.c.note(w.Name(), err)
	return v, err
}

func (w watched) Balances(ctx context.Context) ([]domain.AssetBalance, error) {
	v, err := w.Exchange.Balances(ctx)
	w.c.note(w.Name(), err)
	return v, err
}

func (w watched) PlaceOrder(ctx context.Context, req domain.PlaceOrderRequest) (domain.ExchangeOrder, error) {
	v, err := w.Exchange.PlaceOrder(ctx, req)
	w.c.note(w.Name(), err)
	return v, err
}

func (w watched) CancelOrder(ctx context.Context, pair, orderID string) (domain.ExchangeOrder, error) {
	v, err := w.Exchange.CancelOrder(ctx, pair, orderID)
	w.c.note(w.Name(), err)
	return v, err
}

func (w watched) Order(ctx context.Context, pair, clientOrderID string) (domain.ExchangeOrder, error) {
	v, err := w.Exchange.Order(ctx, pair, clientOrderID)
	w.c.note(w.Name(), err)
	return v, err
}

func (w watched) OpenOrders(ctx context.Context, pair string) ([]domain.ExchangeOrder, error) {
	v, err := w.Exchange.OpenOrders(ctx, pair)
	w.c.note(w.Name(), err)
	return v, err
}

func (w watched) FillsSince(ctx context.Context, since uint64, limit int) ([]domain.Fill, error) {
	v, err := w.Exchange.FillsSince(ctx, since, limit)
	w.c.note(w.Name(), err)
	return v, err
}
