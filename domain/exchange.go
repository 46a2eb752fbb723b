package domain

import (
	"context"
	"strings"
	"time"

	"github.com/tradeledger/tradeledger/domain/decimal"
)

// Pair symbols are "<QUOTE>-<BASE>", quote first: USDT-BTC trades BTC for USDT.

// SplitPair returns the quote and base of a pair symbol, or EINVALID.
func SplitPair(pair string) (quote, base string, err error) {
	quote, base, ok := strings.Cut(pair, "-")
	if !ok || quote == "" || base == "" || strings.Contains(base, "-") {
		return "", "", Errorf(EINVALID, "pair %q must look like QUOTE-BASE, e.g. USDT-BTC", pair)
	}
	return quote, base, nil
}

// MaxPairLen bounds a pair symbol, in bytes.
const MaxPairLen = 32

// ValidatePair returns EINVALID unless pair is a symbol fit to be written
// (an order, a configured pair): QUOTE-BASE, each part ASCII letters and
// digits, at most MaxPairLen bytes in all. SplitPair, which reads, stays
// looser, so that a log written before this rule still reads.
func ValidatePair(pair string) error {
	quote, base, err := SplitPair(pair)
	if err == nil && len(pair) <= MaxPairLen && alnum(quote) && alnum(base) {
		return nil
	}
	return Errorf(EINVALID, "pair %.40q must look like QUOTE-BASE (letters and digits, at most %d bytes), e.g. USDT-BTC", pair, MaxPairLen)
}

func alnum(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// PairKey is "<exchange>/<pair>", the key of per-pair read models.
func PairKey(exchange, pair string) string { return exchange + "/" + pair }

// SplitPairKey splits "<exchange>/<pair>", or returns EINVALID.
func SplitPairKey(key string) (exchange, pair string, err error) {
	exchange, pair, ok := strings.Cut(key, "/")
	if !ok || exchange == "" || pair == "" {
		return "", "", Errorf(EINVALID, "pair key %q must look like <exchange>/<pair>, e.g. binance/USDT-BTC", key)
	}
	return exchange, pair, nil
}

// Market is a tradable pair with its 24-hour statistics.
type Market struct {
	Pair         string
	Base, Quote  string
	Last         decimal.Decimal
	Volume24h    decimal.Decimal // in base units
	Low24h       decimal.Decimal
	High24h      decimal.Decimal
	ChangePct24h decimal.Decimal // percent, e.g. -1.25
	// Filters are the exchange's order rules for the pair; zero when the
	// exchange has none (the paper exchange).
	Filters MarketFilters
}

// MarketFilters are an exchange's rules for a pair's orders (Binance's
// PRICE_FILTER, LOT_SIZE and (MIN_)NOTIONAL). Zero fields mean no rule.
// Connectors apply them before anything is sent: a price is rounded to
// TickSize and an amount down to StepSize; an order still below MinQty or
// MinNotional is refused with EINVALID naming the filter.
type MarketFilters struct {
	TickSize    decimal.Decimal
	StepSize    decimal.Decimal
	MinQty      decimal.Decimal
	MinNotional decimal.Decimal
}

// Apply applies the filters of pair to an order request: the price rounded
// to the tick (buys down, sells up), the amount down to the step. An order
// still below the minimum quantity or notional is EINVALID naming the
// filter. Market orders are checked against the notional at req.Price
// when it is set (the reference price the caller knows).
func (f MarketFilters) Apply(pair string, req PlaceOrderRequest) (PlaceOrderRequest, error) {
	if t := f.TickSize; t.IsPos() && req.Kind == KindLimit {
		if rem := req.Price.Rem(t); !rem.IsZero() {
			req.Price = req.Price.Sub(rem)
			if req.Side == Sell {
				req.Price = req.Price.Add(t)
			}
		}
	}
	if s := f.StepSize; s.IsPos() {
		req.Amount = req.Amount.Sub(req.Amount.Rem(s))
	}
	if req.Amount.Sign() <= 0 || req.Amount.Cmp(f.MinQty) < 0 {
		return req, Errorf(EINVALID, "amt: LOT_SIZE: quantity %s (after rounding to the step %s) is below the minimum quantity %s of %s", req.Amount, f.StepSize, f.MinQty, pair)
	}
	if req.Kind == KindLimit && req.Price.Sign() <= 0 {
		return req, Errorf(EINVALID, "price: PRICE_FILTER: price %s is below the tick %s of %s", req.Price, f.TickSize, pair)
	}
	if f.MinNotional.Sign() > 0 && req.Price.Sign() > 0 {
		if n := req.Amount.Mul(req.Price); n.Cmp(f.MinNotional) < 0 {
			return req, Errorf(EINVALID, "amt: NOTIONAL: notional %s is below the minimum notional %s of %s", n, f.MinNotional, pair)
		}
	}
	return req, nil
}

// Ticker is the best bid, best ask and last trade price of a pair.
type Ticker struct {
	Pair           string
	Bid, Ask, Last decimal.Decimal
	Time           int64 // ms
}

// BookLevel is one price level of an order book.
type BookLevel struct {
	Price, Quantity decimal.Decimal
}

// OrderBook holds bids (best, i.e. highest, first) and asks (best, i.e.
// lowest, first).
type OrderBook struct {
	Pair       string
	Bids, Asks []BookLevel
	Time       int64 // ms
}

// Candle is one OHLCV bar; Time is its opening time in ms.
type Candle struct {
	Time                   int64
	Open, High, Low, Close decimal.Decimal
	Volume                 decimal.Decimal
}

// OrderStatus is an exchange order's state as the exchange reports it.
type OrderStatus string

// Exchange order statuses.
const (
	StatusOpen      OrderStatus = "open"
	StatusFilled    OrderStatus = "filled"
	StatusCancelled OrderStatus = "cancelled"
	StatusRejected  OrderStatus = "rejected"
)

// PlaceOrderRequest asks an exchange for a limit or market order.
// ClientOrderID makes placement idempotent: placing the same ClientOrderID
// again returns the existing order and places nothing.
type PlaceOrderRequest struct {
	ClientOrderID string
	Pair          string
	Side          Side
	Kind          OrderKind       // KindLimit or KindMarket
	Amount        decimal.Decimal // base quantity
	Price         decimal.Decimal // limit price; ignored for market orders
}

// CheckSpot checks what every real spot connector needs before it sends
// a placement: a client order id, a buy or sell, a limit or market kind.
// A violation is EINVALID, naming exchange for an unsupported kind.
func (r PlaceOrderRequest) CheckSpot(exchange string) error {
	if r.ClientOrderID == "" {
		return Errorf(EINVALID, "client order id is required")
	}
	if r.Side != Buy && r.Side != Sell {
		return Errorf(EINVALID, "side must be buy or sell")
	}
	if r.Kind != KindLimit && r.Kind != KindMarket {
		return Errorf(EINVALID, "order kind %q is not supported by %s", r.Kind, exchange)
	}
	return nil
}

// ExchangeOrder is an order as the exchange holds it.
type ExchangeOrder struct {
	ID            string
	ClientOrderID string
	Pair          string
	Side          Side
	Kind          OrderKind
	Price         decimal.Decimal
	Amount        decimal.Decimal
	Filled        decimal.Decimal
	Status        OrderStatus
	Reason        string // why it was rejected or cancelled, if it was
	// Problem, when set, names a number of the answer the connector could
	// not represent (see NumberProblem).
	Problem *NumberProblem
}

// NumberProblem is a number an exchange sent that the ledger cannot hold
// exactly: the field it came in, the exchange's own text, and why. A
// connector reports it (Fill.Problem, ExchangeOrder.Problem) instead of a
// rounded or zeroed value; the engine turns it into OrderNeedsAttention.
type NumberProblem struct {
	Field, Raw, Reason string
}

// ExchangeDecimal parses the decimal text an exchange sent for field: its
// exact value, or the NumberProblem that says why it cannot be held (more
// than 12 decimals, beyond the range, not a decimal number).
func ExchangeDecimal(field, raw string) (decimal.Decimal, *NumberProblem) {
	d, err := decimal.ParseDecimal(raw)
	if err != nil {
		return decimal.Zero, &NumberProblem{Field: field, Raw: raw, Reason: ErrorMessage(err) + " (the ledger holds 12 decimals, up to about 1.7e26)"}
	}
	return d, nil
}

// Fill is one execution. Seq orders an exchange's fills; FillsSince pages
// by it. Problem, when set, names a number of the fill the connector could
// not represent (the fields it could are set); such a fill is never recorded
// as OrderFilled.
type Fill struct {
	ID            string
	Seq           uint64
	OrderID       string
	ClientOrderID string
	Pair          string
	Side          Side
	Price         decimal.Decimal
	Quantity      decimal.Decimal
	Fee           decimal.Decimal
	FeeAsset      string
	Time          int64 // ms
	Problem       *NumberProblem
	// QuoteQuantity is the exchange's own amount of quote of the trade,
	// when it gives one (the account's history; zero: price × quantity).
	QuoteQuantity decimal.Decimal
}

// Exchange is a connector to one exchange account. Every
// connector passes the conformance suite in exchange/exchangetest.
//
// Errors: an unknown pair or order is ENOTFOUND; a refused order
// (insufficient funds, below minimum) is EINVALID with the exchange's
// reason; a network failure or timeout is EUNAVAILABLE, after which the
// caller must reconcile (look the order up by ClientOrderID) instead of
// placing it again.
type Exchange interface {
	// Name is the exchange's name in the configuration.
	Name() string
	// Markets lists the tradable pairs with their 24-hour statistics.
	Markets(ctx context.Context) ([]Market, error)
	// Ticker returns a pair's best bid, ask and last price.
	Ticker(ctx context.Context, pair string) (Ticker, error)
	// OrderBook returns up to depth levels on each side.
	OrderBook(ctx context.Context, pair string, depth int) (OrderBook, error)
	// Candles returns up to limit bars of the interval, oldest first.
	Candles(ctx context.Context, pair string, interval time.Duration, limit int) ([]Candle, error)
	// Balances returns every asset's available and on-order amounts.
	Balances(ctx context.Context) ([]AssetBalance, error)
	// PlaceOrder places an order, idempotently per ClientOrderID.
	PlaceOrder(ctx context.Context, req PlaceOrderRequest) (ExchangeOrder, error)
	// CancelOrder cancels an open order; cancelling a finished order is
	// ECONFLICT.
	CancelOrder(ctx context.Context, pair, orderID string) (ExchangeOrder, error)
	// Order looks an order up by its ClientOrderID (ENOTFOUND if never
	// placed), for reconciliation after a failure.
	Order(ctx context.Context, pair, clientOrderID string) (ExchangeOrder, error)
	// OpenOrders lists a pair's open orders ("" for every pair).
	OpenOrders(ctx context.Context, pair string) ([]ExchangeOrder, error)
	// FillsSince returns up to limit fills with Seq > since, in Seq order.
	FillsSince(ctx context.Context, since uint64, limit int) ([]Fill, error)
}
