package domain

import (
	"encoding/json"
	"strconv"

	"github.com/tradeledger/tradeledger/domain/decimal"
)

// Stream names.
const (
	StreamConfig      = "config"
	StreamCredentials = "credentials"
	StreamSystem      = "system"
	StreamAuth        = "auth"
	// StreamTokens holds the scoped API tokens' lives (TokenCreated,
	// TokenRevoked).
	StreamTokens = "tokens"
	// StreamCheckpoints holds the signed checkpoints of the log's Merkle
	// tree (CheckpointSigned), one per checkpoint issued.
	StreamCheckpoints = "checkpoints"
	// StreamLogCuts holds the operator's decisions to go on with a log
	// cut at its end (LogCutAccepted).
	StreamLogCuts = "log-cuts"
	// StreamSnapshots holds what serve found of the read-model snapshots
	// it started from (SnapshotDiscarded).
	StreamSnapshots = "snapshots"
)

// OrderStream is the stream of one order's life.
func OrderStream(id int64) string { return "order-" + strconv.FormatInt(id, 10) }

// OcoStream is the stream of one OCO pair.
func OcoStream(id int64) string { return "oco-" + strconv.FormatInt(id, 10) }

// ImportedOrderIDs is the first id of the range imports give the orders
// they add (domain/gunbot: time-ordered ids from 2^51, legacy ones from
// 2^52). The trading engine numbers the orders and OCOs it places itself
// below it, from 1, whatever an import added: an imported history leaves
// the next order of this service #3 after #2, not a 16-digit id.
const ImportedOrderIDs = int64(1) << 51

// FileStream is the stream of one file (kind is acvar, autoconfig, backup,
// custom-editor, state or strategy).
func FileStream(kind, name string) string { return "file-" + kind + "-" + name }

// BalanceStream is the stream of balances observed on one exchange.
func BalanceStream(exchange string) string { return "balance-" + exchange }

// RateStream is the stream of currency rates observed on one exchange
// (RateObserved).
func RateStream(exchange string) string { return "rate-" + exchange }

// Event types. Add new ones freely; never remove or repurpose one, since the
// log keeps them forever.
const (
	TypeOrderRequested       = "OrderRequested"
	TypeOrderAccepted        = "OrderAccepted"
	TypeOrderRejected        = "OrderRejected"
	TypeOrderFilled          = "OrderFilled"
	TypeOrderCancelRequested = "OrderCancelRequested"
	TypeOrderCancelled       = "OrderCancelled"
	TypeStopTriggered        = "StopTriggered"
	TypeTrailingStopMoved    = "TrailingStopMoved"
	TypeOrderExpired         = "OrderExpired"
	TypeOrderOutcomeUnknown  = "OrderOutcomeUnknown"
	TypeOrderResent          = "OrderResent"
	// An exchange sent a number of the order the ledger cannot hold; its
	// pair pauses until the operator clears it.
	TypeOrderNeedsAttention   = "OrderNeedsAttention"
	TypeOrderAttentionCleared = "OrderAttentionCleared"

	TypeOcoPlaced       = "OcoPlaced"
	TypeOcoLegCancelled = "OcoLegCancelled"

	TypeConfigReplaced  = "ConfigReplaced"
	TypePairAdded       = "PairAdded"
	TypePairRemoved     = "PairRemoved"
	TypeStrategyAdded   = "StrategyAdded"
	TypeStrategyRemoved = "StrategyRemoved"

	TypeExchangeKeysSet = "ExchangeKeysSet"
	TypePasswordSet     = "PasswordSet"

	TypeFileWritten = "FileWritten"
	TypeFileDeleted = "FileDeleted"

	TypeSystemStarted = "SystemStarted"
	TypeSystemStopped = "SystemStopped"

	TypeBalancesObserved = "BalancesObserved"
	TypeRateObserved     = "RateObserved"

	TypeLoginSucceeded = "LoginSucceeded"
	TypeLoginFailed    = "LoginFailed"

	TypeTokenCreated = "TokenCreated"
	TypeTokenRevoked = "TokenRevoked"

	TypeCheckpointSigned = "CheckpointSigned"
	// A witness's answer to a checkpoint sent to it (DESIGN §19).
	TypeCheckpointCosigned = "CheckpointCosigned"
	TypeWitnessRefused     = "WitnessRefused"
	TypeLogCutAccepted     = "LogCutAccepted"

	// A read-model snapshot proved not to hold the log's state; serve
	// switched to the state rebuilt from the log and deleted it.
	TypeSnapshotDiscarded = "SnapshotDiscarded"
)

// Side is buy or sell.
type Side string

// Sides.
const (
	Buy  Side = "buy"
	Sell Side = "sell"
)

// OrderKind says how an order executes.
type OrderKind string

// Order kinds. Stop-limit and trailing-stop orders are held by the core's
// order manager until they fire; then they rest on the exchange as limit
// orders.
const (
	KindLimit        OrderKind = "limit"
	KindMarket       OrderKind = "market"
	KindStopLimit    OrderKind = "stoplimit"
	KindTrailingStop OrderKind = "trailingstop"
)

// OrderRequested opens an order's stream (version 0). Price is the limit
// price (for market orders, the market price used as reference). StopPrice
// and LimitPrice are set for stop-limit orders (and the stop leg of an
// OCO); for trailing stops StopPrice is the initial stop and Price the
// reference price. ClientOrderID is sent to the exchange so that a retry
// never places a second order.
type OrderRequested struct {
	OrderID       int64           `json:"orderId"`
	Exchange      string          `json:"exchange"`
	Pair          string          `json:"pair"`
	Side          Side            `json:"side"`
	Kind          OrderKind       `json:"kind"`
	Amount        decimal.Decimal `json:"amount"`
	Price         decimal.Decimal `json:"price"`
	StopPrice     decimal.Decimal `json:"stopPrice,omitzero"`
	LimitPrice    decimal.Decimal `json:"limitPrice,omitzero"`
	ClientOrderID string          `json:"clientOrderId"`
	OcoID         int64           `json:"ocoId,omitempty"`
	// IdempotencyKey is the client's Idempotency-Key, kept so that a retry
	// after a restart still finds the first answer.
	IdempotencyKey string `json:"idempotencyKey,omitempty"`
	// IdempotencyFingerprint is a digest of the request the key answered
	// (operation, exchange, pair, side, kind, amount, prices), so that the
	// key reused with a different request is refused, after a restart too.
	// Empty in events written before it existed.
	IdempotencyFingerprint string `json:"idempotencyFingerprint,omitempty"`
}

// OrderAccepted says the exchange holds the order (or, for emulated kinds,
// the order manager does).
type OrderAccepted struct {
	ExchangeOrderID string `json:"exchangeOrderId,omitempty"`
}

// OrderRejected ends an order that was never placed.
type OrderRejected struct {
	Reason string `json:"reason"`
}

// OrderFilled records one fill, partial or full. Fee is in FeeAsset.
type OrderFilled struct {
	FillID   string          `json:"fillId"`
	Price    decimal.Decimal `json:"price"`
	Quantity decimal.Decimal `json:"quantity"`
	Fee      decimal.Decimal `json:"fee"`
	FeeAsset string          `json:"feeAsset"`
	// Seq is the exchange's fill sequence (the FillsSince cursor).
	Seq uint64 `json:"seq,omitempty"`
	// ExchangeTime is the exchange's own time of the fill (ms since the
	// epoch; 0 when the exchange gave none). Order records and PNL days
	// use it (FillTime); the envelope time is when the service recorded
	// the fill, which can be later.
	ExchangeTime int64 `json:"exchangeTime,omitempty"`
}

// FillTime is the trade time of a fill: its ExchangeTime, or, for fills
// recorded without one (older logs, imports), the time of the event e that
// carries it, so that old logs replay as they always did.
func FillTime(e *Event, f *OrderFilled) int64 {
	if f.ExchangeTime > 0 {
		return f.ExchangeTime
	}
	return e.Time
}

// OrderCancelRequested records that a client asked to cancel.
type OrderCancelRequested struct {
	Reason string `json:"reason,omitempty"`
}

// OrderCancelled ends an order; Remaining is the unfilled quantity.
type OrderCancelled struct {
	Remaining decimal.Decimal `json:"remaining"`
	Reason    string          `json:"reason,omitempty"`
}

// StopTriggered records that a stop-limit or trailing stop fired at
// MarketPrice; the order then rests as a limit order at LimitPrice.
type StopTriggered struct {
	MarketPrice decimal.Decimal `json:"marketPrice"`
	LimitPrice  decimal.Decimal `json:"limitPrice"`
}

// TrailingStopMoved records a new stop for a trailing stop, after the market
// reached Extreme (the lowest price for a buy, the highest for a sell).
type TrailingStopMoved struct {
	StopPrice decimal.Decimal `json:"stopPrice"`
	Extreme   decimal.Decimal `json:"extreme"`
}

// OrderExpired ends an order the exchange dropped.
type OrderExpired struct {
	Reason string `json:"reason,omitempty"`
}

// OrderOutcomeUnknown records that a placement got no answer (a timeout, a
// 5xx, a dropped connection): the order may or may not exist on the
// exchange. It stays requested while the order manager looks it up by its
// client order id.
type OrderOutcomeUnknown struct {
	Reason string `json:"reason"`
}

// OrderResent records the one re-send of an order after a look-up by its
// client order id found nothing on the exchange. An order is re-sent at
// most once; NotFound is how many look-ups had found nothing.
type OrderResent struct {
	Reason   string `json:"reason"`
	NotFound int    `json:"notFound"`
}

// OrderNeedsAttention records that an exchange sent a number of the order
// (a fill's price, quantity or fee, or the order's own figures) that the
// ledger cannot represent exactly: more than 12 decimals, beyond the range,
// not a decimal, or a fill whose value (price × quantity) is beyond the
// range. The fill is not recorded (never as 0 or rounded); trading on the
// order's pair pauses until OrderAttentionCleared. Raw is the exchange's own
// text of the number; FillID and Seq name the fill (empty for an order's
// answer), so that it is not read again.
type OrderNeedsAttention struct {
	Exchange string `json:"exchange"`
	Pair     string `json:"pair"`
	FillID   string `json:"fillId,omitempty"`
	Seq      uint64 `json:"seq,omitempty"`
	Field    string `json:"field"`
	Raw      string `json:"raw"`
	Reason   string `json:"reason"`
}

// OrderAttentionCleared records that the operator has dealt with an order's
// OrderNeedsAttention (tradeledger attention clear): its pair trades again.
// Note is the operator's own words (what was done about the fill).
type OrderAttentionCleared struct {
	Exchange string `json:"exchange"`
	Pair     string `json:"pair"`
	Note     string `json:"note,omitempty"`
}

// OcoPlaced links an OCO's two orders.
type OcoPlaced struct {
	OcoID        int64  `json:"ocoId"`
	Exchange     string `json:"exchange"`
	Pair         string `json:"pair"`
	Side         Side   `json:"side"`
	LimitOrderID int64  `json:"limitOrderId"`
	StopOrderID  int64  `json:"stopOrderId"`
}

// OcoLegCancelled records that one leg was cancelled because the other
// filled.
type OcoLegCancelled struct {
	OrderID     int64 `json:"orderId"`
	FilledLegID int64 `json:"filledLegId"`
}

// ConfigReplaced carries the full configuration document, secrets removed
// (they live in the credentials stream, encrypted).
type ConfigReplaced struct {
	Config json.RawMessage `json:"config"`
}

// PairAdded sets config.pairs.<exchange>.<pair>.
type PairAdded struct {
	Exchange string          `json:"exchange"`
	Pair     string          `json:"pair"`
	Strategy string          `json:"strategy"`
	Enabled  bool            `json:"enabled"`
	Override json.RawMessage `json:"override,omitempty"`
}

// PairRemoved deletes config.pairs.<exchange>.<pair>.
type PairRemoved struct {
	Exchange string `json:"exchange"`
	Pair     string `json:"pair"`
}

// StrategyAdded sets config.strategies.<name>.
type StrategyAdded struct {
	Name     string          `json:"name"`
	Settings json.RawMessage `json:"settings,omitempty"`
}

// StrategyRemoved deletes config.strategies.<name>.
type StrategyRemoved struct {
	Name string `json:"name"`
}

// ExchangeKeysSet stores one exchange's credentials. Secret fields hold
// AES-256-GCM ciphertext (base64 of nonce||sealed), never clear text.
type ExchangeKeysSet struct {
	Exchange string            `json:"exchange"`
	Fields   map[string]string `json:"fields"`
}

// PasswordSet stores the argon2id hash (PHC string) of the login password.
// Generation increases with every change; tokens carry it, so a change
// revokes older tokens.
type PasswordSet struct {
	Hash       string `json:"hash"`
	Generation int64  `json:"generation"`
}

// FileWritten stores a file's whole content. Content is the file's JSON
// document, or a JSON string for text files such as strategies.
type FileWritten struct {
	Kind    string          `json:"kind"`
	Name    string          `json:"name"`
	Content json.RawMessage `json:"content"`
	SHA256  string          `json:"sha256"`
}

// FileDeleted removes a file.
type FileDeleted struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

// SystemStarted and SystemStopped switch the core on and off.
type SystemStarted struct{}

// SystemStopped switches the core off.
type SystemStopped struct{}

// AssetBalance is one asset's balance on an exchange.
type AssetBalance struct {
	Asset     string          `json:"asset"`
	Available decimal.Decimal `json:"available"`
	OnOrder   decimal.Decimal `json:"onOrder"`
}

// BalancesObserved records an exchange's balances when they changed.
type BalancesObserved struct {
	Exchange string         `json:"exchange"`
	Balances []AssetBalance `json:"balances"`
}

// RateObserved records the price of Base in Quote on an exchange (1 Base =
// Rate Quote), as the core saw it while cycling the pair Quote-Base. The
// PNL read model converts amounts between currencies with these rates (and
// with the prices of fills), so that conversions come from the log and
// replay gives the same figures.
type RateObserved struct {
	Exchange string          `json:"exchange"`
	Base     string          `json:"base"`
	Quote    string          `json:"quote"`
	Rate     decimal.Decimal `json:"rate"`
}

// LoginSucceeded records a login; Subject is the token subject.
type LoginSucceeded struct {
	Subject    string `json:"subject"`
	RemoteAddr string `json:"remoteAddr"`
}

// LoginFailed records a refused login, without the attempted secret.
type LoginFailed struct {
	RemoteAddr string `json:"remoteAddr"`
	Reason     string `json:"reason"`
}

// TokenCreated records a scoped API token (tradeledger token create). The
// token itself is never stored: only its id (the JWT's jti), which the
// server looks up on every request; the token's signature proves the rest.
type TokenCreated struct {
	Name    string `json:"name"`
	Scope   Scope  `json:"scope"`
	ID      string `json:"id"`
	Expires int64  `json:"expires"` // ms since the epoch
}

// TokenRevoked ends the named token before it expires.
type TokenRevoked struct {
	Name string `json:"name"`
	ID   string `json:"id"`
}

// CheckpointSigned records a signed checkpoint of the log's Merkle tree
// (DESIGN §13): the tree of the log's first Size events has root Root
// (standard base64, as the checkpoint text has it), as Origin's key
// signed it in Note, the signed note exactly as served (the C2SP
// checkpoint text, a blank line, the signature lines). Everything in it
// is public: the signature, never the key.
type CheckpointSigned struct {
	Origin string `json:"origin"`
	Size   int64  `json:"size"`
	Root   string `json:"root"`
	Note   string `json:"note"`
}

// CheckpointCosigned records that a witness cosigned the checkpoint of
// Origin's tree of Size records with root Root (c2sp.org/tlog-witness):
// Signature is its cosignature line ("— name base64\n",
// c2sp.org/tlog-cosignature), verified with Key (the witness's verifier
// key) before it was recorded, which the checkpoint's note carries from
// then on; Time is the cosignature's timestamp (Unix seconds, the
// witness's clock), URL where the witness was reached.
type CheckpointCosigned struct {
	Origin    string `json:"origin"`
	Size      int64  `json:"size"`
	Root      string `json:"root"`
	Witness   string `json:"witness"`
	Key       string `json:"key"`
	URL       string `json:"url"`
	Time      int64  `json:"time"`
	Signature string `json:"signature"`
}

// WitnessRefused records that a witness refused the checkpoint of
// Origin's tree of Size records as inconsistent with what it cosigned
// before (it holds WitnessSize records of a log under the same origin, -1
// when it did not say): the log was forked, rewritten or cut under the
// same key. Status is the witness's HTTP answer, Reason what it or the
// client found.
type WitnessRefused struct {
	Origin      string `json:"origin"`
	Size        int64  `json:"size"`
	Root        string `json:"root"`
	Witness     string `json:"witness"`
	Key         string `json:"key"`
	URL         string `json:"url"`
	WitnessSize int64  `json:"witnessSize"`
	Status      int    `json:"status"`
	Reason      string `json:"reason"`
}

// LogCutAccepted records an operator's decision to go on with a log whose
// end was cut (tradeledger serve --accept-truncated-log), never taken
// silently: the Merkle tree held TreeRecords records and the last
// checkpoint signed (Checkpoint, its note as it was) covered Checkpoint.Size
// events, but the log held only the first Kept of them. The events at
// positions LostFrom to LostTo are gone for good: those the tree recorded
// and the checkpoint's own event, as far as either names them. The tree
// was cut back to Kept records, and the checkpoint signed next says so
// in an extension line. Problem is what the check found, in plain words.
type LogCutAccepted struct {
	Kept        int64             `json:"kept"`
	TreeRecords int64             `json:"treeRecords"`
	Checkpoint  *CheckpointSigned `json:"checkpoint,omitempty"`
	LostFrom    uint64            `json:"lostFrom"`
	LostTo      uint64            `json:"lostTo"`
	Problem     string            `json:"problem"`
}

// SnapshotDiscarded records that the read-model snapshot File (its name),
// of the log up to Position, did not hold the state the log implies there:
// Projections differ, the first of them at Value (a path in its state),
// which is Snapshot in the file and Log in the state rebuilt from the log.
// Replaced says whether serve switched to the rebuilt state in place (else
// Reason says why not: a restart rebuilds it). The file is deleted.
type SnapshotDiscarded struct {
	File        string   `json:"file"`
	Position    uint64   `json:"position"`
	Projections []string `json:"projections"`
	Value       string   `json:"value,omitempty"`
	Snapshot    string   `json:"snapshot,omitempty"`
	Log         string   `json:"log,omitempty"`
	Signed      bool     `json:"signed"`
	Replaced    bool     `json:"replaced"`
	Reason      string   `json:"reason,omitempty"`
}
