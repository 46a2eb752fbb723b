package binance

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	gobinance "github.com/adshao/go-binance/v2"
	"github.com/adshao/go-binance/v2/common"
	"golang.org/x/time/rate"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/exchange"
)

// The account's history (domain.AccountHistory), from the endpoints and
// with the weights and time windows Binance documents:
//
//   - trades: GET /api/v3/myTrades per symbol (rest-api.md, "Account trade
//     list": weight 20; startTime and endTime at most 24 hours apart; up
//     to 1000 a call, paged by fromId), their orders' client ids from GET
//     /api/v3/allOrders (weight 20; orders ≥ orderId, 1000 a call) so
//     that a trade of an order this service placed is told from one
//     placed by hand;
//   - deposits: GET /sapi/v1/capital/deposit/hisrec (Weight(IP) 1;
//     startTime and endTime less than 90 days apart; offset/limit ≤ 1000;
//     status 0 pending, 6 credited but cannot withdraw, 7 wrong deposit,
//     8 waiting user confirm, 1 success, 2 rejected;
//     https://developers.binance.com/docs/wallet/capital/deposite-history);
//   - withdrawals: GET /sapi/v1/capital/withdraw/history (Weight(IP)
//     18000 under a per-second limit of 180000: ten a second; less than 90
//     days apart; status 0 email sent, 1 cancelled, 2 awaiting approval, 3
//     rejected, 4 processing, 5 failure, 6 completed; applyTime in UTC;
//     https://developers.binance.com/docs/wallet/capital/withdraw-history);
//   - conversions: GET /sapi/v1/asset/dribblet (dust to BNB, Weight(IP) 1,
//     at most 90 days between startTime and endTime, the last 100 records;
//     https://developers.binance.com/docs/wallet/asset/dust-log) and GET
//     /sapi/v1/convert/tradeFlow (Weight(UID) 3000; startTime and endTime
//     required, at most 30 days apart; up to 1000 a call;
//     https://developers.binance.com/docs/convert/trade/Get-Convert-Trade-History).
//
// SAPI endpoints have limits of their own, independent per endpoint:
// 12,000 weight a minute for IP-weighted ones, 180,000 a minute for
// UID-weighted ones (dev.binance.vision, "Request limit on the API
// endpoints"); each has its own limiter here, beside the spot API's.

// Published weights and windows of the history endpoints.
const (
	weightAllOrders       = 20
	weightDepositHistory  = 1
	weightWithdrawHistory = 18000
	weightDustLog         = 1
	weightConvertFlow     = 3000

	tradesWindow     = 24 * time.Hour
	transfersWindow  = 90*24*time.Hour - time.Millisecond // "less than 90 days"
	dustWindow       = 90 * 24 * time.Hour
	convertWindow    = 30 * 24 * time.Hour
	historyPageLimit = 1000

	sapiIPPerMinute   = 12000
	sapiUIDPerMinute  = 180000
	sapiWithdrawPerS  = 180000
	historyMaxOrderQs = 1000 // most single-order look-ups to name trades' client ids
)

var _ domain.AccountHistory = (*Exchange)(nil)

// sapiLimiters returns the limiters of the SAPI endpoints, made on first
// use.
func (x *Exchange) sapiLimiter(path string) *rate.Limiter {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.sapi == nil {
		k := x.SAPIScale
		if k <= 0 {
			k = 1
		}
		perMinute := func(w float64) *rate.Limiter { return rate.NewLimiter(rate.Limit(k*w/60), int(k*w/10)) }
		x.sapi = map[string]*rate.Limiter{
			"/sapi/v1/capital/deposit/hisrec":   perMinute(sapiIPPerMinute),
			"/sapi/v1/capital/withdraw/history": rate.NewLimiter(rate.Limit(k*sapiWithdrawPerS), int(k*sapiWithdrawPerS)),
			"/sapi/v1/asset/dribblet":           perMinute(sapiIPPerMinute),
			"/sapi/v1/convert/tradeFlow":        perMinute(sapiUIDPerMinute),
		}
	}
	return x.sapi[path]
}

// ListedFrom implements domain.AccountHistory: Binance lists every trade.
func (x *Exchange) ListedFrom() int64 { return 0 }

// ActivityScopes implements domain.AccountHistory: trades are listed per
// symbol, of the configured pairs, the symbols this connector traded, and
// every listed market between two of the assets given; the other kinds
// in one list each.
func (x *Exchange) ActivityScopes(ctx context.Context, kind domain.ActivityKind, assets []string) ([]string, error) {
	if kind != domain.ActivityTrades {
		return []string{""}, nil
	}
	if err := x.loadMarkets(ctx); err != nil {
		return nil, err
	}
	x.mu.Lock()
	markets := make([]exchange.Market, 0, len(x.symbols))
	var traded []string
	for _, s := range x.symbols {
		markets = append(markets, exchange.Market{Pair: s.pair, Base: s.base, Quote: s.quote})
		if x.traded[s.name] {
			traded = append(traded, s.pair)
		}
	}
	x.mu.Unlock()
	return exchange.TradeScopes(x.Pairs, traded, assets, markets), nil
}

// Activity implements domain.AccountHistory: one time window of the
// kind's endpoint (see above) per call.
func (x *Exchange) Activity(ctx context.Context, q domain.ActivityQuery) (domain.ActivityPage, error) {
	switch q.Kind {
	case domain.ActivityTrades:
		return x.tradeHistory(ctx, q)
	case domain.ActivityDeposits:
		return x.depositHistory(ctx, q)
	case domain.ActivityWithdrawals:
		return x.withdrawHistory(ctx, q)
	case domain.ActivityConversions:
		return x.conversionHistory(ctx, q)
	}
	return domain.ActivityPage{}, domain.Errorf(domain.EINVALID, "%s lists no %q activity", x.ExchangeName, q.Kind)
}

// windowEnd is the end of one call's window from from: at most span
// later, never after to.
func windowEnd(from, to int64, span time.Duration) int64 { return min(to, from+span.Milliseconds()) }

// tradeHistory lists a symbol's trades of [From, From+24h) (at most To),
// paging by fromId past 1000.
func (x *Exchange) tradeHistory(ctx context.Context, q domain.ActivityQuery) (domain.ActivityPage, error) {
	s, err := x.symbol(ctx, q.Scope)
	if err != nil {
		return domain.ActivityPage{}, err
	}
	end := windowEnd(q.From, q.To, tradesWindow)
	var all []*gobinance.TradeV3
	var fromID int64 = -1
	for {
		var ts []*gobinance.TradeV3
		err := x.call(ctx, weightMyTrades, true, func(ctx context.Context) (err error) {
			svc := x.client.NewListTradesService().Symbol(s.name).Limit(historyPageLimit)
			if fromID < 0 {
				svc.StartTime(q.From).EndTime(end - 1)
			} else {
				svc.FromID(fromID)
			}
			ts, err = svc.Do(ctx)
			return err
		})
		if err != nil {
			return domain.ActivityPage{}, err
		}
		done := len(ts) < historyPageLimit
		for _, t := range ts {
			if t.Time >= end {
				done = true
				break
			}
			if t.Time >= q.From {
				all = append(all, t)
			}
		}
		if done || len(ts) == 0 {
			break
		}
		fromID = ts[len(ts)-1].ID + 1
	}
	if err := x.clientsOf(ctx, s, all); err != nil {
		return domain.ActivityPage{}, err
	}
	page := domain.ActivityPage{Next: end}
	for _, t := range all {
		x.mu.Lock()
		client := x.clients[t.OrderID]
		x.mu.Unlock()
		var n nums
		f := domain.Fill{
			ID: x.ExchangeName + "-" + s.name + "-" + strconv.FormatInt(t.ID, 10), Seq: seqOf(t),
			OrderID: strconv.FormatInt(t.OrderID, 10), ClientOrderID: client, Pair: s.pair, Side: domain.Sell,
			Price: n.dec("price", t.Price), Quantity: n.dec("qty", t.Quantity), Fee: n.dec("commission", t.Commission),
			FeeAsset: t.CommissionAsset, Time: t.Time,
		}
		if t.QuoteQuantity != "" {
			f.QuoteQuantity = n.dec("quoteQty", t.QuoteQuantity)
		}
		f.Problem = n.problem
		if t.IsBuyer {
			f.Side = domain.Buy
		}
		page.Trades = append(page.Trades, f)
	}
	return page, nil
}

// clientsOf learns the client order ids of the trades' orders: from
// allOrders, paged by orderId from the lowest one not known, then one by
// one for any left.
func (x *Exchange) clientsOf(ctx context.Context, s *symbol, trades []*gobinance.TradeV3) error {
	unknown := func() []int64 {
		x.mu.Lock()
		defer x.mu.Unlock()
		var ids []int64
		seen := map[int64]bool{}
		for _, t := range trades {
			if _, ok := x.clients[t.OrderID]; !ok && !seen[t.OrderID] {
				seen[t.OrderID] = true
				ids = append(ids, t.OrderID)
			}
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		return ids
	}
	ids := unknown()
	for len(ids) > 0 {
		var os []*gobinance.Order
		if err := x.call(ctx, weightAllOrders, true, func(ctx context.Context) (err error) {
			os, err = x.client.NewListOrdersService().Symbol(s.name).OrderID(ids[0]).Limit(historyPageLimit).Do(ctx)
			return err
		}); err != nil {
			return err
		}
		for _, o := range os {
			x.remember(o.OrderID, o.ClientOrderID)
		}
		next := unknown()
		if len(os) < historyPageLimit || len(next) == 0 || next[0] == ids[0] {
			ids = next
			break
		}
		ids = next
	}
	for i, id := range ids {
		if i >= historyMaxOrderQs {
			return domain.Errorf(domain.EUNAVAILABLE, "%s: %d orders of %s not found by allOrders; later", x.ExchangeName, len(ids)-i, s.name)
		}
		if _, err := x.clientOf(ctx, s, id); err != nil {
			if domain.ErrorCode(err) == domain.ENOTFOUND {
				x.remember(id, "")
				continue
			}
			return err
		}
	}
	return nil
}

// sapiGet sends a signed GET to a SAPI endpoint under its limiter and
// decodes the answer (numbers as json.Number) into out. As the spot calls
// (call), it measures the clock offset first, and once more (then sends
// again) when Binance says the timestamp is outside the receive window.
func (x *Exchange) sapiGet(ctx context.Context, path string, weight int, params url.Values, out any) error {
	x.init()
	if err := x.gate(ctx, 0); err != nil {
		return err
	}
	if err := x.sapiLimiter(path).WaitN(ctx, weight); err != nil {
		return domain.Errorf(domain.EUNAVAILABLE, "%s: the rate limit of %s is used up for now; retry later", x.ExchangeName, path)
	}
	if err := x.measure(ctx, false); err != nil {
		return err
	}
	body, err := x.sapiSend(ctx, path, params)
	if apiCode(err) == -1021 {
		if err := x.measure(ctx, true); err != nil {
			return err
		}
		body, err = x.sapiSend(ctx, path, params)
	}
	if err != nil {
		return x.mapErr(err)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		return domain.Errorf(domain.EUNAVAILABLE, "%s: %s answered what is not its documented JSON: %v", x.ExchangeName, path, err)
	}
	return nil
}

// sapiSend signs and sends one SAPI GET: the answer's body, or an error
// (Binance's *common.APIError for an error it stated).
func (x *Exchange) sapiSend(ctx context.Context, path string, params url.Values) ([]byte, error) {
	x.skew.RLock()
	offset := x.client.TimeOffset
	x.skew.RUnlock()
	p := url.Values{}
	for k, v := range params {
		p[k] = v
	}
	p.Set("timestamp", strconv.FormatInt(time.Now().UnixMilli()-offset, 10))
	p.Set("recvWindow", "5000")
	query := p.Encode()
	mac := hmac.New(sha256.New, []byte(x.Secret))
	mac.Write([]byte(query))
	query += "&signature=" + hex.EncodeToString(mac.Sum(nil))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(x.BaseURL, "/")+path+"?"+query, nil)
	if err != nil {
		return nil, domain.Errorf(domain.EINTERNAL, "%s: %v", x.ExchangeName, err)
	}
	req.Header.Set("X-MBX-APIKEY", x.Key)
	res, err := x.client.HTTPClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		ae := &common.APIError{}
		if json.Unmarshal(body, ae) != nil || ae.Code == 0 {
			return nil, domain.Errorf(domain.EUNAVAILABLE, "%s answered HTTP %d to %s", x.ExchangeName, res.StatusCode, path)
		}
		return nil, ae
	}
	return body, nil
}

// rawNumber is a JSON number or string as Binance sends it, kept as text.
type rawNumber string

func (r *rawNumber) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*r = rawNumber(s)
		return nil
	}
	*r = rawNumber(b)
	return nil
}

// windowParams are a time window's startTime and endTime (inclusive).
func windowParams(from, end int64) url.Values {
	return url.Values{"startTime": {strconv.FormatInt(from, 10)}, "endTime": {strconv.FormatInt(end-1, 10)}}
}

type binanceDeposit struct {
	ID         rawNumber `json:"id"`
	Amount     rawNumber `json:"amount"`
	Coin       string    `json:"coin"`
	Network    string    `json:"network"`
	Status     int       `json:"status"`
	Address    string    `json:"address"`
	AddressTag string    `json:"addressTag"`
	TxID       string    `json:"txId"`
	InsertTime int64     `json:"insertTime"`
}

// depositStatus maps a deposit's status code to the domain's.
func depositStatus(code int) domain.TransferStatus {
	switch code {
	case 1:
		return domain.TransferCompleted
	case 6:
		return domain.TransferCredited
	case 2, 7:
		return domain.TransferFailed
	}
	return domain.TransferPending // 0 pending, 8 waiting user confirm
}

// depositHistory lists the deposits of a window of less than 90 days.
func (x *Exchange) depositHistory(ctx context.Context, q domain.ActivityQuery) (domain.ActivityPage, error) {
	return transferHistory(ctx, x, q, "/sapi/v1/capital/deposit/hisrec", weightDepositHistory, func(d binanceDeposit) (domain.Transfer, error) {
		var n nums
		id := string(d.ID)
		if id == "" {
			id = d.Coin + ":" + d.TxID
		}
		t := domain.Transfer{Exchange: x.ExchangeName, ID: id, Asset: d.Coin, Amount: n.dec("amount", string(d.Amount)), Network: d.Network,
			TxID: d.TxID, Address: domain.MaskAddress(d.Address), AddressTag: domain.MaskAddress(d.AddressTag), Status: depositStatus(d.Status),
			ExchangeStatus: strconv.Itoa(d.Status), Time: d.InsertTime}
		t.Problem = n.problem
		return t, nil
	})
}

// transferHistory reads a transfer history endpoint (path, under its
// weight) over q's window cut at transfersWindow, page after page by
// offset, and returns the transfers of the window (their Time in it) in
// time order, Next the window's end. transfer reads one record of the
// endpoint's, R; its error stops the read.
func transferHistory[R any](ctx context.Context, x *Exchange, q domain.ActivityQuery, path string, weight int, transfer func(R) (domain.Transfer, error)) (domain.ActivityPage, error) {
	end := windowEnd(q.From, q.To, transfersWindow)
	page := domain.ActivityPage{Next: end}
	for offset := 0; ; offset += historyPageLimit {
		p := windowParams(q.From, end)
		p.Set("offset", strconv.Itoa(offset))
		p.Set("limit", strconv.Itoa(historyPageLimit))
		var rs []R
		if err := x.sapiGet(ctx, path, weight, p, &rs); err != nil {
			return page, err
		}
		for _, r := range rs {
			t, err := transfer(r)
			if err != nil {
				return page, err
			}
			if t.Time < q.From || t.Time >= end {
				continue
			}
			page.Transfers = append(page.Transfers, t)
		}
		if len(rs) < historyPageLimit {
			break
		}
	}
	sort.SliceStable(page.Transfers, func(i, j int) bool { return page.Transfers[i].Time < page.Transfers[j].Time })
	return page, nil
}

type binanceWithdrawal struct {
	ID             string    `json:"id"`
	Amount         rawNumber `json:"amount"`
	TransactionFee rawNumber `json:"transactionFee"`
	Coin           string    `json:"coin"`
	Status         int       `json:"status"`
	Address        string    `json:"address"`
	AddressTag     string    `json:"addressTag"`
	TxID           string    `json:"txId"`
	ApplyTime      string    `json:"applyTime"`
	Network        string    `json:"network"`
}

// withdrawStatus maps a withdrawal's status code to the domain's.
func withdrawStatus(code int) domain.TransferStatus {
	switch code {
	case 6:
		return domain.TransferCompleted
	case 1:
		return domain.TransferCancelled
	case 3, 5:
		return domain.TransferFailed
	}
	return domain.TransferPending // 0 email sent, 2 awaiting approval, 4 processing
}

// withdrawHistory lists the withdrawals of a window of less than 90 days.
func (x *Exchange) withdrawHistory(ctx context.Context, q domain.ActivityQuery) (domain.ActivityPage, error) {
	return transferHistory(ctx, x, q, "/sapi/v1/capital/withdraw/history", weightWithdrawHistory, func(w binanceWithdrawal) (domain.Transfer, error) {
		at, err := time.ParseInLocation(time.DateTime, w.ApplyTime, time.UTC)
		if err != nil {
			return domain.Transfer{}, domain.Errorf(domain.EUNAVAILABLE, "%s: withdrawal %s has applyTime %q, not %s", x.ExchangeName, w.ID, w.ApplyTime, time.DateTime)
		}
		var n nums
		t := domain.Transfer{Exchange: x.ExchangeName, ID: w.ID, Asset: w.Coin, Amount: n.dec("amount", string(w.Amount)), Network: w.Network,
			TxID: w.TxID, Address: domain.MaskAddress(w.Address), AddressTag: domain.MaskAddress(w.AddressTag), Status: withdrawStatus(w.Status),
			ExchangeStatus: strconv.Itoa(w.Status), Time: at.UnixMilli()}
		if w.TransactionFee != "" {
			t.Fee = n.dec("transactionFee", string(w.TransactionFee))
		}
		t.Problem = n.problem
		return t, nil
	})
}

type binanceDustLog struct {
	UserAssetDribblets []struct {
		TransID                  rawNumber `json:"transId"`
		OperateTime              int64     `json:"operateTime"`
		UserAssetDribbletDetails []struct {
			TransID             rawNumber `json:"transId"`
			ServiceChargeAmount rawNumber `json:"serviceChargeAmount"`
			Amount              rawNumber `json:"amount"`
			OperateTime         int64     `json:"operateTime"`
			TransferedAmount    rawNumber `json:"transferedAmount"`
			FromAsset           string    `json:"fromAsset"`
		} `json:"userAssetDribbletDetails"`
	} `json:"userAssetDribblets"`
}

type binanceConvertFlow struct {
	List []struct {
		QuoteID     string    `json:"quoteId"`
		OrderID     rawNumber `json:"orderId"`
		OrderStatus string    `json:"orderStatus"`
		FromAsset   string    `json:"fromAsset"`
		FromAmount  rawNumber `json:"fromAmount"`
		ToAsset     string    `json:"toAsset"`
		ToAmount    rawNumber `json:"toAmount"`
		CreateTime  int64     `json:"createTime"`
	} `json:"list"`
	MoreData bool `json:"moreData"`
}

// conversionHistory lists the dust conversions and the convert trades of
// a window of at most 30 days (convert's; the dust log's is 90). A dust
// conversion is one Conversion per asset converted (its dribblet's
// transId and the asset), its BNB net of the service charge (as the log
// shows it: the charge already taken); a convert trade one per orderId,
// counted once it succeeded.
func (x *Exchange) conversionHistory(ctx context.Context, q domain.ActivityQuery) (domain.ActivityPage, error) {
	end := windowEnd(q.From, q.To, convertWindow)
	page := domain.ActivityPage{Next: end}
	var dust binanceDustLog
	if err := x.sapiGet(ctx, "/sapi/v1/asset/dribblet", weightDustLog, windowParams(q.From, end), &dust); err != nil {
		return page, err
	}
	for _, d := range dust.UserAssetDribblets {
		for _, det := range d.UserAssetDribbletDetails {
			t := det.OperateTime
			if t == 0 {
				t = d.OperateTime
			}
			if t < q.From || t >= end {
				continue
			}
			var n nums
			id := string(det.TransID)
			if id == "" {
				id = string(d.TransID)
			}
			c := domain.Conversion{Exchange: x.ExchangeName, ID: "dust:" + id + ":" + det.FromAsset, Kind: domain.ConversionDust,
				FromAsset: det.FromAsset, FromAmount: n.dec("amount", string(det.Amount)), ToAsset: "BNB",
				ToAmount: n.dec("transferedAmount", string(det.TransferedAmount)), Fee: n.dec("serviceChargeAmount", string(det.ServiceChargeAmount)),
				FeeAsset: "BNB", Time: t}
			c.Problem = n.problem
			page.Conversions = append(page.Conversions, c)
		}
	}
	from := q.From
	for {
		p := windowParams(from, end)
		p.Set("limit", strconv.Itoa(historyPageLimit))
		var flow binanceConvertFlow
		if err := x.sapiGet(ctx, "/sapi/v1/convert/tradeFlow", weightConvertFlow, p, &flow); err != nil {
			return page, err
		}
		last := from
		for _, c := range flow.List {
			last = max(last, c.CreateTime)
			if c.OrderStatus != "SUCCESS" || c.CreateTime < q.From || c.CreateTime >= end {
				continue
			}
			var n nums
			conv := domain.Conversion{Exchange: x.ExchangeName, ID: "convert:" + string(c.OrderID), Kind: domain.ConversionConvert,
				FromAsset: c.FromAsset, FromAmount: n.dec("fromAmount", string(c.FromAmount)), ToAsset: c.ToAsset,
				ToAmount: n.dec("toAmount", string(c.ToAmount)), Time: c.CreateTime}
			conv.Problem = n.problem
			page.Conversions = append(page.Conversions, conv)
		}
		if !flow.MoreData || len(flow.List) == 0 || last <= from {
			break
		}
		from = last // the page's last time again: a conversion read twice is recorded once
	}
	sort.SliceStable(page.Conversions, func(i, j int) bool { return page.Conversions[i].Time < page.Conversions[j].Time })
	return page, nil
}
