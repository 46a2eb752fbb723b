// Package metrics holds the service's Prometheus metrics
// (github.com/prometheus/client_golang): the event store's write pipeline,
// the log head and the projections' lag, the ClickHouse sink's lag, HTTP
// requests, orders and failed logins (counted from the log), open event
// streams and the Go runtime. cmd/tradeledger wires it: the sqlite store
// reports to it (sqlite.Observer), the HTTP server calls ObserveRequest and
// serves Handler, the projections runner feeds it events.
package metrics

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/streams"
)

// Namespace prefixes every metric of the service.
const Namespace = "tradeledger"

// Metrics is the registry of the service's metrics. Create with New; every
// method is safe for concurrent use.
type Metrics struct {
	// Registry holds every metric, the Go runtime and process collectors
	// included.
	Registry *prometheus.Registry

	appendSeconds prometheus.Histogram
	batchEvents   prometheus.Histogram
	syncSeconds   prometheus.Histogram
	requests      *prometheus.CounterVec
	reqSeconds    *prometheus.HistogramVec
	orders        *prometheus.CounterVec
	loginFailures prometheus.Counter
	attention     *prometheus.GaugeVec // orders needing attention, by exchange
	needs         map[string]string    // their streams → exchange

	mu       sync.Mutex
	open     streams.StreamMap[openOrder] // order stream → what Apply needs of it until it ends
	counters map[string]*orderCounts      // exchange → its orders counters
	// lastExchange's counters, the last countsOf asked for (a payload's
	// string, never an event's: Projection).
	lastExchange string
	last         *orderCounts
}

// openOrder is an order that may still fill.
type openOrder struct {
	counts *orderCounts
	left   decimal.Decimal // amount not yet filled
}

// orderCounts are an exchange's children of the orders counter, looked up
// once: a replay counts millions of orders.
type orderCounts struct{ placed, filled, rejected prometheus.Counter }

// countsOf returns exchange's counters (m.mu held).
func (m *Metrics) countsOf(exchange string) *orderCounts {
	if m.last != nil && m.lastExchange == exchange { // a log's orders mostly go to one exchange
		return m.last
	}
	c := m.counters[exchange]
	if c == nil {
		c = &orderCounts{placed: m.orders.WithLabelValues(exchange, "placed"),
			filled: m.orders.WithLabelValues(exchange, "filled"), rejected: m.orders.WithLabelValues(exchange, "rejected")}
		m.counters[exchange] = c
	}
	m.lastExchange, m.last = exchange, c
	return c
}

// New returns Metrics with every metric registered.
func New() *Metrics {
	m := &Metrics{Registry: prometheus.NewRegistry(), open: streams.NewStreamMap[openOrder](), counters: map[string]*orderCounts{}}
	latency := []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}
	m.appendSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "append_duration_seconds",
		Help:    "Time from an append call until its events are durable (or it failed).",
		Buckets: latency,
	})
	m.batchEvents = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "append_batch_events",
		Help:    "Events written by one group-commit transaction of the event store.",
		Buckets: prometheus.ExponentialBuckets(1, 4, 8), // 1 … 16384
	})
	m.syncSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "fsync_duration_seconds",
		Help:    "Time of one fdatasync of the event store's write-ahead log.",
		Buckets: latency,
	})
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "http_requests_total",
		Help: "HTTP requests answered, by route template, method and status.",
	}, []string{"route", "method", "status"})
	m.reqSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "http_request_duration_seconds",
		Help:    "Time to answer an HTTP request, by route template and method.",
		Buckets: latency,
	}, []string{"route", "method"})
	m.orders = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "orders_total",
		Help: "Orders by exchange and outcome as the log records them: placed (requested), filled (completely), rejected.",
	}, []string{"exchange", "outcome"})
	m.loginFailures = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: Namespace, Name: "login_failures_total",
		Help: "Refused password logins (LoginFailed events).",
	})
	m.attention = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "orders_needing_attention",
		Help: "Orders an exchange sent a number of that the ledger cannot hold (OrderNeedsAttention not cleared yet); their pairs are paused.",
	}, []string{"exchange"})
	m.needs = map[string]string{}
	m.Registry.MustRegister(m.appendSeconds, m.batchEvents, m.syncSeconds, m.requests, m.reqSeconds,
		m.orders, m.loginFailures, m.attention,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{Namespace: Namespace}))
	return m
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{})
}

// ObserveAppend implements sqlite.Observer.
func (m *Metrics) ObserveAppend(d time.Duration) { m.appendSeconds.Observe(d.Seconds()) }

// ObserveBatch implements sqlite.Observer.
func (m *Metrics) ObserveBatch(events int) { m.batchEvents.Observe(float64(events)) }

// ObserveSync implements sqlite.Observer.
func (m *Metrics) ObserveSync(d time.Duration) { m.syncSeconds.Observe(d.Seconds()) }

// ObserveRequest counts one answered HTTP request. route is the route's
// template (never the raw path, whose values would make labels without
// bound), "unmatched" for requests no route matched.
func (m *Metrics) ObserveRequest(route, method string, status int, d time.Duration) {
	m.requests.WithLabelValues(route, method, strconv.Itoa(status)).Inc()
	m.reqSeconds.WithLabelValues(route, method).Observe(d.Seconds())
}

// statusTimeout bounds how long one scrape waits for a status function.
const statusTimeout = 2 * time.Second

// WatchLog adds tradeledger_log_head (the log's last position) and
// tradeledger_projection_lag (positions the projections are behind it),
// read at every scrape.
func (m *Metrics) WatchLog(head func(context.Context) (uint64, error), applied func() uint64) {
	m.Registry.MustRegister(&logCollector{head: head, applied: applied,
		headDesc: prometheus.NewDesc(Namespace+"_log_head", "Position of the last event of the log.", nil, nil),
		lagDesc:  prometheus.NewDesc(Namespace+"_projection_lag", "Positions of the log the projections have not applied yet.", nil, nil),
	})
}

// WatchSink adds tradeledger_clickhouse_sink_lag (positions the ClickHouse
// sink is behind the head), read at every scrape; absent while lag fails.
func (m *Metrics) WatchSink(lag func(context.Context) (uint64, error)) {
	m.Registry.MustRegister(&funcCollector{f: lag,
		desc: prometheus.NewDesc(Namespace+"_clickhouse_sink_lag", "Positions of the log the ClickHouse sink has not written yet.", nil, nil)})
}

// WatchStreams adds tradeledger_sse_streams_open (live event streams).
func (m *Metrics) WatchStreams(open func() int) {
	m.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "sse_streams_open",
		Help: "Event streams (server-sent events) currently open.",
	}, func() float64 { return float64(open()) }))
}

// WatchSnapshotCheck adds tradeledger_snapshot_check_failed (1 once the
// read-model snapshot serve started from proved not to be the log's
// state, else 0) and tradeledger_snapshot_check_seconds (how long its
// background check took; 0 until it is done).
func (m *Metrics) WatchSnapshotCheck(status func() (failed bool, took time.Duration)) {
	m.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "snapshot_check_failed",
		Help: "1 once the read-model snapshot the service started from differed from the log (it was discarded), else 0.",
	}, func() float64 {
		if failed, _ := status(); failed {
			return 1
		}
		return 0
	}), prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "snapshot_check_seconds",
		Help: "How long the background check of the read-model snapshot the service started from took (0 until done).",
	}, func() float64 { _, took := status(); return took.Seconds() }))
}

type logCollector struct {
	head              func(context.Context) (uint64, error)
	applied           func() uint64
	headDesc, lagDesc *prometheus.Desc
}

func (c *logCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.headDesc; ch <- c.lagDesc }

func (c *logCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), statusTimeout)
	defer cancel()
	head, err := c.head(ctx)
	if err != nil {
		return
	}
	applied := c.applied()
	lag := uint64(0)
	if head > applied {
		lag = head - applied
	}
	ch <- prometheus.MustNewConstMetric(c.headDesc, prometheus.GaugeValue, float64(head))
	ch <- prometheus.MustNewConstMetric(c.lagDesc, prometheus.GaugeValue, float64(lag))
}

type funcCollector struct {
	f    func(context.Context) (uint64, error)
	desc *prometheus.Desc
}

func (c *funcCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *funcCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), statusTimeout)
	defer cancel()
	if v, err := c.f(ctx); err == nil {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(v))
	}
}

// Name implements projections.Projection.
func (m *Metrics) Name() string { return "metrics" }

// Apply implements projections.Projection: it counts orders placed
// (OrderRequested), completely filled (fills adding up to the amount) and
// rejected, by exchange, refused logins, and the orders needing attention. It remembers only orders that
// may still fill. Other events are ignored; a payload that does not decode
// is left uncounted (the projections that own it report it).
func (m *Metrics) Apply(e *domain.Event) error {
	switch e.Type {
	case domain.TypeOrderRequested:
		r, err := domain.Payload[domain.OrderRequested](e) // no copy of a predecoded payload
		if err != nil {
			return nil
		}
		m.mu.Lock()
		c := m.countsOf(r.Exchange)
		m.open.Put(e.Stream, openOrder{counts: c, left: r.Amount})
		m.mu.Unlock()
		c.placed.Inc()
	case domain.TypeOrderFilled:
		f, err := domain.Payload[domain.OrderFilled](e)
		if err != nil {
			return nil
		}
		m.mu.Lock()
		if o, ok := m.open.Get(e.Stream); ok {
			o.left = o.left.Sub(f.Quantity)
			if o.left.Sign() <= 0 {
				m.open.Delete(e.Stream)
				o.counts.filled.Inc()
			} else {
				m.open.Put(e.Stream, o)
			}
		}
		m.mu.Unlock()
	case domain.TypeOrderRejected:
		m.mu.Lock()
		if o, ok := m.open.Get(e.Stream); ok {
			m.open.Delete(e.Stream)
			o.counts.rejected.Inc()
		}
		m.mu.Unlock()
	case domain.TypeOrderCancelled, domain.TypeOrderExpired:
		m.mu.Lock()
		m.open.Delete(e.Stream)
		m.mu.Unlock()
	case domain.TypeLoginFailed:
		m.loginFailures.Inc()
	case domain.TypeOrderNeedsAttention:
		var p domain.OrderNeedsAttention
		if e.Decode(&p) != nil {
			return nil
		}
		m.mu.Lock()
		if _, ok := m.needs[e.Stream]; !ok {
			m.needs[strings.Clone(e.Stream)] = p.Exchange
			m.attention.WithLabelValues(p.Exchange).Inc()
		}
		m.mu.Unlock()
	case domain.TypeOrderAttentionCleared:
		m.mu.Lock()
		if x, ok := m.needs[e.Stream]; ok {
			delete(m.needs, e.Stream)
			m.attention.WithLabelValues(x).Dec()
		}
		m.mu.Unlock()
	}
	return nil
}
