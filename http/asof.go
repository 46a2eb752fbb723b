package http

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/projections"
)

// Reads as of a past time and under another lot matching method. asOf=
// (RFC 3339 or ms since the epoch) on pnl/overview, pnl/sum, balances, the
// reports and the exports answers what the service would have said at that
// time: the read models rebuilt from the events up to it, by trade time,
// as `tradeledger replay --until` rebuilds them (projections.BuildState),
// without stopping the live ones; Server.States keeps recent past states
// and catches them up, so that repeated reads cost one build. method= on
// pnl/overview and pnl/sum answers under another lot matching than the
// service's --pnl-method, from a state of the whole log rebuilt under it.
// An asOf at or after the server's clock is the live state. A response
// served from a past state carries its time in the X-As-Of header (ms).

// AsOfHeader names the instant (ms) a past-state response speaks of.
const AsOfHeader = "X-As-Of"

// queryAsOf reads the optional asOf parameter: 0 when absent or not before
// the server's clock (the live state).
func (s *Server) queryAsOf(q url.Values) (int64, error) {
	v := q.Get("asOf")
	if v == "" {
		return 0, nil
	}
	t, err := parseInstant(v)
	if err != nil {
		return 0, domain.Errorf(domain.EINVALID, "asOf: %s", domain.ErrorMessage(err))
	}
	if t >= s.Clock.Now().UnixMilli() {
		return 0, nil
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

// parsePeriodBound reads a period's from or to: a date (YYYY-MM-DD, the
// first instant of that day in loc for from, of the day after for to, so
// that to names the last day included), RFC 3339 or ms.
func parsePeriodBound(name, v string, loc *time.Location, end bool) (int64, error) {
	if d, err := time.ParseInLocation(time.DateOnly, v, loc); err == nil {
		y, m, dd := d.Date()
		if end {
			dd++
		}
		return domain.LocalDayStart(y, m, dd, loc).UnixMilli(), nil
	}
	t, err := parseInstant(v)
	if err != nil {
		return 0, domain.Errorf(domain.EINVALID, "%s: %s, or a date (2024-12-31) in timezone", name, domain.ErrorMessage(err))
	}
	return t, nil
}

// queryMethod reads the optional method parameter (ok false when absent).
func queryMethod(q url.Values) (m domain.PnlMethod, ok bool, err error) {
	v := q.Get("method")
	if v == "" {
		return domain.LOFO, false, nil
	}
	m, err = domain.ParsePnlMethod(v)
	if err != nil {
		return m, false, domain.Errorf(domain.EINVALID, "method: %s", domain.ErrorMessage(err))
	}
	return m, true, nil
}

// liveMethod is the lot matching of the live read models (--pnl-method:
// the Ledger's, and the ClickHouse sink's when it serves PNL).
func (s *Server) liveMethod() domain.PnlMethod {
	if s.Ledger != nil {
		return s.Ledger.Method
	}
	return domain.LOFO
}

// pastState returns the state of the log as of asOf (ms; 0: the whole log
// now) under method, from Server.States; EUNAVAILABLE without them.
func (s *Server) pastState(r *http.Request, asOf int64, method domain.PnlMethod) (*projections.State, error) {
	if s.States == nil {
		return nil, domain.Errorf(domain.EUNAVAILABLE, "reads as of a past time or under another method are not available on this server")
	}
	cut := projections.Cut{}
	if asOf != 0 {
		cut = projections.AsOf(asOf)
	}
	return s.States.Get(r.Context(), cut, method)
}

// markAsOf names the instant a response from a past state speaks of.
func markAsOf(w http.ResponseWriter, asOf int64) {
	if asOf != 0 {
		w.Header().Set(AsOfHeader, strconv.FormatInt(asOf, 10))
	}
}
