package engine

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/tradeledger/tradeledger/domain"
)

// Orders that need attention: an exchange sent a number of the order that
// the ledger cannot hold (domain.OrderNeedsAttention). The fill is not
// recorded; the order's pair pauses — Submit refuses new orders on it with
// ECONFLICT (409) saying why — until the operator clears every such order of
// the pair (OrderAttentionCleared, `tradeledger attention clear`). The
// Trader keeps them apart from its orders: a finished order leaves memory,
// its attention does not.

// Attention is one order that needs attention, as /healthz lists it.
type Attention struct {
	Exchange, Pair string
	OrderID        int64
	Reason         string
}

// applyAttention folds OrderNeedsAttention and OrderAttentionCleared of
// order id. The caller holds t.mu.
func (t *Trader) applyAttention(id int64, e *domain.Event) error {
	ref := func(exchange, pair string) pairRef { return pairRef{exchange, pair} }
	switch e.Type {
	case domain.TypeOrderNeedsAttention:
		var p domain.OrderNeedsAttention
		if err := e.Decode(&p); err != nil {
			return err
		}
		if t.attention == nil {
			t.attention = map[pairRef]map[int64]string{}
		}
		k := ref(p.Exchange, p.Pair)
		if t.attention[k] == nil {
			t.attention[k] = map[int64]string{}
		}
		what := "a number"
		if p.FillID != "" {
			what = "fill " + p.FillID
		}
		t.attention[k][id] = fmt.Sprintf("%s of order %d: %s %q: %s", what, id, p.Field, p.Raw, p.Reason)
		if p.Seq > t.cursor[p.Exchange] {
			t.cursor[p.Exchange] = p.Seq // read: not asked for again
		}
	case domain.TypeOrderAttentionCleared:
		var p domain.OrderAttentionCleared
		if err := e.Decode(&p); err != nil {
			return err
		}
		k := ref(p.Exchange, p.Pair)
		delete(t.attention[k], id)
		if len(t.attention[k]) == 0 {
			delete(t.attention, k)
		}
	}
	return nil
}

// paused returns why trading on exchange's pair is paused, or "".
func (t *Trader) paused(exchange, pair string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	orders := t.attention[pairRef{exchange, pair}]
	if len(orders) == 0 {
		return ""
	}
	ids := make([]int64, 0, len(orders))
	for id := range orders {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return orders[ids[0]]
}

// pausedErr is Submit's refusal on a paused pair.
func pausedErr(exchange, pair, why string) error {
	return domain.Errorf(domain.ECONFLICT, "trading on %s %s is paused: %s; once it is dealt with, `tradeledger attention clear --order ID` resumes it",
		exchange, pair, why)
}

// NeedsAttention lists the orders that need attention, by exchange, pair
// and order id.
func (t *Trader) NeedsAttention() []Attention {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []Attention
	for k, orders := range t.attention {
		for id, why := range orders {
			out = append(out, Attention{Exchange: k.exchange, Pair: k.pair, OrderID: id, Reason: why})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Exchange != b.Exchange {
			return a.Exchange < b.Exchange
		}
		if a.Pair != b.Pair {
			return a.Pair < b.Pair
		}
		return a.OrderID < b.OrderID
	})
	return out
}

// AttentionSummary is NeedsAttention as one line for /healthz ("" when
// nothing needs attention).
func (t *Trader) AttentionSummary() string {
	list := t.NeedsAttention()
	if len(list) == 0 {
		return ""
	}
	parts := make([]string, len(list))
	for i, a := range list {
		parts[i] = a.Exchange + " " + a.Pair + " paused: " + a.Reason
	}
	return strings.Join(parts, "; ")
}

// ClearAttention appends OrderAttentionCleared for order id with the
// operator's note: its pair trades again once no other order of it needs
// attention. An order that needs none is ECONFLICT.
func (t *Trader) ClearAttention(ctx context.Context, id int64, note string) error {
	en := t.entry(id)
	if en == nil {
		return domain.Errorf(domain.ENOTFOUND, "order %d is not open in this process", id)
	}
	a := t.newAppender(domain.ActorCLI, "")
	en.op.Lock()
	_, err := a.order(ctx, en, id, func(o domain.Order) ([]domain.Event, error) { return o.DecideClearAttention(t.Clock, note) })
	en.op.Unlock()
	return a.finish(ctx, err)
}
