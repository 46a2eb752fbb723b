package http

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/books"
	"github.com/tradeledger/tradeledger/domain/pnlread"
)

// Reads as of a past time and under another lot matching method. asOf=
// (RFC 3339 or ms since the epoch) on pnl/overview, pnl/sum, balances, the
// reports and the exports answers what the service would have said at that
// time: the read models rebuilt from the events up to it, by trade time,
// as `tradeledger replay --until` rebuilds them (projections.BuildState),
// without stopping the live ones; Server.States (PastStates) keeps recent
// past states and catches them up, so that repeated reads cost one build. method= on
// pnl/overview and pnl/sum answers under another lot matching than the
// service's --pnl-method, from a state of the whole log rebuilt under it.
// An asOf at or after the server's clock is the live state; asOf=0 is the
// epoch, before every event: the empty state. A response served from a
// past state carries its time in the X-As-Of header (ms). The POST routes
// that take them (pnl/overview, balances) read asOf and method in their
// JSON body too: the same value in the query and the body is one value,
// two different ones are a 400 naming the field.

// AsOfHeader names the instant (ms) a past-state response speaks of.
const AsOfHeader = "X-As-Of"

// PastStates rebuilds the read models as of a past time or under another
// lot matching method (projections.States: from the log, or from the
// newest read-model snapshot within the cut, the recent ones kept and
// caught up). at is the instant in trade time the read is of; the zero
// time is the whole log as it is now. ctx bounds the wait for a build;
// errors carry domain codes (EUNAVAILABLE when a build cannot be afforded
// now).
type PastStates interface {
	// PnlAt returns the PNL reader of the log at at under method.
	PnlAt(ctx context.Context, at time.Time, method domain.PnlMethod) (PnlReader, error)
	// BooksAt returns the books' source of the log at at under method.
	BooksAt(ctx context.Context, at time.Time, method domain.PnlMethod) (books.Source, error)
	// BalancesAt returns each exchange's last reported balances at at
	// (from the state under method, which the PNL reads of at share).
	BalancesAt(ctx context.Context, at time.Time, method domain.PnlMethod) ([]domain.BalancesObserved, error)
	// Builds returns how many states were built so far (a kept state
	// read again is not a build): what shows repeated reads served from
	// kept states.
	Builds() int
}

// LotMethod says which lot matching the live read models use
// (projections.Ledger: --pnl-method).
type LotMethod interface {
	PnlMethod() domain.PnlMethod
}

// pastReads is what the routes that take asOf and method share: reading
// them from a request (the server's clock says what is past) and the past
// states that answer them. Without states a past read is 503.
type pastReads struct {
	clock  domain.Clock
	states PastStates
	// live is the live read models' lot matching; nil: LOFO.
	live LotMethod
}

// pastRead is what a request names of asOf and method.
type pastRead struct {
	// asOf (ms) is the instant asked for; past when it is before the
	// server's clock (the read is of a past state; 0 is the epoch).
	asOf int64
	past bool
	// method is the lot matching asked for; named when one was given.
	method domain.PnlMethod
	named  bool
}

// at is the instant the read is of: asOf, or (zero) the whole log now.
func (p pastRead) at() time.Time {
	if p.past {
		return time.UnixMilli(p.asOf)
	}
	return time.Time{}
}

// pastBody holds asOf and method as a POST route's JSON body gives them
// (asOf: ms as a number, or a string as the query takes it).
type pastBody struct {
	AsOf   json.RawMessage `json:"asOf"`
	Method json.RawMessage `json:"method"`
}

// query reads the optional asOf and method parameters of the query.
func (pr pastReads) query(q url.Values) (pastRead, error) {
	return pr.read(q, nil)
}

// read reads asOf and method from the query and, when body is not nil,
// from a POST's body: given in both, they must name the same instant and
// the same method (EINVALID naming the field otherwise); given twice in
// the query, EINVALID.
func (pr pastReads) read(q url.Values, body *pastBody) (pastRead, error) {
	var p pastRead
	at, atSet, err := queryInstant(q)
	if err != nil {
		return p, err
	}
	if body != nil && isSet(body.AsOf) {
		b, err := bodyInstant(body.AsOf)
		if err != nil {
			return p, err
		}
		if atSet && b != at {
			return p, domain.Errorf(domain.EINVALID, "asOf: the query says %s, the body %s: give it once, or the same instant in both", q.Get("asOf"), body.AsOf)
		}
		at, atSet = b, true
	}
	if atSet && at < pr.clock.Now().UnixMilli() {
		p.asOf, p.past = at, true
	}
	if p.method, p.named, err = queryMethod(q); err != nil {
		return p, err
	}
	if body != nil && isSet(body.Method) {
		var v string
		if err := json.Unmarshal(body.Method, &v); err != nil {
			return p, domain.Errorf(domain.EINVALID, "method must be a string: %s", domain.PnlMethodNames)
		}
		m, err := domain.ParsePnlMethod(v)
		if err != nil {
			return p, domain.Errorf(domain.EINVALID, "method: %s", domain.ErrorMessage(err))
		}
		if p.named && m != p.method {
			return p, domain.Errorf(domain.EINVALID, "method: the query says %s, the body %s: give it once, or the same in both", q.Get("method"), v)
		}
		p.method, p.named = m, true
	}
	return p, nil
}

// decodeOptionalBody decodes a JSON body into v when there is one: an
// empty body (what a route's spec asks for) is none, whatever its
// declared Content-Type.
func decodeOptionalBody(r *http.Request, v any) error {
	switch b := r.Body.(type) {
	case nil:
		return nil
	case *bufferedBody:
		if len(bytes.TrimSpace(b.data[b.off:])) == 0 {
			return nil
		}
	default:
		if r.Body == http.NoBody || r.ContentLength == 0 {
			return nil
		}
	}
	return decodeJSON(r, v, true)
}

// isSet reports whether a body field was given (not absent, not null).
func isSet(v json.RawMessage) bool {
	return len(v) > 0 && string(v) != "null"
}

// queryInstant reads the optional asOf parameter of q (set false when
// absent); given more than once, EINVALID.
func queryInstant(q url.Values) (t int64, set bool, err error) {
	vs := q["asOf"]
	switch {
	case len(vs) == 0:
		return 0, false, nil
	case len(vs) > 1:
		return 0, false, domain.Errorf(domain.EINVALID, "asOf is given %d times; it takes one value", len(vs))
	case vs[0] == "":
		return 0, false, domain.Errorf(domain.EINVALID, "asOf is empty: give RFC 3339 or milliseconds since the epoch")
	}
	if t, err = parseInstant(vs[0]); err != nil {
		return 0, false, domain.Errorf(domain.EINVALID, "asOf: %s", domain.ErrorMessage(err))
	}
	return t, true, nil
}

// bodyInstant reads a body's asOf: milliseconds as a JSON number (a whole
// number ≥ 0), or a string as the query takes it.
func bodyInstant(v json.RawMessage) (int64, error) {
	var s string
	if err := json.Unmarshal(v, &s); err == nil {
		t, err := parseInstant(s)
		if err != nil {
			return 0, domain.Errorf(domain.EINVALID, "asOf: %s", domain.ErrorMessage(err))
		}
		return t, nil
	}
	t, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil || t < 0 {
		return 0, domain.Errorf(domain.EINVALID, "asOf must be milliseconds since the epoch (a whole number, 0 or more) or a string (RFC 3339 or ms), not %s", v)
	}
	return t, nil
}

// parseInstant reads RFC 3339 or milliseconds since the epoch (≥ 0).
func parseInstant(v string) (int64, error) {
	if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
		if ms < 0 {
			return 0, domain.Errorf(domain.EINVALID, "%q is before the epoch", v)
		}
		return ms, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return 0, domain.Errorf(domain.EINVALID, "%q is neither RFC 3339 (2024-12-31T23:59:59Z) nor milliseconds since the epoch", v)
	}
	if t.UnixMilli() < 0 {
		return 0, domain.Errorf(domain.EINVALID, "%q is before the epoch", v)
	}
	return t.UnixMilli(), nil
}

// queryPeriodBounds reads the optional from and to parameters with
// parsePeriodBound in loc into *from and *to, leaving each as it is when
// absent (EINVALID naming the one that does not parse). Whether to is after
// from is the caller's check: its defaults take part.
func queryPeriodBounds(q url.Values, loc *time.Location, from, to *int64) (err error) {
	if v := q.Get("from"); v != "" {
		if *from, err = parsePeriodBound("from", v, loc, false); err != nil {
			return err
		}
	}
	if v := q.Get("to"); v != "" {
		if *to, err = parsePeriodBound("to", v, loc, true); err != nil {
			return err
		}
	}
	return nil
}

// parsePeriodBound reads a period's from or to: a date (YYYY-MM-DD, the
// first instant of that day in loc for from, of the day after for to, so
// that to names the last day included), RFC 3339 or ms.
func parsePeriodBound(name, v string, loc *time.Location, end bool) (int64, error) {
	if d, err := time.ParseInLocation(time.DateOnly, v, loc); err == nil {
		y, m, dd := d.Date()
		if end {
			dd++
		}
		return pnlread.LocalDayStart(y, m, dd, loc).UnixMilli(), nil
	}
	t, err := parseInstant(v)
	if err != nil {
		return 0, domain.Errorf(domain.EINVALID, "%s: %s, or a date (2024-12-31) in timezone", name, domain.ErrorMessage(err))
	}
	return t, nil
}

// queryMethod reads the optional method parameter (ok false when absent;
// EINVALID when given more than once).
func queryMethod(q url.Values) (m domain.PnlMethod, ok bool, err error) {
	return queryOptional(q, "method", domain.LOFO, domain.ParsePnlMethod)
}

// queryOptional reads the optional parameter name with parse: ok false
// and def when it is absent or empty; EINVALID naming it when it is given
// more than once or parse refuses it.
func queryOptional[T any](q url.Values, name string, def T, parse func(string) (T, error)) (v T, ok bool, err error) {
	if n := len(q[name]); n > 1 {
		return def, false, domain.Errorf(domain.EINVALID, "%s is given %d times; it takes one value", name, n)
	}
	text := q.Get(name)
	if text == "" {
		return def, false, nil
	}
	v, err = parse(text)
	if err != nil {
		return v, false, domain.Errorf(domain.EINVALID, "%s: %s", name, domain.ErrorMessage(err))
	}
	return v, true, nil
}

// liveMethod is the lot matching of the live read models (--pnl-method:
// the Ledger's, and the ClickHouse sink's when it serves PNL).
func (pr pastReads) liveMethod() domain.PnlMethod {
	if pr.live != nil {
		return pr.live.PnlMethod()
	}
	return domain.LOFO
}

// ready is EUNAVAILABLE without past states.
func (pr pastReads) ready() error {
	if pr.states == nil {
		return domain.Errorf(domain.EUNAVAILABLE, "reads as of a past time or under another method are not available on this server")
	}
	return nil
}

// pnl returns the PNL reader of the log as of p (the whole log now when p
// is not past) under method.
func (pr pastReads) pnl(r *http.Request, p pastRead, method domain.PnlMethod) (PnlReader, error) {
	if err := pr.ready(); err != nil {
		return nil, err
	}
	return pr.states.PnlAt(r.Context(), p.at(), method)
}

// books returns the books' source of the log as of p, in the state of the
// live lot matching.
func (pr pastReads) books(r *http.Request, p pastRead) (books.Source, error) {
	if err := pr.ready(); err != nil {
		return nil, err
	}
	return pr.states.BooksAt(r.Context(), p.at(), pr.liveMethod())
}

// balances returns the balances last reported as of p.
func (pr pastReads) balances(r *http.Request, p pastRead) ([]domain.BalancesObserved, error) {
	if err := pr.ready(); err != nil {
		return nil, err
	}
	return pr.states.BalancesAt(r.Context(), p.at(), pr.liveMethod())
}

// markAsOf names the instant a response from a past state speaks of.
func markAsOf(w http.ResponseWriter, p pastRead) {
	if p.past {
		w.Header().Set(AsOfHeader, strconv.FormatInt(p.asOf, 10))
	}
}
