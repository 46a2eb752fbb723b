package http

import (
	"context"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"time"

	"github.com/gorilla/mux"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// The exchange accounts, reconciled (DESIGN §18). GET reconciliation
// reconciles one account on demand over a window of exchange time: its
// history read (what the log lacks recorded, by the service's sync — the
// facts the exchange lists, never anything the caller says), the balances
// the ledger implies per asset against the exchange's, the service's fills
// against the exchange's list, the activity counted; with asOf, the same
// as the log held it then, without asking the exchange. GET
// reconciliation/accounts lists every account the service reconciles: its
// opening, its balances compared as last reported, the discrepancies open
// since when, how far its histories have been read (the dashboard's
// Reconciliation page).

// Reconciler is what the reconciliation routes call (cmd wires the
// engine's account sync and the accounts' read model).
type Reconciler interface {
	// Reconcile reconciles an exchange account over [from, to) (ms; to
	// 0: now).
	Reconcile(ctx context.Context, exchange string, from, to int64) (domain.Reconciliation, error)
	// ReconcileAsOf is Reconcile as the log held it at asOf (ms).
	ReconcileAsOf(ctx context.Context, exchange string, from, to, asOf int64) (domain.Reconciliation, error)
	// Accounts returns what is known of every account reconciled.
	Accounts() []domain.AccountView
	// Activity lists an account's facts with exchange times in [from,
	// to) (ms) as the log holds them, newest first, at most limit, and
	// whether there are more.
	Activity(ctx context.Context, exchange string, from, to int64, limit int) ([]domain.AccountFact, bool, error)
	// Discrepancies returns the discrepancies still open.
	Discrepancies() []domain.BalanceDiscrepancy
}

// reconcileHandler serves the reconciliation routes from a Reconciler (503
// without one), checking the exchange named against the configuration in
// force when there is one, and reading asOf with the past reads' rules.
type reconcileHandler struct {
	reconciler Reconciler
	exchanges  CurrentConfig
	past       pastReads
}

func (h *reconcileHandler) register(r *mux.Router) {
	r.Handle("/reconciliation", handlerFunc(h.handleReconciliation)).Methods("GET")
	r.Handle("/reconciliation/accounts", handlerFunc(h.handleReconciledAccounts)).Methods("GET")
	r.Handle("/reconciliation/activity", handlerFunc(h.handleAccountActivity)).Methods("GET")
}

// errNoReconciler is the answer of the reconciliation routes on a server
// without a Reconciler.
var errNoReconciler = domain.Errorf(domain.EUNAVAILABLE, "reconciliation is not configured")

// DefaultReconcileWindow is the window of a reconciliation without from.
const DefaultReconcileWindow = 24 * time.Hour

// accountWindow reads an account route's exchange (required, an exchange
// of config.exchanges) and its window of exchange time: from and to (ms;
// a date in UTC, RFC 3339 or ms; to exclusive, a date its day's end),
// fromDefault and toDefault when not given (toDefault 0: now, as the
// caller takes it). A bad one is EINVALID naming it.
func (h *reconcileHandler) accountWindow(q url.Values, fromDefault, toDefault int64) (exchange string, from, to int64, err error) {
	exchange = q.Get("exchange")
	if exchange == "" {
		return "", 0, 0, domain.Errorf(domain.EINVALID, "exchange: required (an exchange of config.exchanges)")
	}
	if h.exchanges != nil {
		if _, ok := h.exchanges.Current().Exchange(exchange); !ok {
			return "", 0, 0, domain.Errorf(domain.EINVALID, "exchange: %.40q is not in config.exchanges", exchange)
		}
	}
	from, to = fromDefault, toDefault
	if err := queryPeriodBounds(q, time.UTC, &from, &to); err != nil {
		return "", 0, 0, err
	}
	if to != 0 && to <= from {
		return "", 0, 0, domain.Errorf(domain.EINVALID, "to: must be after from")
	}
	return exchange, from, to, nil
}

func (h *reconcileHandler) handleReconciliation(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	past, err := h.past.query(q)
	if err != nil {
		return err
	}
	now := h.past.clock.Now().UnixMilli()
	if past.past {
		now = past.asOf
	}
	exchange, from, to, err := h.accountWindow(q, now-DefaultReconcileWindow.Milliseconds(), 0)
	if err != nil {
		return err
	}
	if h.reconciler == nil {
		return errNoReconciler
	}
	var rec domain.Reconciliation
	if past.past {
		rec, err = h.reconciler.ReconcileAsOf(r.Context(), exchange, from, to, past.asOf)
		markAsOf(w, past)
	} else {
		rec, err = h.reconciler.Reconcile(r.Context(), exchange, from, to)
	}
	if err != nil {
		return err
	}
	if rec.Assets == nil {
		rec.Assets = []domain.AssetReconciliation{}
	}
	writeJSON(w, http.StatusOK, rec)
	return nil
}

// reconciledAccount is one account of reconciliation/accounts.
type reconciledAccount struct {
	Exchange string `json:"exchange"`
	// OpenedAt is when the account's opening balances were stated (RFC
	// 3339; empty before the first sync).
	OpenedAt string `json:"openedAt"`
	// ReportedAt is when the exchange's balances compared were reported.
	ReportedAt string                  `json:"reportedAt"`
	Status     string                  `json:"status"`
	Assets     []reconciledAsset       `json:"assets"`
	Synced     []reconciledHistoryRead `json:"synced"`
}

// reconciledAsset is one asset: the balances compared as last reported,
// and, when a discrepancy is open, since when (RFC 3339).
type reconciledAsset struct {
	Asset      string         `json:"asset"`
	Ledger     decimal.Number `json:"ledger"`
	Exchange   decimal.Number `json:"exchange"`
	Difference decimal.Number `json:"difference"`
	Since      string         `json:"since,omitempty"`
}

// reconciledHistoryRead is how far one history was read.
type reconciledHistoryRead struct {
	History string `json:"history"`
	From    string `json:"from"`
	Through string `json:"through"`
}

func rfc3339(ms int64) string {
	if ms == 0 {
		return ""
	}
	return time.UnixMilli(ms).UTC().Format(time.RFC3339)
}

func (h *reconcileHandler) handleReconciledAccounts(w http.ResponseWriter, r *http.Request) error {
	if h.reconciler == nil {
		return errNoReconciler
	}
	out := struct {
		Accounts []reconciledAccount `json:"accounts"`
	}{Accounts: []reconciledAccount{}}
	for _, v := range h.reconciler.Accounts() {
		a := reconciledAccount{Exchange: v.Exchange, OpenedAt: rfc3339(v.Opening.Time), ReportedAt: rfc3339(v.ObservedAt), Status: domain.ReconciledOK,
			Assets: []reconciledAsset{}, Synced: []reconciledHistoryRead{}}
		rows, differs := domain.CompareBalances(v.Implied, v.Observed)
		if differs || len(v.Open) > 0 {
			a.Status = domain.ReconciledDiscrepancy
		}
		for _, row := range rows {
			ra := reconciledAsset{Asset: row.Asset, Ledger: row.Ledger, Exchange: row.Exchange, Difference: row.Difference}
			if d, ok := v.Open[row.Asset]; ok {
				ra.Since = rfc3339(d.Since)
			}
			a.Assets = append(a.Assets, ra)
		}
		for key, spans := range v.Covered {
			for _, sp := range spans {
				a.Synced = append(a.Synced, reconciledHistoryRead{History: key, From: rfc3339(sp.From), Through: rfc3339(sp.Through)})
			}
		}
		sort.Slice(a.Synced, func(i, j int) bool {
			if a.Synced[i].History != a.Synced[j].History {
				return a.Synced[i].History < a.Synced[j].History
			}
			return a.Synced[i].From < a.Synced[j].From
		})
		out.Accounts = append(out.Accounts, a)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// DefaultActivityWindow is the window of reconciliation/activity without
// from; DefaultActivityLimit and MaxActivityLimit its limit's default and
// most.
const (
	DefaultActivityWindow = 30 * 24 * time.Hour
	DefaultActivityLimit  = 100
	MaxActivityLimit      = 1000
)

// accountFact is one fact of reconciliation/activity: the log's record of
// it (domain.AccountFact) with its exchange time also as RFC 3339.
type accountFact struct {
	domain.AccountFact
	At string `json:"at"`
}

// handleAccountActivity lists an account's activity as the log holds it:
// GET reconciliation/activity?exchange=NAME[&from=&to=&limit=], newest
// first, external trades marked (external: true), each transfer once with
// its last status; more says the window holds more than limit facts.
func (h *reconcileHandler) handleAccountActivity(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	now := h.past.clock.Now().UnixMilli()
	exchange, from, to, err := h.accountWindow(q, now-DefaultActivityWindow.Milliseconds(), now+1)
	if err != nil {
		return err
	}
	limit := int64(DefaultActivityLimit)
	if q.Get("limit") != "" {
		if limit, err = queryInt64(q, "limit", 1, MaxActivityLimit); err != nil {
			return err
		}
	}
	if h.reconciler == nil {
		return errNoReconciler
	}
	facts, more, err := h.reconciler.Activity(r.Context(), exchange, from, to, int(limit))
	if err != nil {
		return err
	}
	out := struct {
		Exchange string        `json:"exchange"`
		From     string        `json:"from"`
		To       string        `json:"to"`
		Facts    []accountFact `json:"facts"`
		More     bool          `json:"more"`
	}{Exchange: exchange, From: time.UnixMilli(from).UTC().Format(time.RFC3339Nano), To: time.UnixMilli(to).UTC().Format(time.RFC3339Nano),
		Facts: make([]accountFact, 0, len(facts)), More: more}
	for _, f := range facts {
		out.Facts = append(out.Facts, accountFact{AccountFact: f, At: time.UnixMilli(f.Time).UTC().Format(time.RFC3339Nano)})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// discrepancyReason says what /healthz adds for rec's open discrepancies
// ("" when none, or without rec).
func discrepancyReason(rec Reconciler) string {
	if rec == nil {
		return ""
	}
	ds := rec.Discrepancies()
	if len(ds) == 0 {
		return ""
	}
	d := ds[0]
	why := "balance discrepancy: " + d.Account + " " + d.Asset + " differs by " + d.Difference.String() + " (ledger " + d.Ledger.String() +
		", exchange " + d.Exchange.String() + ") since " + rfc3339(d.Since)
	if len(ds) > 1 {
		why += " and " + strconv.Itoa(len(ds)-1) + " more"
	}
	return why
}
