package domain

import "github.com/tradeledger/tradeledger/domain/decimal"

// OrderRequest is a request to place an order, from the API or a strategy.
// Kind selects which price fields matter:
//
//	limit:        Price (limit price)
//	market:       Price optional (reference; 0 = current market price)
//	stoplimit:    StopPrice (trigger), LimitPrice (limit after the trigger)
//	trailingstop: Price (reference price), StopPrice (initial trailing stop)
//	OCO:          Price (limit leg), StopPrice and LimitPrice (stop-limit leg)
//
// IdempotencyKey, when set, makes a retried request return the first
// request's answer and place nothing new.
type OrderRequest struct {
	Exchange       string
	Pair           string
	Side           Side
	Kind           OrderKind
	Amount         decimal.Decimal
	Price          decimal.Decimal
	StopPrice      decimal.Decimal
	LimitPrice     decimal.Decimal
	IdempotencyKey string
	Actor          string
	Correlation    string
}

// MaxIdempotencyKey bounds an order request's IdempotencyKey, in bytes.
const MaxIdempotencyKey = 200

// Validate checks the fields of a single order (limit, market, stop-limit,
// trailing-stop) that need no exchange state: EINVALID naming the API's
// field (exch, pair, side, type, amt, price, stopPrice, limitPrice,
// Idempotency-Key). Whether the pair is listed, the exchange is cycling
// and the account can pay are the engine's to check.
func (r OrderRequest) Validate() error { return r.validate(false, false) }

// ValidateOCO is Validate for an OCO: price (the limit leg), stopPrice and
// limit (the stop-limit leg's limit price, named as the API names it).
func (r OrderRequest) ValidateOCO() error { return r.validate(true, false) }

// ValidateClose is Validate for closing a position: an Amount of 0 means
// all of the held base, so only a negative one is refused.
func (r OrderRequest) ValidateClose() error { return r.validate(false, true) }

func (r OrderRequest) validate(oco, close bool) error {
	if err := ValidateTradeTarget(r.Exchange, r.Pair); err != nil {
		return err
	}
	if r.Side != Buy && r.Side != Sell {
		return Errorf(EINVALID, "field \"side\" must be buy or sell")
	}
	if len(r.IdempotencyKey) > MaxIdempotencyKey {
		return Errorf(EINVALID, "header Idempotency-Key is longer than %d characters", MaxIdempotencyKey)
	}
	if close && r.Amount.Sign() < 0 {
		return Errorf(EINVALID, "field \"amt\" must be greater than 0 when given")
	} else if !close {
		if err := positiveField("amt", r.Amount); err != nil {
			return err
		}
	}
	if oco {
		return firstErr(positiveField("price", r.Price), positiveField("stopPrice", r.StopPrice), positiveField("limit", r.LimitPrice))
	}
	switch r.Kind {
	case KindLimit:
		return positiveField("price", r.Price)
	case KindMarket:
		if r.Price.Sign() < 0 {
			return Errorf(EINVALID, "field \"price\" must be greater than 0 when given (0 or none: the market price)")
		}
		return nil
	case KindStopLimit:
		return firstErr(positiveField("stopPrice", r.StopPrice), positiveField("limitPrice", r.LimitPrice))
	case KindTrailingStop:
		if err := firstErr(positiveField("price", r.Price), positiveField("stopPrice", r.StopPrice)); err != nil {
			return err
		}
		if r.StopPrice == r.Price {
			// Their difference is the trailing distance (Trail).
			return Errorf(EINVALID, "field \"stopPrice\" must differ from price; their difference is the trailing distance")
		}
		return nil
	}
	return Errorf(EINVALID, "field \"type\": unknown order kind %q (limit, market, stoplimit or trailingstop)", r.Kind)
}

// ValidateTradeTarget checks the exchange name and the pair symbol of a
// trade call (an order, a cancel): EINVALID naming the field exch or pair.
func ValidateTradeTarget(exchange, pair string) error {
	if exchange == "" {
		return Errorf(EINVALID, "field \"exch\" is required")
	}
	if err := ValidateExchangeName(exchange); err != nil {
		return Errorf(EINVALID, "field \"exch\": %s", ErrorMessage(err))
	}
	if pair == "" {
		return Errorf(EINVALID, "field \"pair\" is required")
	}
	if err := ValidatePair(pair); err != nil {
		return Errorf(EINVALID, "field \"pair\": %s", ErrorMessage(err))
	}
	return nil
}

// positiveField refuses a missing (0) or negative amount or price.
func positiveField(field string, v decimal.Decimal) error {
	switch v.Sign() {
	case 0:
		return Errorf(EINVALID, "field %q is required and must be greater than 0", field)
	case -1:
		return Errorf(EINVALID, "field %q must be greater than 0", field)
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Requested is the OrderRequested payload of the order this request
// places under orderID (a leg of OCO ocoID, or 0), keeping the request's
// Idempotency-Key with fingerprint, the digest of the request it answers.
// The client order id is set by Order.DecideRequest.
func (r OrderRequest) Requested(orderID, ocoID int64, fingerprint string) OrderRequested {
	p := OrderRequested{
		OrderID: orderID, Exchange: r.Exchange, Pair: r.Pair, Side: r.Side, Kind: r.Kind,
		Amount: r.Amount, Price: r.Price, StopPrice: r.StopPrice, LimitPrice: r.LimitPrice,
		OcoID: ocoID, IdempotencyKey: r.IdempotencyKey,
	}
	if r.IdempotencyKey != "" {
		p.IdempotencyFingerprint = fingerprint
	}
	return p
}
