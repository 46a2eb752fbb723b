package engine

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/streams"
)

// Attention is the orders that need attention, a projection of the log: an
// exchange sent a number of the order that the ledger cannot hold
// (domain.OrderNeedsAttention). The fill is not recorded; the order's pair
// pauses — Trader.Submit refuses new orders on it with ECONFLICT (409)
// saying why — until the operator clears every such order of the pair
// (OrderAttentionCleared: Trader.ClearAttention, `tradeledger attention
// clear`). It is kept apart from Orders: a finished order leaves memory,
// its attention does not.
type Attention struct {
	mu    sync.Mutex
	state map[pairRef]map[int64]string // pair → order id → why it needs attention
}

// NeedsAttention is one order that needs attention, as /healthz lists it.
type NeedsAttention struct {
	Exchange, Pair string
	OrderID        int64
	Reason         string
}

// Name implements projections.Projection.
func (a *Attention) Name() string { return "engine-attention" }

// Apply implements projections.Projection: it folds OrderNeedsAttention
// and OrderAttentionCleared of the order streams.
func (a *Attention) Apply(e *domain.Event) error {
	if e.Type != domain.TypeOrderNeedsAttention && e.Type != domain.TypeOrderAttentionCleared {
		return nil
	}
	id, ok := streams.StreamID(e.Stream, "order-")
	if !ok {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if e.Type == domain.TypeOrderNeedsAttention {
		var p domain.OrderNeedsAttention
		if err := e.Decode(&p); err != nil {
			return err
		}
		if a.state == nil {
			a.state = map[pairRef]map[int64]string{}
		}
		k := pairRef{p.Exchange, p.Pair}
		if a.state[k] == nil {
			a.state[k] = map[int64]string{}
		}
		what := "a number"
		if p.FillID != "" {
			what = "fill " + p.FillID
		}
		a.state[k][id] = fmt.Sprintf("%s of order %d: %s %q: %s", what, id, p.Field, p.Raw, p.Reason)
		return nil
	}
	var p domain.OrderAttentionCleared
	if err := e.Decode(&p); err != nil {
		return err
	}
	k := pairRef{p.Exchange, p.Pair}
	delete(a.state[k], id)
	if len(a.state[k]) == 0 {
		delete(a.state, k)
	}
	return nil
}

// paused returns why trading on exchange's pair is paused, or "".
func (a *Attention) paused(exchange, pair string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	orders := a.state[pairRef{exchange, pair}]
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

// List returns the orders that need attention, by exchange, pair and
// order id.
func (a *Attention) List() []NeedsAttention {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []NeedsAttention
	for k, orders := range a.state {
		for id, why := range orders {
			out = append(out, NeedsAttention{Exchange: k.exchange, Pair: k.pair, OrderID: id, Reason: why})
		}
	}
	slices.SortFunc(out, func(x, y NeedsAttention) int {
		return cmp.Or(cmp.Compare(x.Exchange, y.Exchange), cmp.Compare(x.Pair, y.Pair), cmp.Compare(x.OrderID, y.OrderID))
	})
	return out
}

// Summary is List as one line for /healthz ("" when nothing needs
// attention).
func (a *Attention) Summary() string {
	list := a.List()
	if len(list) == 0 {
		return ""
	}
	parts := make([]string, len(list))
	for i, n := range list {
		parts[i] = n.Exchange + " " + n.Pair + " paused: " + n.Reason
	}
	return strings.Join(parts, "; ")
}
