package metrics

import (
	"maps"
	"math"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/snap"
)

// SnapshotVersion implements projections.Snapshotter.
func (m *Metrics) SnapshotVersion() uint32 { return 1 }

// Freeze implements projections.Snapshotter: the counts taken from the log
// (orders by exchange and outcome, failed logins, orders needing
// attention) and the orders that may still fill. The store's and the HTTP
// server's metrics are the process's own, not the log's: a restart starts
// them again.
func (m *Metrics) Freeze() func(*snap.Encoder) {
	type counts struct{ placed, filled, rejected uint64 }
	type open struct {
		id       int64
		stream   string
		exchange string
		left     decimal.Decimal
	}
	m.mu.Lock()
	exchangeOf := make(map[*orderCounts]string, len(m.counters))
	byExchange := make(map[string]counts, len(m.counters))
	for x, c := range m.counters {
		exchangeOf[c] = x
		byExchange[x] = counts{counterValue(c.placed), counterValue(c.filled), counterValue(c.rejected)}
	}
	opens := make([]open, 0, m.open.Len())
	m.open.Each(func(id int64, stream string, o openOrder) {
		opens = append(opens, open{id, stream, exchangeOf[o.counts], o.left})
	})
	needs := maps.Clone(m.needs)
	failures := counterValue(m.loginFailures)
	gauges := gaugeValues(m.attention) // each exchange that had one, 0 now or not
	m.mu.Unlock()
	slices.SortFunc(opens, func(a, b open) int {
		if a.stream != b.stream {
			if a.stream < b.stream {
				return -1
			}
			return 1
		}
		return int(min(max(a.id-b.id, -1), 1))
	})
	return func(e *snap.Encoder) {
		snap.TextMap(e, byExchange, func(c counts) {
			e.Uvarint(c.placed)
			e.Uvarint(c.filled)
			e.Uvarint(c.rejected)
		})
		e.Len(len(opens))
		for _, o := range opens {
			e.Varint(o.id)
			e.Text(o.stream)
			e.Text(o.exchange)
			e.Decimal(o.left)
		}
		e.Uvarint(failures)
		snap.TextMap(e, needs, e.Text)
		snap.TextMap(e, gauges, e.Varint)
	}
}

// gaugeValues returns the values of a gauge vector's children by their
// one label.
func gaugeValues(v *prometheus.GaugeVec) map[string]int64 {
	ch := make(chan prometheus.Metric)
	go func() {
		v.Collect(ch)
		close(ch)
	}()
	out := map[string]int64{}
	for pm := range ch {
		var d dto.Metric
		if pm.Write(&d) == nil && len(d.GetLabel()) == 1 {
			out[d.GetLabel()[0].GetValue()] = int64(math.Round(d.GetGauge().GetValue()))
		}
	}
	return out
}

// counterValue returns a counter's count.
func counterValue(c prometheus.Counter) uint64 {
	var d dto.Metric
	if c.Write(&d) != nil {
		return 0
	}
	return uint64(math.Round(d.GetCounter().GetValue()))
}

// Load implements projections.Snapshotter.
func (m *Metrics) Load(d *snap.Decoder) (func(), error) {
	type counts struct {
		exchange                 string
		placed, filled, rejected uint64
	}
	var byExchange []counts
	for range d.Len(4) {
		byExchange = append(byExchange, counts{d.Text(), d.Uvarint(), d.Uvarint(), d.Uvarint()})
	}
	type open struct {
		id               int64
		stream, exchange string
		left             decimal.Decimal
	}
	var opens []open
	for range d.Len(4) {
		opens = append(opens, open{d.Varint(), d.Text(), d.Text(), d.Decimal()})
	}
	failures := d.Uvarint()
	needs := map[string]string{}
	for range d.Len(2) {
		s := d.Text()
		needs[s] = d.Text()
	}
	gauges := map[string]int64{}
	for range d.Len(2) {
		x := d.Text()
		gauges[x] = d.Varint()
	}
	if err := d.Err(); err != nil {
		return nil, err
	}
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		for _, c := range byExchange {
			oc := m.countsOf(c.exchange)
			oc.placed.Add(float64(c.placed))
			oc.filled.Add(float64(c.filled))
			oc.rejected.Add(float64(c.rejected))
		}
		m.lastExchange, m.last = "", nil
		for _, o := range opens {
			v := openOrder{counts: m.countsOf(o.exchange), left: o.left}
			if o.stream == "" {
				m.open.PutID(o.id, v)
			} else {
				m.open.Put(o.stream, v)
			}
		}
		m.lastExchange, m.last = "", nil
		m.loginFailures.Add(float64(failures))
		m.needs = needs
		for x, v := range gauges {
			m.attention.WithLabelValues(x).Set(float64(v))
		}
	}, nil
}
