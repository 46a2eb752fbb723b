package domain

import (
	"context"
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/jsonscan"
)

// The account's activity (DESIGN §18): everything an exchange account did,
// whether this service caused it or not, recorded once per fact in the
// exchange's account stream, keyed by the exchange's own id (DerivedEventID
// of the exchange, the kind and that id), so that a fact read again — a
// restart, an overlapping window, a retry — appends nothing:
//
//   - ExternalFill: a trade on the account that the service did not place
//     (by hand on the exchange's site, another bot). A fill of an order of
//     this service is an OrderFilled in its order's stream, as always; one
//     the exchange lists but the log lacks is backfilled there, by the
//     actor ActorSync.
//   - Deposit and Withdrawal (Transfer): one event per status the exchange
//     gave the transfer, so that a deposit seen pending and later credited
//     is two facts; a withdrawal's network fee is a cost in its asset.
//   - Conversion: dust converted (to BNB on Binance), a convert trade, a
//     conversion in an exchange's ledger.
//   - AccountOpened: the exchange's balances at the moment this service
//     first synced the account, stated as such: the opening balance of the
//     reconciliation (docs/auditing.md). Facts with an exchange time at or
//     before it are already in it; later ones move the balance the ledger
//     implies.
//   - ActivitySynced: how far the account's history of one kind (and one
//     market, for trades listed per market) has been read: the sync's
//     cursor, so that a backfill resumes where it stopped.
//   - FillMismatch and FillUnlisted: a fill of the service's own that the
//     exchange lists with other numbers, or does not list at all. The log's
//     fill stays as it is (never deleted nor rewritten): the difference is
//     recorded beside it.
//   - BalanceDiscrepancy and BalanceDiscrepancyCleared: the balance the
//     ledger implies for an asset differs from the exchange's, and when the
//     difference went.

// AccountStream is the stream of an exchange account's activity.
func AccountStream(exchange string) string { return "account-" + exchange }

// ActorSync is the actor of what the account's sync records: the facts it
// reads from an exchange's history, and the fills of the service's own
// orders it backfills (an OrderFilled by ActorSync is a fill the log lacked
// until the sync found it on the exchange).
const ActorSync = "sync"

// Event types of the account's activity.
const (
	TypeAccountOpened             = "AccountOpened"
	TypeExternalFill              = "ExternalFill"
	TypeDeposit                   = "Deposit"
	TypeWithdrawal                = "Withdrawal"
	TypeConversion                = "Conversion"
	TypeActivitySynced            = "ActivitySynced"
	TypeFillMismatch              = "FillMismatch"
	TypeFillUnlisted              = "FillUnlisted"
	TypeBalanceDiscrepancy        = "BalanceDiscrepancy"
	TypeBalanceDiscrepancyCleared = "BalanceDiscrepancyCleared"
)

// ExternalFill is a trade on the account that the service did not place.
// It carries everything an own fill does: the exchange's trade id and order
// id, the pair, side, price, quantity (base), fee and fee asset, and the
// exchange's time of the trade. QuoteQuantity is the exchange's own amount
// of quote, when it gives one (zero: price × quantity).
type ExternalFill struct {
	Exchange      string          `json:"exchange"`
	Pair          string          `json:"pair"`
	TradeID       string          `json:"tradeId"`
	OrderID       string          `json:"orderId,omitempty"`
	ClientOrderID string          `json:"clientOrderId,omitempty"`
	Side          Side            `json:"side"`
	Price         decimal.Decimal `json:"price"`
	Quantity      decimal.Decimal `json:"quantity"`
	QuoteQuantity decimal.Decimal `json:"quoteQuantity,omitzero"`
	Fee           decimal.Decimal `json:"fee"`
	FeeAsset      string          `json:"feeAsset"`
	Time          int64           `json:"time"`
}

// TransferStatus is a deposit's or a withdrawal's state, the same words
// for every exchange (Transfer.ExchangeStatus keeps the exchange's own).
type TransferStatus string

// Transfer statuses. A deposit is in the balance once credited (the
// exchange may still hold it back from withdrawals) or completed; a
// withdrawal leaves the balance when requested (pending) and comes back
// only when it failed or was cancelled.
const (
	TransferPending   TransferStatus = "pending"
	TransferCredited  TransferStatus = "credited"
	TransferCompleted TransferStatus = "completed"
	TransferFailed    TransferStatus = "failed"
	TransferCancelled TransferStatus = "cancelled"
)

// Transfer is a deposit or a withdrawal as the exchange lists it (the
// payload of Deposit and Withdrawal). Amount is what arrived (a deposit)
// or what was sent (a withdrawal); Fee is a withdrawal's network fee,
// charged in Asset on top of Amount: a cost, not a disposal. Address and
// AddressTag are kept masked (MaskAddress): the log needs to tell two
// destinations apart, not to hold them. Time is the exchange's time of the
// transfer (when it was requested or first seen).
type Transfer struct {
	Exchange       string          `json:"exchange"`
	ID             string          `json:"id"`
	Asset          string          `json:"asset"`
	Amount         decimal.Decimal `json:"amount"`
	Fee            decimal.Decimal `json:"fee,omitzero"`
	Network        string          `json:"network,omitempty"`
	TxID           string          `json:"txid,omitempty"`
	Address        string          `json:"address,omitempty"`
	AddressTag     string          `json:"addressTag,omitempty"`
	Status         TransferStatus  `json:"status"`
	ExchangeStatus string          `json:"exchangeStatus,omitempty"`
	Time           int64           `json:"time"`
	// Problem, when set, names a number of the transfer the connector
	// could not represent; such a transfer is never recorded.
	Problem *NumberProblem `json:"-"`
}

// Conversion kinds.
const (
	ConversionDust    = "dust"    // small balances converted (Binance: to BNB)
	ConversionConvert = "convert" // the exchange's convert (a quote accepted)
	ConversionLedger  = "ledger"  // a conversion an exchange's ledger lists
)

// Conversion is an amount of one asset converted into another outside the
// order book. FromAmount left the account, ToAmount arrived in it; Fee, in
// FeeAsset, is what the exchange charged for it and is already out of
// those amounts (shown, not moved again).
type Conversion struct {
	Exchange   string          `json:"exchange"`
	ID         string          `json:"id"`
	Kind       string          `json:"kind"`
	FromAsset  string          `json:"fromAsset"`
	FromAmount decimal.Decimal `json:"fromAmount"`
	ToAsset    string          `json:"toAsset"`
	ToAmount   decimal.Decimal `json:"toAmount"`
	Fee        decimal.Decimal `json:"fee,omitzero"`
	FeeAsset   string          `json:"feeAsset,omitempty"`
	Time       int64           `json:"time"`
	// Problem: as Transfer's.
	Problem *NumberProblem `json:"-"`
}

// AccountOpened states an exchange account's balances at Time (ms), when
// this service first synced it: the opening balance the ledger implies
// every later balance from (docs/auditing.md, "Reconciled"). Facts with an
// exchange time at or before Time are in these balances already; the
// history read back before it is recorded all the same, and counted in
// the activity, but moves nothing.
type AccountOpened struct {
	Exchange string         `json:"exchange"`
	Time     int64          `json:"time"`
	Balances []AssetBalance `json:"balances"`
}

// ActivityKind names a kind of account activity an exchange lists.
type ActivityKind string

// Activity kinds, in the order a sync reads them.
const (
	ActivityTrades      ActivityKind = "trades"
	ActivityDeposits    ActivityKind = "deposits"
	ActivityWithdrawals ActivityKind = "withdrawals"
	ActivityConversions ActivityKind = "conversions"
)

// ActivityKinds are every kind, in sync order.
var ActivityKinds = []ActivityKind{ActivityTrades, ActivityDeposits, ActivityWithdrawals, ActivityConversions}

// ActivitySynced records that the account's history of Kind (in Scope:
// the market, for trades an exchange lists per market; "" otherwise) was
// read for exchange times in [From, Through), Listed facts of which
// Recorded were new to the log.
type ActivitySynced struct {
	Exchange string       `json:"exchange"`
	Kind     ActivityKind `json:"kind"`
	Scope    string       `json:"scope,omitempty"`
	From     int64        `json:"from"`
	Through  int64        `json:"through"`
	Listed   int          `json:"listed"`
	Recorded int          `json:"recorded"`
}

// FillMismatch records that the exchange lists a fill of the service's own
// order with numbers other than the log's: Field, the log's value and the
// exchange's (Listed). The log's fill is not changed.
type FillMismatch struct {
	Exchange string `json:"exchange"`
	Pair     string `json:"pair"`
	OrderID  int64  `json:"orderId"`
	FillID   string `json:"fillId"`
	Field    string `json:"field"`
	Log      string `json:"log"`
	Listed   string `json:"listed"`
	Time     int64  `json:"time"` // the fill's trade time
}

// FillUnlisted records that the exchange's history, read for the fill's
// time, did not list a fill the log holds of the service's own order. The
// log's fill is not deleted.
type FillUnlisted struct {
	Exchange string `json:"exchange"`
	Pair     string `json:"pair"`
	OrderID  int64  `json:"orderId"`
	FillID   string `json:"fillId"`
	Time     int64  `json:"time"` // the fill's trade time
}

// BalanceDiscrepancy records that the balance the ledger implies for Asset
// on the account (Ledger) differs from the exchange's (Exchange), by
// Difference = Exchange − Ledger, since Since (ms: the check that first
// saw a difference). A difference that changes while it lasts is recorded
// again with the same Since.
type BalanceDiscrepancy struct {
	Account    string          `json:"account"`
	Asset      string          `json:"asset"`
	Ledger     decimal.Decimal `json:"ledger"`
	Exchange   decimal.Decimal `json:"exchange"`
	Difference decimal.Decimal `json:"difference"`
	Since      int64           `json:"since"`
}

// BalanceDiscrepancyCleared records that the asset's balances agree again
// (both are Balance): the discrepancy recorded since Since is over.
type BalanceDiscrepancyCleared struct {
	Account string          `json:"account"`
	Asset   string          `json:"asset"`
	Balance decimal.Decimal `json:"balance"`
	Since   int64           `json:"since"`
}

// AssetDelta is a change of one asset's balance.
type AssetDelta struct {
	Asset  string
	Amount decimal.Decimal
}

// TradeDeltas returns what a trade moves on the account: the base by the
// quantity, the quote by quote (price × quantity when quote is zero), the
// other way for a sell, and the fee out of its asset (the quote when
// feeAsset is empty). A pair that is not QUOTE-BASE moves nothing.
func TradeDeltas(pair string, side Side, price, qty, quote, fee decimal.Decimal, feeAsset string) []AssetDelta {
	q, b, err := SplitPair(pair)
	if err != nil {
		return nil
	}
	if quote.IsZero() {
		quote = price.Mul(qty)
	}
	if side == Sell {
		qty, quote = qty.Neg(), quote.Neg()
	}
	if feeAsset == "" {
		feeAsset = q
	}
	out := []AssetDelta{{b, qty}, {q, quote.Neg()}}
	if !fee.IsZero() {
		out = append(out, AssetDelta{feeAsset, fee.Neg()})
	}
	return out
}

// Deltas returns what the external trade moves (TradeDeltas).
func (f *ExternalFill) Deltas() []AssetDelta {
	return TradeDeltas(f.Pair, f.Side, f.Price, f.Quantity, f.QuoteQuantity, f.Fee, f.FeeAsset)
}

// InBalance reports whether a transfer in this status is in the balance: a
// deposit once credited or completed, a withdrawal unless it failed or was
// cancelled.
func (s TransferStatus) InBalance(deposit bool) bool {
	if deposit {
		return s == TransferCredited || s == TransferCompleted
	}
	return s != TransferFailed && s != TransferCancelled
}

// Final reports whether a transfer in this status changes no more.
func (s TransferStatus) Final() bool {
	return s == TransferCompleted || s == TransferFailed || s == TransferCancelled
}

// Effect returns what the transfer, in its status, moves of its asset: a
// deposit's amount in, a withdrawal's amount and fee out, or nothing.
func (t *Transfer) Effect(deposit bool) decimal.Decimal {
	switch {
	case !t.Status.InBalance(deposit):
		return decimal.Zero
	case deposit:
		return t.Amount
	}
	return t.Amount.Add(t.Fee).Neg()
}

// Deltas returns what the conversion moves: FromAmount out, ToAmount in.
func (c *Conversion) Deltas() []AssetDelta {
	return []AssetDelta{{c.FromAsset, c.FromAmount.Neg()}, {c.ToAsset, c.ToAmount}}
}

// Validate returns EINVALID naming what is wrong with an external trade an
// exchange listed: a pair, a side, a trade id, positive price and quantity,
// a fee that is not negative.
func (f *ExternalFill) Validate() error {
	switch {
	case f.TradeID == "":
		return Errorf(EINVALID, "%s: a trade without an id", f.Exchange)
	case f.Side != Buy && f.Side != Sell:
		return Errorf(EINVALID, "%s trade %s: side %q is neither buy nor sell", f.Exchange, f.TradeID, f.Side)
	case !f.Price.IsPos() || !f.Quantity.IsPos():
		return Errorf(EINVALID, "%s trade %s: price %s and quantity %s must be positive", f.Exchange, f.TradeID, f.Price, f.Quantity)
	case f.Fee.IsNeg():
		return Errorf(EINVALID, "%s trade %s: negative fee %s", f.Exchange, f.TradeID, f.Fee)
	}
	if _, _, err := SplitPair(f.Pair); err != nil {
		return Errorf(EINVALID, "%s trade %s: %s", f.Exchange, f.TradeID, ErrorMessage(err))
	}
	return nil
}

// Validate returns EINVALID naming what is wrong with a transfer an
// exchange listed, or the number it sent that the ledger cannot hold.
func (t *Transfer) Validate() error {
	switch {
	case t.Problem != nil:
		return Errorf(EINVALID, "%s transfer %s sent %s %q, which the ledger cannot hold: %s", t.Exchange, t.ID, t.Problem.Field, t.Problem.Raw, t.Problem.Reason)
	case t.ID == "":
		return Errorf(EINVALID, "%s: a transfer without an id", t.Exchange)
	case t.Asset == "":
		return Errorf(EINVALID, "%s transfer %s: no asset", t.Exchange, t.ID)
	case t.Amount.IsNeg() || t.Fee.IsNeg():
		return Errorf(EINVALID, "%s transfer %s: negative amount %s or fee %s", t.Exchange, t.ID, t.Amount, t.Fee)
	}
	switch t.Status {
	case TransferPending, TransferCredited, TransferCompleted, TransferFailed, TransferCancelled:
		return nil
	}
	return Errorf(EINVALID, "%s transfer %s: unknown status %q", t.Exchange, t.ID, t.Status)
}

// Validate returns EINVALID naming what is wrong with a conversion an
// exchange listed, or the number it sent that the ledger cannot hold.
func (c *Conversion) Validate() error {
	switch {
	case c.Problem != nil:
		return Errorf(EINVALID, "%s conversion %s sent %s %q, which the ledger cannot hold: %s", c.Exchange, c.ID, c.Problem.Field, c.Problem.Raw, c.Problem.Reason)
	case c.ID == "":
		return Errorf(EINVALID, "%s: a conversion without an id", c.Exchange)
	case c.FromAsset == "" || c.ToAsset == "":
		return Errorf(EINVALID, "%s conversion %s: an asset is missing", c.Exchange, c.ID)
	case c.FromAmount.IsNeg() || c.ToAmount.IsNeg() || c.Fee.IsNeg():
		return Errorf(EINVALID, "%s conversion %s: negative amounts", c.Exchange, c.ID)
	}
	return nil
}

// MaskAddress keeps the first and last four characters of a deposit or
// withdrawal address (or tag), enough to tell two apart, and masks the
// rest; one of eight characters or fewer is masked whole.
func MaskAddress(s string) string {
	if s == "" {
		return ""
	}
	if len(s) <= 8 {
		return strings.Repeat("*", len(s))
	}
	return s[:4] + "…" + s[len(s)-4:]
}

// transferEventID is the id of one status of a transfer in its kind's
// events (DecideTransfer).
func transferEventID(exchange string, deposit bool, t *Transfer) string {
	kind := "withdrawal"
	if deposit {
		kind = "deposit"
	}
	return DerivedEventID(exchange, kind, t.ID, string(t.Status))
}

// ExternalFillEventID is the id of the event recording an exchange's trade
// as external: a function of the exchange and its trade id.
func ExternalFillEventID(exchange, tradeID string) string {
	return DerivedEventID(exchange, "trade", tradeID)
}

// DecideExternalFill returns the ExternalFill of a trade the service did
// not place, with an event id derived from the exchange's trade id (so
// that recording it twice appends once), or EINVALID (Validate).
func DecideExternalFill(clock Clock, f ExternalFill) ([]Event, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	// A backfill records them by the hundred thousand: the payload is
	// written field by field (the bytes encoding/json would write: a test
	// holds them equal), not through reflection.
	e := Event{ID: ExternalFillEventID(f.Exchange, f.TradeID), Type: TypeExternalFill, Schema: 1, Time: clock.Now().UnixMilli(),
		Data: f.appendJSON(make([]byte, 0, 320))}
	return []Event{e}, nil
}

// UnmarshalJSON reads an ExternalFill: a flat payload (what appendJSON
// writes) in one pass over its fields, anything else through
// encoding/json. The read models apply them by the hundred thousand after
// a backfill.
func (f *ExternalFill) UnmarshalJSON(b []byte) error {
	var out ExternalFill
	bad := false
	text := func(v []byte) string {
		if len(v) < 2 || v[0] != '"' {
			bad = true
			return ""
		}
		return string(v[1 : len(v)-1])
	}
	dec := func(v []byte) decimal.Decimal {
		d, err := decimal.ParseDecimal(text(v))
		if err != nil {
			bad = true
		}
		return d
	}
	ok := jsonscan.FlatObject(b, func(k, v []byte) {
		switch string(k) {
		case "exchange":
			out.Exchange = text(v)
		case "pair":
			out.Pair = text(v)
		case "tradeId":
			out.TradeID = text(v)
		case "orderId":
			out.OrderID = text(v)
		case "clientOrderId":
			out.ClientOrderID = text(v)
		case "side":
			out.Side = Side(text(v))
		case "price":
			out.Price = dec(v)
		case "quantity":
			out.Quantity = dec(v)
		case "quoteQuantity":
			out.QuoteQuantity = dec(v)
		case "fee":
			out.Fee = dec(v)
		case "feeAsset":
			out.FeeAsset = text(v)
		case "time":
			t, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil {
				bad = true
			}
			out.Time = t
		default:
			bad = true // a field this version does not know: encoding/json decides
		}
	})
	if !ok || bad {
		type plain ExternalFill
		var p plain
		if err := json.Unmarshal(b, &p); err != nil {
			return err
		}
		*f = ExternalFill(p)
		return nil
	}
	*f = out
	return nil
}

// appendJSON appends the ExternalFill's JSON, as encoding/json writes it.
func (f *ExternalFill) appendJSON(b []byte) []byte {
	dec := func(b []byte, key string, d decimal.Decimal) []byte {
		b = append(b, key...)
		b = append(b, '"')
		b = d.Append(b)
		return append(b, '"')
	}
	b = append(b, `{"exchange":`...)
	b = AppendJSONString(b, f.Exchange)
	b = append(b, `,"pair":`...)
	b = AppendJSONString(b, f.Pair)
	b = append(b, `,"tradeId":`...)
	b = AppendJSONString(b, f.TradeID)
	if f.OrderID != "" {
		b = append(b, `,"orderId":`...)
		b = AppendJSONString(b, f.OrderID)
	}
	if f.ClientOrderID != "" {
		b = append(b, `,"clientOrderId":`...)
		b = AppendJSONString(b, f.ClientOrderID)
	}
	b = append(b, `,"side":`...)
	b = AppendJSONString(b, string(f.Side))
	b = dec(b, `,"price":`, f.Price)
	b = dec(b, `,"quantity":`, f.Quantity)
	if !f.QuoteQuantity.IsZero() {
		b = dec(b, `,"quoteQuantity":`, f.QuoteQuantity)
	}
	b = dec(b, `,"fee":`, f.Fee)
	b = append(b, `,"feeAsset":`...)
	b = AppendJSONString(b, f.FeeAsset)
	b = append(b, `,"time":`...)
	b = strconv.AppendInt(b, f.Time, 10)
	return append(b, '}')
}

// DecideTransfer returns the Deposit (deposit) or Withdrawal of a transfer
// in its current status, with an event id derived from the exchange's id
// of the transfer and the status: each status is recorded once. Address and
// tag are masked here whatever the connector gave. EINVALID: Validate.
func DecideTransfer(clock Clock, deposit bool, t Transfer) ([]Event, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	t.Address, t.AddressTag = maskOnce(t.Address), maskOnce(t.AddressTag)
	typ := TypeWithdrawal
	if deposit {
		typ = TypeDeposit
	}
	e := NewEvent(clock, typ, t)
	e.ID = transferEventID(t.Exchange, deposit, &t)
	return []Event{e}, nil
}

// maskOnce masks an address unless it is masked already.
func maskOnce(s string) string {
	if strings.Contains(s, "…") || (s != "" && strings.Trim(s, "*") == "") {
		return s
	}
	return MaskAddress(s)
}

// DecideConversion returns the Conversion, with an event id derived from
// the exchange's id of it. EINVALID: Validate.
func DecideConversion(clock Clock, c Conversion) ([]Event, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	e := NewEvent(clock, TypeConversion, c)
	e.ID = DerivedEventID(c.Exchange, "conversion", c.ID)
	return []Event{e}, nil
}

// DecideAccountOpened returns the AccountOpened stating balances at time
// t (ms) as the account's opening, unless it was opened already. Its id
// is a function of the exchange: an exchange is opened once.
func DecideAccountOpened(clock Clock, opened bool, exchange string, t int64, balances []AssetBalance) []Event {
	if opened {
		return nil
	}
	bs := append([]AssetBalance(nil), balances...)
	sort.Slice(bs, func(i, j int) bool { return bs[i].Asset < bs[j].Asset })
	e := NewEvent(clock, TypeAccountOpened, AccountOpened{Exchange: exchange, Time: t, Balances: bs})
	e.ID = DerivedEventID(exchange, "opened")
	return []Event{e}
}

// DecideActivitySynced returns the ActivitySynced of a window read, with
// an id derived from the window, so that the same window recorded twice
// appends once.
func DecideActivitySynced(clock Clock, s ActivitySynced) []Event {
	e := NewEvent(clock, TypeActivitySynced, s)
	e.ID = DerivedEventID(s.Exchange, "synced", string(s.Kind), s.Scope, strconv.FormatInt(s.From, 10), strconv.FormatInt(s.Through, 10),
		strconv.Itoa(s.Listed), strconv.Itoa(s.Recorded))
	return []Event{e}
}

// DecideFillMismatch returns the FillMismatch of an own fill the exchange
// lists with another number, once per fill, field and listed value.
func DecideFillMismatch(clock Clock, m FillMismatch) []Event {
	e := NewEvent(clock, TypeFillMismatch, m)
	e.ID = DerivedEventID(m.Exchange, "mismatch", m.FillID, m.Field, m.Listed)
	return []Event{e}
}

// DecideFillUnlisted returns the FillUnlisted of an own fill the exchange
// does not list, once per fill.
func DecideFillUnlisted(clock Clock, u FillUnlisted) []Event {
	e := NewEvent(clock, TypeFillUnlisted, u)
	e.ID = DerivedEventID(u.Exchange, "unlisted", u.FillID)
	return []Event{e}
}

// CompareFill returns the first field in which an exchange's listing of a
// fill differs from the log's (price, quantity, fee, fee asset; "" when
// they agree), with the log's and the listed value.
func CompareFill(log *OrderFilled, listed *Fill) (field, logValue, listedValue string) {
	switch {
	case log.Price.Cmp(listed.Price) != 0:
		return "price", log.Price.String(), listed.Price.String()
	case log.Quantity.Cmp(listed.Quantity) != 0:
		return "quantity", log.Quantity.String(), listed.Quantity.String()
	case log.Fee.Cmp(listed.Fee) != 0:
		return "fee", log.Fee.String(), listed.Fee.String()
	case log.FeeAsset != listed.FeeAsset && !(log.Fee.IsZero() && listed.Fee.IsZero()):
		return "feeAsset", log.FeeAsset, listed.FeeAsset
	}
	return "", "", ""
}

// DecideBalanceCheck compares, per asset, the balance the ledger implies
// (implied) with the exchange's (reported: available + on order) at now,
// against the discrepancies still open (open, by asset), and returns a
// BalanceDiscrepancy for every asset that differs now and was not open
// with that difference, and a BalanceDiscrepancyCleared for every open
// one that agrees again. Assets absent on one side count as zero there.
// Nothing differs to the unit: the comparison is exact.
func DecideBalanceCheck(clock Clock, account string, implied map[string]decimal.Decimal, reported []AssetBalance, open map[string]BalanceDiscrepancy, now int64) []Event {
	ex := map[string]decimal.Decimal{}
	for _, b := range reported {
		ex[b.Asset] = ex[b.Asset].Add(b.Available).Add(b.OnOrder)
	}
	assets := map[string]bool{}
	for a := range implied {
		assets[a] = true
	}
	for a := range ex {
		assets[a] = true
	}
	for a := range open {
		assets[a] = true
	}
	names := make([]string, 0, len(assets))
	for a := range assets {
		names = append(names, a)
	}
	sort.Strings(names)
	var out []Event
	for _, a := range names {
		l, x := implied[a], ex[a]
		diff := x.Sub(l)
		o, isOpen := open[a]
		switch {
		case diff.IsZero() && isOpen:
			out = append(out, NewEvent(clock, TypeBalanceDiscrepancyCleared, BalanceDiscrepancyCleared{Account: account, Asset: a, Balance: x, Since: o.Since}))
		case diff.IsZero():
		case isOpen && o.Difference.Cmp(diff) == 0 && o.Ledger.Cmp(l) == 0:
		default:
			since := now
			if isOpen {
				since = o.Since
			}
			out = append(out, NewEvent(clock, TypeBalanceDiscrepancy, BalanceDiscrepancy{Account: account, Asset: a, Ledger: l, Exchange: x, Difference: diff, Since: since}))
		}
	}
	return out
}

// ActivityQuery asks an exchange for the account's history of Kind in
// Scope (AccountHistory.ActivityScopes) with exchange times in [From, To)
// (ms).
type ActivityQuery struct {
	Kind     ActivityKind
	Scope    string
	From, To int64
}

// ActivityPage is one answer of AccountHistory.Activity: the facts of the
// query's kind with times in [From, Next), every one of them, and Next,
// how far the answer goes (Next == To: the window is read). Trades are
// fills as FillsSince gives them (their ClientOrderID tells the service's
// own), with QuoteQuantity when the exchange has it.
type ActivityPage struct {
	Trades      []Fill
	Transfers   []Transfer
	Conversions []Conversion
	Next        int64
}

// AccountHistory is what a connector implements to list the account's
// whole activity (every exchange connector does; DESIGN §18). Errors are
// the connector's usual ones (EUNAVAILABLE for an exchange that does not
// answer: asked again later).
type AccountHistory interface {
	// ActivityScopes returns the scopes the account's activity of kind
	// is listed in: [""] when one list has it all, else one per market
	// (Binance lists trades per symbol): the configured pairs and the
	// markets between the assets given (held now, at the opening, or
	// moved by a transfer or a conversion).
	ActivityScopes(ctx context.Context, kind ActivityKind, assets []string) ([]string, error)
	// Activity lists the account's activity of q.Kind in q.Scope with
	// exchange times in [q.From, q.To), as far as one call goes (the
	// exchange's time window, its pages): page.Next says how far.
	Activity(ctx context.Context, q ActivityQuery) (ActivityPage, error)
	// ListedFrom returns the time (ms) from which the exchange's list of
	// trades is complete (0: all of it): a fill of the log before it is
	// not missing from the list, the list does not reach that far.
	ListedFrom() int64
}

// Span is a time range [From, Through) (ms).
type Span struct {
	From, Through int64
}

// ActivityKey names the history of one kind of activity in one scope (the
// sync's cursors are kept by it).
func ActivityKey(kind ActivityKind, scope string) string {
	if scope == "" {
		return string(kind)
	}
	return string(kind) + "/" + scope
}

// AccountView is what the account's read model knows of one exchange
// account: the opening, the balance the ledger implies per asset, the
// exchange's last reported balances, the discrepancies still open, how
// much of each history has been read, the assets the account has moved.
// Maps and slices are the view's own.
type AccountView struct {
	Exchange string
	Opened   bool
	Opening  AccountOpened
	// Implied is the balance the ledger implies per asset: the opening,
	// then every fill, external trade, fee, deposit, withdrawal and
	// conversion after it.
	Implied map[string]decimal.Decimal
	// Observed are the exchange's last reported balances
	// (BalancesObserved) and ObservedAt when they were recorded.
	Observed   []AssetBalance
	ObservedAt int64
	// Open are the discrepancies not cleared, by asset.
	Open map[string]BalanceDiscrepancy
	// Covered are the time ranges read of each history, by ActivityKey,
	// merged and in order.
	Covered map[string][]Span
	// Pending is the earliest time of a transfer not final yet (0: none):
	// the sync reads its history again from there.
	Pending int64
	// Assets are the assets the account held at its opening or moved by
	// a transfer, a conversion or an external trade, sorted.
	Assets []string
}

// Reconciliation statuses.
const (
	ReconciledOK          = "ok"
	ReconciledDiscrepancy = "discrepancy"
)

// Reconciliation is an account's reconciliation (GET
// /api/v1/reconciliation, tradeledger reconcile): per asset, the balance
// the ledger implies against the exchange's; the service's own fills of
// the window against the exchange's list (matched; missing from the log
// until the sync recorded them; extra: in the log, not listed; mismatched:
// listed with other numbers); and the account's activity of the window.
// Status is ReconciledDiscrepancy when any asset differs.
type Reconciliation struct {
	Exchange  string                `json:"exchange"`
	Status    string                `json:"status"`
	CheckedAt string                `json:"checkedAt"`
	Assets    []AssetReconciliation `json:"assets"`
	Fills     FillReconciliation    `json:"fills"`
	Activity  ActivityCounts        `json:"activity"`
}

// AssetReconciliation is one asset's balances: Difference = Exchange −
// Ledger.
type AssetReconciliation struct {
	Asset      string         `json:"asset"`
	Ledger     decimal.Number `json:"ledger"`
	Exchange   decimal.Number `json:"exchange"`
	Difference decimal.Number `json:"difference"`
}

// FillReconciliation counts the service's own fills of a window.
type FillReconciliation struct {
	Matched    int `json:"matched"`
	Missing    int `json:"missing"`
	Extra      int `json:"extra"`
	Mismatched int `json:"mismatched"`
}

// ActivityCounts counts an account's activity of a window: every trade
// (the service's and external ones), the external ones, deposits,
// withdrawals (each transfer once, whatever its statuses) and conversions.
type ActivityCounts struct {
	Trades         int `json:"trades"`
	ExternalTrades int `json:"externalTrades"`
	Deposits       int `json:"deposits"`
	Withdrawals    int `json:"withdrawals"`
	Conversions    int `json:"conversions"`
}

// AccountFact is one fact of an account's activity as the log holds it,
// for listing (GET reconciliation/activity, the dashboard): Kind is
// "trade" (an ExternalFill: External, a trade the service did not place),
// "deposit", "withdrawal", "conversion", "fillMismatch" or "fillUnlisted";
// Time is the exchange's time of it; InOpening says the fact is at or
// before the account's opening, so already in its stated balances; Fact
// is the event's data as recorded (addresses masked, no key or secret).
// A transfer is listed once, with its last recorded status.
type AccountFact struct {
	Kind      string          `json:"kind"`
	External  bool            `json:"external"`
	Time      int64           `json:"time"`
	InOpening bool            `json:"inOpening"`
	EventID   string          `json:"eventId"`
	Position  uint64          `json:"position"`
	Actor     string          `json:"actor"`
	Fact      json.RawMessage `json:"fact"`
}

// AccountFactKinds maps the account stream's fact types to AccountFact
// kinds.
var AccountFactKinds = map[string]string{
	TypeExternalFill: "trade", TypeDeposit: "deposit", TypeWithdrawal: "withdrawal", TypeConversion: "conversion",
	TypeFillMismatch: "fillMismatch", TypeFillUnlisted: "fillUnlisted",
}

// CompareBalances returns, per asset held on either side, the implied
// balance against the reported one (available + on order), sorted by
// asset, and whether any differs.
func CompareBalances(implied map[string]decimal.Decimal, reported []AssetBalance) ([]AssetReconciliation, bool) {
	ex := map[string]decimal.Decimal{}
	for _, b := range reported {
		ex[b.Asset] = ex[b.Asset].Add(b.Available).Add(b.OnOrder)
	}
	names := map[string]bool{}
	for a, v := range implied {
		if !v.IsZero() {
			names[a] = true
		}
	}
	for a, v := range ex {
		if !v.IsZero() {
			names[a] = true
		}
	}
	out := make([]AssetReconciliation, 0, len(names))
	differs := false
	for a := range names {
		l, x := implied[a], ex[a]
		d := x.Sub(l)
		differs = differs || !d.IsZero()
		out = append(out, AssetReconciliation{Asset: a, Ledger: decimal.Number(l), Exchange: decimal.Number(x), Difference: decimal.Number(d)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Asset < out[j].Asset })
	return out, differs
}

// ClientOrderTime returns the time (ms) in a client order id this service
// sent (ClientOrderID: "tl" and the 32 hex digits of its OrderRequested's
// UUIDv7 id, whose first 48 bits are the request's time), and whether id
// has that form.
func ClientOrderTime(id string) (int64, bool) {
	if len(id) != 34 || id[:2] != "tl" {
		return 0, false
	}
	var ms int64
	for i := 2; i < 34; i++ {
		c := id[i]
		var v int64
		switch {
		case '0' <= c && c <= '9':
			v = int64(c - '0')
		case 'a' <= c && c <= 'f':
			v = int64(c-'a') + 10
		default:
			return 0, false
		}
		if i < 14 {
			ms = ms<<4 | v
		}
	}
	return ms, true
}
