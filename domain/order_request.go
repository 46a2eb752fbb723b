package domain

// OrderRequest is a request to place an order, from the API or a strategy.
// Kind selects which price fields matter:
//
//	limit:        Price (limit price)
//	market:       Price optional (reference; 0 = current market price)
//	stoplimit:    StopPrice (trigger), LimitPrice (limit after the trigger)
//	trailingstop: Price (reference price), StopPrice (initial trailing stop)
//
// IdempotencyKey, when set, makes a retried request return the first
// request's answer and place nothing new.
type OrderRequest struct {
	Exchange       string
	Pair           string
	Side           Side
	Kind           OrderKind
	Amount         Decimal
	Price          Decimal
	StopPrice      Decimal
	LimitPrice     Decimal
	IdempotencyKey string
	Actor          string
	Correlation    string
}
