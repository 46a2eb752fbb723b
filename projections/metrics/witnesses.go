package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
)

// WitnessState is what the witness client says at a scrape.
type WitnessState struct {
	// Missing is how many more cosignatures the latest checkpoint needs
	// for its quorum.
	Missing   int
	Witnesses []WitnessGauge
}

// WitnessGauge is one witness at a scrape: the last size it cosigned,
// and whether its refusal of a checkpoint as inconsistent stands.
type WitnessGauge struct {
	Name    string
	Size    int64
	Refused bool
}

// WatchWitnesses registers the witnesses' gauges, read from state at each
// scrape: tradeledger_witness_cosigned_size{witness},
// tradeledger_witness_refused{witness} (1 while a witness's refusal of a
// checkpoint as inconsistent stands: a forked or rewritten log; alert on
// it) and tradeledger_witness_quorum_missing.
func (m *Metrics) WatchWitnesses(state func() WitnessState) {
	m.Registry.MustRegister(&witnessCollector{state: state})
}

var (
	witnessSizeDesc = prometheus.NewDesc(Namespace+"_witness_cosigned_size",
		"Size of the last checkpoint each witness cosigned (0: none).", []string{"witness"}, nil)
	witnessRefusedDesc = prometheus.NewDesc(Namespace+"_witness_refused",
		"1 while a witness's refusal of a checkpoint as inconsistent with what it cosigned stands: the log forked, was rewritten or cut under its key.", []string{"witness"}, nil)
	witnessMissingDesc = prometheus.NewDesc(Namespace+"_witness_quorum_missing",
		"Cosignatures the latest checkpoint still needs for --witness-quorum.", nil, nil)
)

type witnessCollector struct{ state func() WitnessState }

func (c *witnessCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- witnessSizeDesc
	ch <- witnessRefusedDesc
	ch <- witnessMissingDesc
}

func (c *witnessCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.state()
	ch <- prometheus.MustNewConstMetric(witnessMissingDesc, prometheus.GaugeValue, float64(st.Missing))
	for _, w := range st.Witnesses {
		refused := 0.0
		if w.Refused {
			refused = 1
		}
		ch <- prometheus.MustNewConstMetric(witnessSizeDesc, prometheus.GaugeValue, float64(w.Size), w.Name)
		ch <- prometheus.MustNewConstMetric(witnessRefusedDesc, prometheus.GaugeValue, refused, w.Name)
	}
}
