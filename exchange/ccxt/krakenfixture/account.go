package krakenfixture

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strconv"

	"github.com/tradeledger/tradeledger/domain/decimal"
)

// The account's history beside its own orders, for the account sync's
// tests: trades placed by hand (orders without a cl_ord_id), trades Kraken
// lists late, deposits, withdrawals and conversions, each moving the
// balances, and the private endpoints that list them, as Kraken's
// documentation shows them:
//
//   - DepositStatus (https://docs.kraken.com/api/docs/rest-api/get-status-recent-deposits)
//     and WithdrawStatus (…/get-status-recent-withdrawals): an array of
//     {method, aclass, asset, refid, txid, info (the address), amount,
//     fee, time (seconds), status (Initial, Pending, Settled, Success,
//     Failure, Partial), status-prop}, newest first; start excludes, end
//     includes (seconds);
//   - Ledgers (https://docs.kraken.com/api/docs/rest-api/get-ledgers):
//     {ledger: {id: {refid, time, type, subtype, aclass, asset, amount,
//     fee, balance}}, count}, 50 a page from ofs, newest first; start
//     excludes, end includes.
//
// Where the documentation is silent the fixture says what it assumes: a
// withdrawal leaves the balance (amount and fee) when requested and comes
// back only when it failed; a deposit arrives on Success; the ledger lists
// the conversions only (two entries of type conversion sharing a refid:
// what left, what arrived, the fee on the arriving one, the balance moved
// by amount − fee), which is all the connector reads of it.

type transfer struct {
	refid, asset, method, txid, address, status string
	amount, fee                                 decimal.Decimal
	time                                        int64 // seconds
}

type ledgerEntry struct {
	id, refid, typ, asset string
	amount, fee, balance  decimal.Decimal
	time                  float64
}

// HandTrade records a trade placed by hand on Kraken's site now: a
// closed order without a client order id and its trade, the fee in the
// quote, moving the balances. It returns the trade id.
func (s *Server) HandTrade(side string, vol, price decimal.Decimal) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	o := &order{txid: fmt.Sprintf("OHAND%d-FIXTR-%06d", s.seq, s.seq), side: side, kind: "limit", price: price, vol: vol, status: "open", opentm: s.now()}
	s.orders[o.txid] = o
	s.order = append(s.order, o.txid)
	s.execute(o, price, vol, false)
	return o.trades[len(o.trades)-1]
}

// historyFault answers EService:Unavailable when FailHistoryAfter's count
// ran out.
func (s *Server) historyFault(w http.ResponseWriter) bool {
	if !s.TradeFaults.HistoryFails() {
		return false
	}
	fail(w, "EService:Unavailable")
	return true
}

// AdjustBalance changes an asset's balance by delta with no history behind
// it (Kraken's asset name: XXBT, USDT).
func (s *Server) AdjustBalance(asset string, delta decimal.Decimal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.balance[asset] = s.balance[asset].Add(delta)
}

// Deposit records a deposit of amount of asset (Kraken's name) in a status
// at the fixture's time, crediting it on Success; it returns its refid.
func (s *Server) Deposit(asset string, amount decimal.Decimal, status, address string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	d := &transfer{refid: fmt.Sprintf("QCCDEP%d-FIXTR-%06d", s.seq, s.seq), asset: asset, method: "Tether USD (TRC20)",
		txid: fmt.Sprintf("1c7a642fb7387bbc2c6a2c509fd1ae146937f4cf793b4079a4f0715e3a0%05d", s.seq), address: address,
		status: status, amount: amount, time: s.clock().Unix()}
	s.deposits = append(s.deposits, d)
	if status == "Success" {
		s.balance[asset] = s.balance[asset].Add(amount)
	}
	return d.refid
}

// Withdraw records a withdrawal of amount of asset with its fee in a
// status at the fixture's time, taking amount and fee from the balance
// unless it failed; it returns its refid.
func (s *Server) Withdraw(asset string, amount, fee decimal.Decimal, status, address string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	d := &transfer{refid: fmt.Sprintf("BSNFZU%d-FIXTR-%06d", s.seq, s.seq), asset: asset, method: "Tether USD (TRC20)",
		txid: fmt.Sprintf("0x288b83c6b0904d8400ef44e1c9e2187b5c8f7ea3d838222d53f701a15b%05d", s.seq), address: address,
		status: status, amount: amount, fee: fee, time: s.clock().Unix()}
	s.withdrawals = append(s.withdrawals, d)
	if status != "Failure" {
		s.balance[asset] = s.balance[asset].Sub(amount).Sub(fee)
	}
	return d.refid
}

// Convert records a conversion in the ledger at the fixture's time:
// amount of from becomes toAmount of to, less fee (in to).
func (s *Server) Convert(from string, amount decimal.Decimal, to string, toAmount, fee decimal.Decimal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	ref := fmt.Sprintf("TJKLXF%d-FIXTR-%06d", s.seq, s.seq)
	t := s.now()
	s.balance[from] = s.balance[from].Sub(amount)
	s.balance[to] = s.balance[to].Add(toAmount).Sub(fee)
	s.ledger = append(s.ledger,
		&ledgerEntry{id: fmt.Sprintf("L4UESK%d-FIXTR-A", s.seq), refid: ref, typ: "conversion", asset: from, amount: amount.Neg(), balance: s.balance[from], time: t},
		&ledgerEntry{id: fmt.Sprintf("L4UESK%d-FIXTR-B", s.seq), refid: ref, typ: "conversion", asset: to, amount: toAmount, fee: fee, balance: s.balance[to], time: t})
}

// bounds reads a history request's start (exclusive) and end (inclusive),
// in seconds.
func bounds(form url.Values) (start, end float64) {
	start, _ = strconv.ParseFloat(form.Get("start"), 64)
	end, err := strconv.ParseFloat(form.Get("end"), 64)
	if err != nil {
		end = math.Inf(1)
	}
	return start, end
}

func (s *Server) transferStatus(w http.ResponseWriter, name string, form url.Values) {
	if s.historyFault(w) {
		return
	}
	list := s.deposits
	if name == "WithdrawStatus" {
		list = s.withdrawals
	}
	start, end := bounds(form)
	out := []any{}
	for i := len(list) - 1; i >= 0; i-- { // newest first
		d := list[i]
		if float64(d.time) <= start || float64(d.time) > end || (form.Get("asset") != "" && form.Get("asset") != d.asset) {
			continue
		}
		m := map[string]any{"method": d.method, "aclass": "currency", "asset": d.asset, "refid": d.refid, "txid": d.txid,
			"info": d.address, "amount": d.amount.String(), "fee": d.fee.String(), "time": d.time, "status": d.status}
		if name == "WithdrawStatus" {
			m["network"], m["key"] = "Tron", "my wallet"
		}
		out = append(out, m)
	}
	ok(w, out)
}

func (s *Server) ledgers(w http.ResponseWriter, form url.Values) {
	if s.historyFault(w) {
		return
	}
	start, end := bounds(form)
	var sel []*ledgerEntry
	for _, e := range s.ledger {
		if e.time > start && e.time <= end && (form.Get("type") == "" || form.Get("type") == "all" || form.Get("type") == e.typ) {
			sel = append(sel, e)
		}
	}
	sort.SliceStable(sel, func(i, j int) bool { return sel[i].time > sel[j].time })
	count := len(sel)
	ofs, _ := strconv.Atoi(form.Get("ofs"))
	ofs = min(max(ofs, 0), len(sel))
	sel = sel[ofs:]
	if len(sel) > 50 {
		sel = sel[:50]
	}
	out := map[string]any{}
	for _, e := range sel {
		out[e.id] = map[string]any{"refid": e.refid, "time": e.time, "type": e.typ, "subtype": "", "aclass": "currency", "asset": e.asset,
			"amount": e.amount.String(), "fee": e.fee.String(), "balance": e.balance.String()}
	}
	ok(w, map[string]any{"ledger": out, "count": count})
}
