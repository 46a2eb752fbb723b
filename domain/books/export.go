package books

import (
	"bufio"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/tradeledger/tradeledger/domain"
)

// Exports. Every format writes one header line, then rows as the fills are
// read (Export never holds more than a walk's read-ahead), in trade-time
// order (time, then log position) across pairs, comma separated with CRLF
// line ends (RFC 4180), fields quoted only where they hold a comma, a
// quote or a line end (CoinTracking's: every field, as its template
// shows). Amounts are written with their decimals (never rounded; at
// least 8, so every amount has a decimal point, which Koinly requires).
// The same source snapshot and query give the same bytes.
//
// The period selects fills by trade time, [From, To). The generic format
// and the realized report need the lots held before From and read every
// fill from the first; the tax tools' formats read from From on.
//
// The accounts' whole activity is in every format: trades the service did
// not place are fills like any other, marked external (the generic and
// realized formats' kind columns; the tax tools' Description, Comment);
// deposits, withdrawals and conversions are rows of their own in each tax
// tool's terms (Source.BookFlows: every one in the balance, whether or not
// a pair's lots moved), and moves of the lots in the generic format.

// Format is an export format.
type Format string

// The export formats.
const (
	// FormatFills is the generic CSV of fills: every field of an order
	// record, fee asset and valuation included (FillsHeader).
	FormatFills Format = "fills"
	// FormatKoinly is Koinly's universal CSV (KoinlyHeader).
	FormatKoinly Format = "koinly"
	// FormatCoinTracking is CoinTracking's CSV import (CoinTrackingHeader).
	FormatCoinTracking Format = "cointracking"
	// FormatCoinTracker is CoinTracker's CSV (CoinTrackerHeader).
	FormatCoinTracker Format = "cointracker"
	// FormatRealized is the realized-gains report, one row per lot a
	// disposal consumed (RealizedHeader).
	FormatRealized Format = "realized"
)

// Formats lists the export formats.
var Formats = []Format{FormatFills, FormatKoinly, FormatCoinTracking, FormatCoinTracker, FormatRealized}

// ParseFormat reads a format name, or returns EINVALID listing them.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if string(f) == strings.ToLower(s) {
			return f, nil
		}
	}
	return "", domain.Errorf(domain.EINVALID, "format %q must be one of fills, koinly, cointracking, cointracker, realized", s)
}

// FillsHeader is the generic format's header. Per fill:
//
//	time, time_ms       trade time: RFC 3339 with milliseconds in the
//	                    query's zone, and ms since the epoch
//	position            log position of the OrderFilled event
//	exchange, pair, base, quote, side ("buy"/"sell"), order_id
//	price, quantity, value        value = price × quantity
//	fee_amount, fee_asset         the fee as charged
//	fee_valued                    true when a rate valued it in quote
//	fee_quote, fee_rate, fee_rate_time  its value in quote, the rate (quote per
//	                    unit of fee_asset) and the rate's time (ms); empty
//	                    when not valued
//	net                 value + fee_quote (buy) or value − fee_quote (sell)
//	matched, unmatched  a sell's quantity taken from lots and sold without
//	                    one (a buy: its quantity, 0)
//	lot_cost            a buy: its lot's cost (value + fee_quote); a sell:
//	                    the cost of the lots it took
//	pnl                 a sell's realized pnl (domain/pnl.go); a buy: 0
//	balance             the pair's position after the fill (Σ bought − Σ sold)
//	lots_quantity, lots_cost, abp   the lots held after the fill, their cost
//	                    and average unit cost
//	method              the lot matching of matched … abp
//	kind                order (a fill of the service's order), external (a
//	                    trade the service did not place: order_id 0),
//	                    conversion (a conversion's leg: side sell for what
//	                    it gave, buy for what it got, price and value at
//	                    the value of the other asset in quote, empty when
//	                    the log has no rate), deposit or withdrawal (side
//	                    the same word; no price, value or net; matched and
//	                    lot_cost the lots it brought or took, unmatched the
//	                    coins of unknown cost it brought or took, or beyond
//	                    every coin held)
//	flow_id             a move's flow (kind:exchange:id), "" for a fill
//	network_fee         a withdrawal's network fee, in the base, part of
//	                    what it took (a cost, not a disposal)
//	unknown_cost        coins of unknown cost after the row (never counted
//	                    in lots_cost)
//
// balance, lots_quantity, lots_cost, abp and unknown_cost are the pool's
// (the cost basis scope's: the pair key's, or the pair's across accounts).
const FillsHeader = "time,time_ms,position,exchange,pair,base,quote,side,order_id,price,quantity,value," +
	"fee_amount,fee_asset,fee_valued,fee_quote,fee_rate,fee_rate_time,net,matched,unmatched,lot_cost,pnl," +
	"balance,lots_quantity,lots_cost,abp,method,kind,flow_id,network_fee,unknown_cost"

// KoinlyHeader is Koinly's universal template (support.koinly.io, "How to
// create a custom CSV file with your data", article 9489976: "Universal
// template … can be used for both deposits/withdrawals and trades";
// required Date, Sent Amount, Sent Currency, Received Amount, Received
// Currency; optional Fee Amount, Fee Currency, Net Worth Amount, Net Worth
// Currency, Tag, Description, TxHash; dates YYYY-MM-DD HH:mm:ss, in UTC; a
// dot as decimal separator, every amount with one). A buy sends quote and
// receives base; a sell the reverse; amounts are gross (price × quantity,
// quantity) with the fee apart; the Net Worth is the value in the
// reporting currency when the query has one and a rate exists; TxHash is
// tradeledger:<exchange>:<order id>:<log position>, unique per fill (order
// 0: a trade the service did not place, "external trade" in the
// Description). A deposit is a row with only Received Amount and Currency
// ("A deposit in Koinly can not have any fee", support.koinly.io article
// 9490022, "What are transactions in Koinly"), a withdrawal one with only
// Sent Amount and Currency and its network fee as Fee Amount and Currency;
// a conversion sends one asset and receives the other, its fee apart.
// Their TxHash is the chain's transaction id when the exchange gave one
// (so that Koinly pairs a withdrawal with its deposit on another account
// as a transfer), else tradeledger:<exchange>:<kind>-<id>; the Tag is
// empty (a plain deposit or withdrawal, a trade).
const KoinlyHeader = "Date,Sent Amount,Sent Currency,Received Amount,Received Currency,Fee Amount,Fee Currency," +
	"Net Worth Amount,Net Worth Currency,Tag,Description,TxHash"

// CoinTrackerHeader is CoinTracker's CSV (support.cointracker.io, "Convert
// your transaction history to CoinTracker CSV", article 4413071299729:
// "The headers must match the template exactly. All columns must be
// included"; dates MM/DD/YYYY HH:MM:SS in UTC, no negative numbers, the
// Tag empty for trades). Amounts as for Koinly. A deposit (a receive)
// leaves the Sent columns empty, a withdrawal (a send) the Received ones,
// with its network fee as Fee Amount and Currency; the Tag is empty (tags
// are for special receives and sends, article 4413049710225 "Transaction
// category definitions"; CoinTracker pairs a send with a receive of the
// same amount on another of its wallets as a transfer itself).
const CoinTrackerHeader = "Date,Received Quantity,Received Currency,Sent Quantity,Sent Currency,Fee Amount,Fee Currency,Tag"

// CoinTrackingHeader is CoinTracking's CSV import (cointracking.info,
// import/import_csv: the columns "Type", "Buy Amount", "Buy Currency",
// "Sell Amount", "Sell Currency", "Fee", "Fee Currency", "Exchange",
// "Trade-Group", "Comment", "Date", as quoted in gnosis/gp-v1-ui#1576 and
// Bithomp/frontend-react#215). Type is Trade, Deposit (Buy columns only)
// or Withdrawal (Sell columns only), the Type values CoinTracking's
// import takes (as raineorshine/crypto-gains types them:
// src/@types/CoinTrackingTrade.ts); a conversion is a Trade. The
// Trade-Group is the pair key (empty for a deposit, a withdrawal or a
// conversion); the Comment names the order and log position, "external
// trade" for a trade the service did not place, the flow for the others
// (and its txid). CoinTracking does not take the Fee column off the
// balances (DeltaBalances#19, confirmed by its maintainer), so a fee in
// the currency sold is added to Sell Amount (a withdrawal's network fee
// too) and a fee in the currency bought is taken off Buy Amount; a fee in
// a third asset stays in the Fee column only; a conversion's fee is
// already out of its amounts (domain.Conversion) and is shown in the Fee
// column only. The import page could not be read
// for its date format: Date is written YYYY-MM-DD HH:MM:SS in UTC, as
// other exporters of this template write it.
const CoinTrackingHeader = `"Type","Buy Amount","Buy Currency","Sell Amount","Sell Currency","Fee","Fee Currency","Exchange","Trade-Group","Comment","Date"`

// RealizedHeader is the realized report's CSV header: one row per lot a
// disposal consumed (realized.go defines the figures), one row (term
// "unmatched", no acquisition, cost basis or gain) for the quantity a
// disposal sold without a lot, one per part of coins of unknown cost it
// took (term "unknown-cost": acquired when they arrived, proceeds and fee
// share, no cost basis or gain), and, for a conversion the log has no rate
// for, one per lot it took (term "unpriced": the lot's cost basis, no
// proceeds or gain).
//
//	disposed_at, disposed_at_ms, exchange, pair, asset, quote,
//	sell_order_id, position, acquired_at, acquired_at_ms, buy_order_id,
//	quantity, proceeds, fee, cost_basis, gain, holding_days, term,
//	fee_asset, fee_amount, fee_valued (the sell fill's fee as charged),
//	currency, proceeds_in_currency, fee_in_currency,
//	cost_basis_in_currency, gain_in_currency (empty without a currency or
//	a rate), method, kind (the disposal's: order, external — a trade the
//	service did not place, sell_order_id 0 — or conversion), acquired
//	(the lot's: order, external, conversion; empty on the other rows),
//	scope (the cost basis scope)
const RealizedHeader = "disposed_at,disposed_at_ms,exchange,pair,asset,quote,sell_order_id,position,acquired_at,acquired_at_ms," +
	"buy_order_id,quantity,proceeds,fee,cost_basis,gain,holding_days,term,fee_asset,fee_amount,fee_valued,currency," +
	"proceeds_in_currency,fee_in_currency,cost_basis_in_currency,gain_in_currency,method,kind,acquired,scope"

// Header returns f's header line (without the line end).
func Header(f Format) string {
	switch f {
	case FormatKoinly:
		return KoinlyHeader
	case FormatCoinTracking:
		return CoinTrackingHeader
	case FormatCoinTracker:
		return CoinTrackerHeader
	case FormatRealized:
		return RealizedHeader
	}
	return FillsHeader
}

// Export writes q's period in format f to w and returns the number of
// rows written (the header not counted). progress, when set, is called
// every ProgressRows rows and at the end. w's errors stop the export.
func Export(w io.Writer, src Source, f Format, q Query, progress func(rows int64)) (int64, error) {
	bw := bufio.NewWriterSize(w, 64<<10)
	e := &exporter{w: bw, q: &q, src: src, progress: progress}
	bw.WriteString(Header(f))
	bw.WriteString("\r\n")
	var err error
	switch f {
	case FormatRealized:
		z := newRealizer(src, &q)
		e.snap = z.w.snap
		err = z.run(nil, e.realized)
	case FormatFills:
		wk := newWalk(src, &q, true)
		e.snap = wk.snap
		err = wk.run(e.fill)
	default:
		wk := newWalk(src, &q, false)
		e.snap = wk.snap
		row := map[Format]func(p *pairWalk, f *Fill){FormatKoinly: e.koinly, FormatCoinTracking: e.coinTracking,
			FormatCoinTracker: e.coinTracker}[f]
		flowRow := map[Format]func(fl *Flow){FormatKoinly: e.koinlyFlow, FormatCoinTracking: e.coinTrackingFlow,
			FormatCoinTracker: e.coinTrackerFlow}[f]
		flows := periodFlows(src.BookFlows(e.snap), &q)
		// flowsBefore writes the flows before (t, pos).
		flowsBefore := func(t int64, pos uint64) error {
			for len(flows) > 0 && (flows[0].Time < t || (flows[0].Time == t && flows[0].Position < pos)) {
				flowRow(&flows[0])
				flows = flows[1:]
				if err := e.end(); err != nil {
					return err
				}
			}
			return nil
		}
		err = wk.run(func(p *pairWalk, fl *Fill, _ *step) error {
			if !q.inPeriod(fl.Time) {
				return nil
			}
			if err := flowsBefore(fl.Time, fl.Position); err != nil {
				return err
			}
			row(p, fl)
			return e.end()
		})
		if err == nil {
			err = flowsBefore(1<<62, 0)
		}
	}
	if err == nil {
		err = bw.Flush()
	}
	if progress != nil {
		progress(e.rows)
	}
	return e.rows, err
}

// ProgressRows is how often Export reports progress.
const ProgressRows = 100_000

// exporter writes rows: each is built in b, then written.
type exporter struct {
	w        *bufio.Writer
	q        *Query
	src      Source
	snap     Snapshot
	b        []byte
	fields   int // fields in b
	rows     int64
	progress func(rows int64)
	quoteAll bool // quote every field (CoinTracking)
}

// end ends the row in b and writes it.
func (e *exporter) end() error {
	e.b = append(e.b, '\r', '\n')
	_, err := e.w.Write(e.b)
	e.b, e.fields = e.b[:0], 0
	e.rows++
	if e.progress != nil && e.rows%ProgressRows == 0 {
		e.progress(e.rows)
	}
	return err
}

// sep starts a field: a comma unless it is the row's first.
func (e *exporter) sep() {
	if e.fields > 0 {
		e.b = append(e.b, ',')
	}
	e.fields++
}

// str appends a field.
func (e *exporter) str(s string) {
	e.sep()
	if e.quoteAll || strings.ContainsAny(s, ",\"\r\n") {
		e.b = append(e.b, '"')
		e.b = append(e.b, strings.ReplaceAll(s, `"`, `""`)...)
		e.b = append(e.b, '"')
		return
	}
	e.b = append(e.b, s...)
}

// dec appends an amount with its decimals (at least 8).
func (e *exporter) dec(d domain.Decimal) {
	e.sep()
	if e.quoteAll {
		e.b = append(e.b, '"')
		e.b = d.Append(e.b)
		e.b = append(e.b, '"')
		return
	}
	e.b = d.Append(e.b)
}

// optDec appends d, or an empty field when !ok.
func (e *exporter) optDec(d domain.Decimal, ok bool) {
	if ok {
		e.dec(d)
	} else {
		e.str("")
	}
}

func (e *exporter) int(n int64) {
	e.sep()
	e.b = strconv.AppendInt(e.b, n, 10)
}

func (e *exporter) uint(n uint64) {
	e.sep()
	e.b = strconv.AppendUint(e.b, n, 10)
}

// when appends a time in layout and zone (quoted when every field is: no
// layout here holds a comma or a quote).
func (e *exporter) when(ms int64, layout string, loc *time.Location) {
	e.sep()
	if e.quoteAll {
		e.b = append(e.b, '"')
	}
	e.b = time.UnixMilli(ms).In(loc).AppendFormat(e.b, layout)
	if e.quoteAll {
		e.b = append(e.b, '"')
	}
}

// zoned is the generic and realized formats' time layout.
const zoned = "2006-01-02T15:04:05.000Z07:00"

func side(sell bool) string {
	if sell {
		return "sell"
	}
	return "buy"
}

// fill writes a generic row: a fill, or a move of a flow (its kind).
func (e *exporter) fill(p *pairWalk, f *Fill, s *step) error {
	if !e.q.inPeriod(f.Time) || !p.selected {
		return nil
	}
	pl := p.pool
	r, tr := s.r, s.tr
	e.when(f.Time, zoned, e.q.loc())
	e.int(f.Time)
	e.uint(f.Position)
	e.str(p.Exchange)
	e.str(p.Pair.Pair)
	e.str(p.Base)
	e.str(p.Quote)
	switch f.Kind {
	case KindDeposit, KindWithdrawal:
		e.str(f.Kind.String())
	default:
		e.str(side(f.Sell))
	}
	e.int(f.OrderID)
	move := f.Kind == KindDeposit || f.Kind == KindWithdrawal
	conv := f.Kind == KindConvertIn || f.Kind == KindConvertOut
	switch {
	case move:
		e.str("")
		e.dec(f.Qty)
		e.str("")
	case conv:
		e.optDec(f.Value.Div(f.Qty), f.Priced && f.Qty.IsPos())
		e.dec(f.Qty)
		e.optDec(f.Value, f.Priced)
	default:
		e.dec(f.Price)
		e.dec(f.Qty)
		e.dec(r.Value)
	}
	e.dec(f.Fee.Amount)
	e.str(f.Fee.Asset)
	e.str(strconv.FormatBool(f.Fee.Valued))
	e.optDec(f.Fee.Quote, f.Fee.Valued)
	e.optDec(f.Fee.Rate, f.Fee.Valued)
	if f.Fee.Valued {
		e.int(f.Fee.RateTime)
	} else {
		e.str("")
	}
	fee := r.FillPnl.Fee
	switch {
	case move:
		e.str("")
	case conv:
		e.optDec(f.Value, f.Priced)
	case f.Sell:
		e.dec(r.Value.Sub(fee))
	default:
		e.dec(r.Value.Add(fee))
	}
	switch {
	case f.Kind == KindDeposit:
		e.dec(tr.In)
		e.dec(tr.InUnknown)
		e.dec(tr.InCost)
	case f.Sell || f.Kind == KindWithdrawal: // what it took from lots, what it took beyond them, their cost
		e.dec(tr.Out)
		e.dec(tr.UnknownQty.Add(tr.Unheld))
		e.dec(tr.OutCost)
	default:
		e.dec(tr.In)
		e.dec(domain.Zero)
		e.dec(tr.InCost)
	}
	e.dec(r.Pnl)
	lots := pl.fold.Lots()
	e.dec(pl.fold.Position())
	e.dec(lots.Qty())
	e.dec(lots.Cost())
	e.dec(lots.ABP())
	e.str(e.q.Method.String())
	e.str(f.Kind.String())
	e.str(f.Flow)
	if f.Kind == KindWithdrawal {
		e.dec(f.NetworkFee)
	} else {
		e.str("")
	}
	e.dec(pl.fold.Unknown())
	return e.end()
}

// optFee appends a fee and its currency, both empty when there is none.
func (e *exporter) optFee(amount domain.Decimal, asset string) {
	e.optDec(amount, amount.IsPos())
	if amount.IsPos() {
		e.str(asset)
	} else {
		e.str("")
	}
}

// periodFlows returns the flows of q's period, those of its keys' pairs
// when it names keys (a flow that moved none of their lots is left out).
func periodFlows(all []Flow, q *Query) []Flow {
	want := map[string]bool{}
	for _, k := range q.Keys {
		want[k] = true
	}
	out := all[:0:0]
	for _, f := range all {
		if !q.inPeriod(f.Time) || (len(want) > 0 && !want[f.Pairs[0]] && !want[f.Pairs[1]]) {
			continue
		}
		out = append(out, f)
	}
	return out
}

// flowRef names a flow for the tax tools: its chain transaction id when
// the exchange gave one, else tradeledger:<exchange>:<kind>-<id>.
func flowRef(fl *Flow) string {
	if fl.TxID != "" {
		return fl.TxID
	}
	id := fl.ExID
	if fl.Kind == "conversion" {
		id = fl.ID[strings.LastIndexByte(fl.ID, ':')+1:]
	}
	return "tradeledger:" + fl.Exchange + ":" + fl.Kind + "-" + id
}

// flowNote describes a flow in words: its exchange, kind and id, and the
// other side of a transfer between the service's accounts.
func flowNote(fl *Flow) string {
	n := fl.Exchange + " " + fl.Kind
	if fl.Kind == "conversion" {
		n = fl.Exchange + " " + fl.ConvKind + " conversion"
	}
	n += " " + flowRef(fl)
	switch {
	case fl.Peer != "" && fl.Kind == "deposit":
		n += " (transfer from " + fl.PeerExchange + ")"
	case fl.Peer != "":
		n += " (transfer to " + fl.PeerExchange + ")"
	}
	return n
}

func (e *exporter) koinlyFlow(fl *Flow) {
	e.when(fl.Time, "2006-01-02 15:04:05", time.UTC)
	worth := func(amount domain.Decimal, cur string) {
		if e.q.Currency == "" {
			e.str("")
			e.str("")
			return
		}
		c, ok := e.src.BookConvert(e.snap, amount, cur, e.q.Currency, fl.Time)
		e.optDec(c.Amount, ok)
		if ok {
			e.str(e.q.Currency)
		} else {
			e.str("")
		}
	}
	switch fl.Kind {
	case "deposit":
		e.str("")
		e.str("")
		e.dec(fl.Amount)
		e.str(fl.Asset)
		e.str("")
		e.str("")
		worth(fl.Amount, fl.Asset)
	case "withdrawal":
		e.dec(fl.Amount)
		e.str(fl.Asset)
		e.str("")
		e.str("")
		e.optFee(fl.Fee, fl.Asset)
		worth(fl.Amount, fl.Asset)
	default:
		e.dec(fl.FromAmount)
		e.str(fl.FromAsset)
		e.dec(fl.ToAmount)
		e.str(fl.ToAsset)
		e.optFee(fl.ConvFee, fl.ConvFeeAsset)
		worth(fl.ToAmount, fl.ToAsset)
	}
	e.str("")
	e.str(flowNote(fl))
	e.str(flowRef(fl))
}

func (e *exporter) coinTrackerFlow(fl *Flow) {
	e.when(fl.Time, "01/02/2006 15:04:05", time.UTC)
	switch fl.Kind {
	case "deposit":
		e.dec(fl.Amount)
		e.str(fl.Asset)
		e.str("")
		e.str("")
		e.str("")
		e.str("")
	case "withdrawal":
		e.str("")
		e.str("")
		e.dec(fl.Amount)
		e.str(fl.Asset)
		e.optFee(fl.Fee, fl.Asset)
	default:
		e.dec(fl.ToAmount)
		e.str(fl.ToAsset)
		e.dec(fl.FromAmount)
		e.str(fl.FromAsset)
		e.optFee(fl.ConvFee, fl.ConvFeeAsset)
	}
	e.str("")
}

func (e *exporter) coinTrackingFlow(fl *Flow) {
	e.quoteAll = true
	defer func() { e.quoteAll = false }()
	switch fl.Kind {
	case "deposit":
		e.str("Deposit")
		e.dec(fl.Amount)
		e.str(fl.Asset)
		e.str("")
		e.str("")
		e.str("")
		e.str("")
	case "withdrawal":
		e.str("Withdrawal")
		e.str("")
		e.str("")
		e.dec(fl.Amount.Add(fl.Fee)) // the Fee column is not taken off the balances
		e.str(fl.Asset)
		e.optFee(fl.Fee, fl.Asset)
	default:
		e.str("Trade")
		e.dec(fl.ToAmount)
		e.str(fl.ToAsset)
		e.dec(fl.FromAmount)
		e.str(fl.FromAsset)
		e.optFee(fl.ConvFee, fl.ConvFeeAsset)
	}
	e.str(fl.Exchange)
	e.str("")
	e.str("tradeledger " + flowNote(fl))
	e.when(fl.Time, "2006-01-02 15:04:05", time.UTC)
}

// legs returns a trade's sides as the tax tools see it: what was received
// and what was sent, gross.
func legs(p *pairWalk, f *Fill) (recvAmt domain.Decimal, recvCur string, sentAmt domain.Decimal, sentCur string) {
	value := f.Price.Mul(f.Qty)
	if f.Sell {
		return value, p.Quote, f.Qty, p.Base
	}
	return f.Qty, p.Base, value, p.Quote
}

// fee returns the fee the tax tools list (none when zero), folding a rebate
// (a negative fee) into the amount received or sent when it is in one of
// their currencies, as none of them takes a negative fee.
func (e *exporter) taxFee(f *Fill, recvAmt *domain.Decimal, recvCur string, sentAmt *domain.Decimal, sentCur string) (domain.Decimal, string, bool) {
	fee := f.Fee
	if fee.Amount.IsZero() {
		return domain.Zero, "", false
	}
	if fee.Amount.IsNeg() {
		switch fee.Asset {
		case recvCur:
			*recvAmt = recvAmt.Sub(fee.Amount)
			return domain.Zero, "", false
		case sentCur:
			*sentAmt = sentAmt.Add(fee.Amount)
			return domain.Zero, "", false
		}
	}
	return fee.Amount, fee.Asset, true
}

func txHash(p *pairWalk, f *Fill) string {
	return "tradeledger:" + p.Exchange + ":" + strconv.FormatInt(f.OrderID, 10) + ":" + strconv.FormatUint(f.Position, 10)
}

func (e *exporter) koinly(p *pairWalk, f *Fill) {
	recv, recvCur, sent, sentCur := legs(p, f)
	fee, feeCur, hasFee := e.taxFee(f, &recv, recvCur, &sent, sentCur)
	e.when(f.Time, "2006-01-02 15:04:05", time.UTC)
	e.dec(sent)
	e.str(sentCur)
	e.dec(recv)
	e.str(recvCur)
	e.optDec(fee, hasFee)
	e.str(feeCur)
	worth, ok := domain.Zero, false
	if e.q.Currency != "" {
		var c Conversion
		c, ok = e.src.BookConvert(e.snap, f.Price.Mul(f.Qty), p.Quote, e.q.Currency, f.Time)
		worth = c.Amount
	}
	e.optDec(worth, ok)
	if ok {
		e.str(e.q.Currency)
	} else {
		e.str("")
	}
	e.str("")
	if f.Kind == KindExternal {
		e.str(p.Exchange + " " + p.Pair.Pair + " " + side(f.Sell) + " external trade")
	} else {
		e.str(p.Exchange + " " + p.Pair.Pair + " " + side(f.Sell) + " order " + strconv.FormatInt(f.OrderID, 10))
	}
	e.str(txHash(p, f))
}

func (e *exporter) coinTracker(p *pairWalk, f *Fill) {
	recv, recvCur, sent, sentCur := legs(p, f)
	fee, feeCur, hasFee := e.taxFee(f, &recv, recvCur, &sent, sentCur)
	e.when(f.Time, "01/02/2006 15:04:05", time.UTC)
	e.dec(recv)
	e.str(recvCur)
	e.dec(sent)
	e.str(sentCur)
	e.optDec(fee, hasFee)
	e.str(feeCur)
	e.str("")
}

func (e *exporter) coinTracking(p *pairWalk, f *Fill) {
	recv, recvCur, sent, sentCur := legs(p, f)
	fee, feeCur, hasFee := e.taxFee(f, &recv, recvCur, &sent, sentCur)
	if hasFee { // the Fee column is not taken off the balances
		switch feeCur {
		case sentCur:
			sent = sent.Add(fee)
		case recvCur:
			recv = recv.Sub(fee)
		}
	}
	e.quoteAll = true
	defer func() { e.quoteAll = false }()
	e.str("Trade")
	e.dec(recv)
	e.str(recvCur)
	e.dec(sent)
	e.str(sentCur)
	e.optDec(fee, hasFee)
	e.str(feeCur)
	e.str(p.Exchange)
	e.str(p.Key)
	if f.Kind == KindExternal {
		e.str("tradeledger external trade position " + strconv.FormatUint(f.Position, 10))
	} else {
		e.str("tradeledger order " + strconv.FormatInt(f.OrderID, 10) + " position " + strconv.FormatUint(f.Position, 10))
	}
	e.when(f.Time, "2006-01-02 15:04:05", time.UTC)
}

// realized writes a disposal's rows.
func (e *exporter) realized(d *Disposal) error {
	loc := e.q.loc()
	head := func() {
		e.when(d.DisposedAt, zoned, loc)
		e.int(d.DisposedAt)
		e.str(d.Exchange)
		e.str(d.Pair)
		e.str(d.Asset)
		e.str(d.Quote)
		e.int(d.OrderID)
		e.uint(d.Position)
	}
	tail := func(m *Money, acquired string) {
		e.str(d.Fee.Asset)
		e.dec(domain.Decimal(d.Fee.Amount))
		e.str(strconv.FormatBool(d.Fee.Valued))
		e.str(e.q.Currency)
		if m != nil {
			e.dec(domain.Decimal(m.Proceeds))
			e.dec(domain.Decimal(m.Fee))
			e.dec(domain.Decimal(m.CostBasis))
			e.dec(domain.Decimal(m.Gain))
		} else {
			e.str("")
			e.str("")
			e.str("")
			e.str("")
		}
		e.str(e.q.Method.String())
		e.str(d.Kind)
		e.str(acquired)
		e.str(e.q.Scope.String())
	}
	for i := range d.Lots {
		u := &d.Lots[i]
		head()
		e.when(u.AcquiredAt, zoned, loc)
		e.int(u.AcquiredAt)
		e.int(u.BuyOrderID)
		e.dec(domain.Decimal(u.Quantity))
		e.dec(domain.Decimal(u.Proceeds))
		e.dec(domain.Decimal(u.Fee))
		e.dec(domain.Decimal(u.CostBasis))
		e.dec(domain.Decimal(u.Gain))
		e.int(u.HoldingDays)
		e.str(u.Term)
		tail(u.InCurrency, u.Acquired)
		if err := e.end(); err != nil {
			return err
		}
	}
	for i := range d.UnpricedLots {
		u := &d.UnpricedLots[i]
		head()
		e.when(u.AcquiredAt, zoned, loc)
		e.int(u.AcquiredAt)
		e.int(u.BuyOrderID)
		e.dec(domain.Decimal(u.Quantity))
		e.str("")
		e.str("")
		e.dec(domain.Decimal(u.CostBasis))
		e.str("")
		e.int(u.HoldingDays)
		e.str("unpriced")
		tail(nil, u.Acquired)
		if err := e.end(); err != nil {
			return err
		}
	}
	for i := range d.UnknownLots {
		u := &d.UnknownLots[i]
		head()
		e.when(u.AcquiredAt, zoned, loc)
		e.int(u.AcquiredAt)
		e.str("")
		e.dec(domain.Decimal(u.Quantity))
		e.dec(domain.Decimal(u.Proceeds))
		e.dec(domain.Decimal(u.Fee))
		e.str("")
		e.str("")
		e.int(u.HoldingDays)
		e.str("unknown-cost")
		tail(nil, "")
		if err := e.end(); err != nil {
			return err
		}
	}
	if q := domain.Decimal(d.Unmatched.Quantity); q.IsPos() {
		head()
		e.str("")
		e.str("")
		e.str("")
		e.dec(q)
		e.dec(domain.Decimal(d.Unmatched.Proceeds))
		// the rest of the fee
		e.optDec(d.feeQuote.Sub(domain.Decimal(d.MatchedFee)).Sub(domain.Decimal(d.UnknownCost.Fees)), d.Fee.Valued)
		e.str("")
		e.str("")
		e.str("")
		e.str("unmatched")
		tail(nil, "")
		if err := e.end(); err != nil {
			return err
		}
	}
	return nil
}
