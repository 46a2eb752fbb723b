package http

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/gorilla/mux"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/projections"
)

// marksHandler serves the chart marks (GET chart/marks) from a MarkReader
// (the Ledger; 503 without one): one mark per fill of the pair with
// startTime ≤ time ≤ endTime, oldest first; see projections.Mark. Mark
// times are UNIX seconds.
//
// interval is minutes ("15") or a resolution with a unit, as charting
// clients and the SDK send it: "1m", "15m", "1h", "4h", "1d", "1w" (also
// "D"/"1D", "W"). It is validated and otherwise unused: marks sit at their
// fill's second and the chart places them on its candles.
//
// startTime and endTime are UNIX seconds (the spec) or milliseconds,
// told apart by magnitude: a value of at least 100000000000 (1e11; as
// seconds that is the year 5138, as milliseconds 1973-03-03) is
// milliseconds and is truncated to its second. exchange and pair may be
// URL-encoded twice (decodeKey). chart/data belongs to market.go.
// MarkReader is the Ledger's chart marks (projections.Ledger): one per fill
// of the pair with startSec ≤ time ≤ endSec (UNIX seconds), oldest first.
type MarkReader interface {
	Marks(exchange, pair string, startSec, endSec int64) []projections.Mark
}

type marksHandler struct {
	marks MarkReader
}

// ready is errNoLedger without a MarkReader.
func (h *marksHandler) ready() error {
	if h.marks == nil {
		return errNoLedger
	}
	return nil
}

func (h *marksHandler) register(r *mux.Router) {
	r.Handle("/chart/marks", requires(h.ready, h.handleChartMarks)).Methods("GET")
}

// msThreshold is the smallest startTime/endTime read as milliseconds.
const msThreshold = 100_000_000_000

// maxIntervalMinutes bounds interval (a year).
const maxIntervalMinutes = 60 * 24 * 366

func (h *marksHandler) handleChartMarks(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	exchange, pair := decodeKey(q.Get("exchange")), decodeKey(q.Get("pair"))
	if exchange == "" {
		return domain.Errorf(domain.EINVALID, "exchange is required")
	}
	if _, _, err := domain.SplitPair(pair); err != nil {
		return domain.Errorf(domain.EINVALID, "pair: %s", domain.ErrorMessage(err))
	}
	if _, err := intervalMinutes(q.Get("interval")); err != nil {
		return err
	}
	start, err := queryUnixSeconds(q, "startTime", 0)
	if err != nil {
		return err
	}
	end, err := queryUnixSeconds(q, "endTime", start)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, h.marks.Marks(exchange, pair, start, end))
	return nil
}

// intervalMinutes reads a chart interval: minutes, or a count with a unit
// m, h, d or w (case-insensitive; "D" and "W" alone mean one).
func intervalMinutes(v string) (int64, error) {
	bad := domain.Errorf(domain.EINVALID, "interval must be minutes (\"15\") or a resolution such as 1m, 15m, 1h, 4h, 1d, not %q", v)
	if v == "" {
		return 0, domain.Errorf(domain.EINVALID, "interval is required (minutes, or 1m/15m/1h/4h/1d)")
	}
	unit := int64(1)
	num := v
	switch v[len(v)-1] {
	case 'm', 'M':
		num = v[:len(v)-1]
	case 'h', 'H':
		unit, num = 60, v[:len(v)-1]
	case 'd', 'D':
		unit, num = 60*24, v[:len(v)-1]
	case 'w', 'W':
		unit, num = 60*24*7, v[:len(v)-1]
	}
	if num == "" && unit >= 60*24 { // "D", "W"
		num = "1"
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 1 || n > maxIntervalMinutes/unit {
		return 0, bad
	}
	return n * unit, nil
}

// queryUnixSeconds reads a required time in UNIX seconds or milliseconds
// (msThreshold), as seconds, at least lo.
func queryUnixSeconds(q url.Values, name string, lo int64) (int64, error) {
	v, err := queryInt64(q, name, 0, maxInt)
	if err != nil {
		return 0, err
	}
	if v >= msThreshold {
		v /= 1000
	}
	if v < lo {
		return 0, domain.Errorf(domain.EINVALID, "%s must not be before startTime", name)
	}
	return v, nil
}
