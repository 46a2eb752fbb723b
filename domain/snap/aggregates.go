package snap

import "github.com/tradeledger/tradeledger/domain"

// The domain's aggregates, as more than one projection keeps them (the
// engine's order state, the paper exchange's open orders). A field added
// to them must be added here: TestAggregatesRoundTrip fills every field
// and fails on one left out.

// Order writes o.
func (e *Encoder) Order(o *domain.Order) {
	e.orderRequested(&o.OrderRequested)
	e.Text(string(o.State))
	e.Varint(o.Version)
	e.Text(o.ExchangeOrderID)
	e.Decimal(o.Filled)
	e.Decimal(o.Cost)
	e.Decimal(o.Fees)
	e.Bool(o.CancelRequested)
	e.Bool(o.Triggered)
	e.Bool(o.Resent)
	e.Text(o.Attention)
	e.Decimal(o.Extreme)
	e.Varint(o.Time)
	e.Text(o.Reason)
	e.Len(len(o.FillIDs)) // none is nil: an empty slice is a recycled order's, the same state
	for _, id := range o.FillIDs {
		e.Text(id)
	}
}

func (e *Encoder) orderRequested(r *domain.OrderRequested) {
	e.Varint(r.OrderID)
	e.Text(r.Exchange)
	e.Text(r.Pair)
	e.Text(string(r.Side))
	e.Text(string(r.Kind))
	e.Decimal(r.Amount)
	e.Decimal(r.Price)
	e.Decimal(r.StopPrice)
	e.Decimal(r.LimitPrice)
	e.Text(r.ClientOrderID)
	e.Varint(r.OcoID)
	e.Text(r.IdempotencyKey)
	e.Text(r.IdempotencyFingerprint)
}

// Order reads an Order into o.
func (d *Decoder) Order(o *domain.Order) {
	d.orderRequested(&o.OrderRequested)
	o.State = domain.OrderState(d.Text())
	o.Version = d.Varint()
	o.ExchangeOrderID = d.Text()
	o.Filled = d.Decimal()
	o.Cost = d.Decimal()
	o.Fees = d.Decimal()
	o.CancelRequested = d.Bool()
	o.Triggered = d.Bool()
	o.Resent = d.Bool()
	o.Attention = d.Text()
	o.Extreme = d.Decimal()
	o.Time = d.Varint()
	o.Reason = d.Text()
	o.FillIDs = nil
	if n := d.Len(1); n > 0 {
		o.FillIDs = make([]string, n)
		for i := range o.FillIDs {
			o.FillIDs[i] = d.Text()
		}
	}
}

func (d *Decoder) orderRequested(r *domain.OrderRequested) {
	r.OrderID = d.Varint()
	r.Exchange = d.Text()
	r.Pair = d.Text()
	r.Side = domain.Side(d.Text())
	r.Kind = domain.OrderKind(d.Text())
	r.Amount = d.Decimal()
	r.Price = d.Decimal()
	r.StopPrice = d.Decimal()
	r.LimitPrice = d.Decimal()
	r.ClientOrderID = d.Text()
	r.OcoID = d.Varint()
	r.IdempotencyKey = d.Text()
	r.IdempotencyFingerprint = d.Text()
}

// Oco writes c (its cancelled legs in id order).
func (e *Encoder) Oco(c *domain.Oco) {
	p := &c.OcoPlaced
	e.Varint(p.OcoID)
	e.Text(p.Exchange)
	e.Text(p.Pair)
	e.Text(string(p.Side))
	e.Varint(p.LimitOrderID)
	e.Varint(p.StopOrderID)
	e.Varint(c.Version)
	e.Bool(c.Cancelled == nil)
	ids := make([]int64, 0, len(c.Cancelled))
	for id := range c.Cancelled {
		ids = append(ids, id)
	}
	sortInt64s(ids)
	e.Len(len(ids))
	for _, id := range ids {
		e.Varint(id)
		e.Bool(c.Cancelled[id])
	}
}

// Oco reads an Oco into c.
func (d *Decoder) Oco(c *domain.Oco) {
	p := &c.OcoPlaced
	p.OcoID = d.Varint()
	p.Exchange = d.Text()
	p.Pair = d.Text()
	p.Side = domain.Side(d.Text())
	p.LimitOrderID = d.Varint()
	p.StopOrderID = d.Varint()
	c.Version = d.Varint()
	isNil := d.Bool()
	n := d.Len(2)
	c.Cancelled = nil
	if !isNil {
		c.Cancelled = make(map[int64]bool, n)
	}
	for range n {
		id := d.Varint()
		v := d.Bool()
		if c.Cancelled != nil {
			c.Cancelled[id] = v
		}
	}
}

func sortInt64s(s []int64) {
	for i := 1; i < len(s); i++ { // insertion sort: an OCO has two legs
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
