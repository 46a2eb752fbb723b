package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tradeledger/tradeledger/domain"
)

// discrepancyCollector exposes the open balance discrepancies of the
// exchange accounts (BalanceDiscrepancy not cleared, read from the
// accounts' read model at each scrape): their number, and each one's
// difference (exchange − ledger) by exchange and asset.
type discrepancyCollector struct {
	open        func() []domain.BalanceDiscrepancy
	count, diff *prometheus.Desc
}

// WatchDiscrepancies registers the metrics of the open balance
// discrepancies open returns: tradeledger_balance_discrepancies (how many)
// and tradeledger_balance_discrepancy{exchange,asset} (the difference,
// exchange − ledger, in the asset; the exact amount is in the log and on
// GET /api/v1/reconciliation).
func (m *Metrics) WatchDiscrepancies(open func() []domain.BalanceDiscrepancy) {
	m.Registry.MustRegister(&discrepancyCollector{open: open,
		count: prometheus.NewDesc(Namespace+"_balance_discrepancies",
			"Balances of exchange accounts that differ from the ones the ledger implies (BalanceDiscrepancy not cleared).", nil, nil),
		diff: prometheus.NewDesc(Namespace+"_balance_discrepancy",
			"An open balance discrepancy: the exchange's balance less the one the ledger implies, in the asset.", []string{"exchange", "asset"}, nil),
	})
}

func (c *discrepancyCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.count
	ch <- c.diff
}

func (c *discrepancyCollector) Collect(ch chan<- prometheus.Metric) {
	ds := c.open()
	ch <- prometheus.MustNewConstMetric(c.count, prometheus.GaugeValue, float64(len(ds)))
	for _, d := range ds {
		ch <- prometheus.MustNewConstMetric(c.diff, prometheus.GaugeValue, d.Difference.Float64(), d.Account, d.Asset)
	}
}
