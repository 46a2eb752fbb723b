// Package gunbottest generates Gunbot folders of any size for benchmarks
// and tests: the one history BenchmarkImport, the import tests and `make
// bench-ab` (cmd/benchab) import, so that their figures are of the same
// folder. Standard library only; the callers write the files.
package gunbottest

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Pairs are the pairs of a generated folder, all on the exchange binance.
var Pairs = []string{"USDT-BTC", "USDT-ETH", "USDT-BNB", "USDT-SOL", "USDT-XRP", "USDT-ADA", "USDT-DOGE", "USDT-DOT", "USDT-LTC", "USDT-LINK"}

// Folder is what Files generates beside the orders.
type Folder struct {
	// Orders is how many orders the state files hold in all, spread over
	// Pairs (the first pairs take one more when it does not divide).
	Orders int
	// SimulatorBalances, when set, are the simulated exchange's starting
	// balances (config.exchanges.binance.simulator.balances: asset →
	// decimal string), for a serve that places orders on top of the
	// history; nil leaves them out.
	SimulatorBalances map[string]string
}

// File is one file of a generated folder: its slash-separated path inside
// the folder and its content.
type File struct {
	Path string
	Data []byte
}

// Files returns the folder: a config.json naming the pairs (manual
// strategy, enabled, bot.SIMULATOR true), and one state file per pair
// (json/binance-<pair>-state.json) with its orders newest first, as Gunbot
// keeps them: buys and sells alternating, one minute apart from
// 2023-11-14, sells never more than the lot bought before, ids unique
// across the folder.
func (f Folder) Files() []File {
	var pairs []string
	for _, p := range Pairs {
		pairs = append(pairs, fmt.Sprintf("%q: {\"strategy\": \"manual\", \"enabled\": true, \"override\": {}}", p))
	}
	exchange := `"isEncrypted": false, "delay": 5`
	if len(f.SimulatorBalances) > 0 {
		assets := make([]string, 0, len(f.SimulatorBalances))
		for a := range f.SimulatorBalances {
			assets = append(assets, a)
		}
		sort.Strings(assets)
		var bals []string
		for _, a := range assets {
			bals = append(bals, fmt.Sprintf("%q: %q", a, f.SimulatorBalances[a]))
		}
		exchange += `, "simulator": {"balances": {` + strings.Join(bals, ", ") + `}}`
	}
	cfg := `{"pairs": {"binance": {` + strings.Join(pairs, ", ") + `}}, "strategies": {"manual": {"STRATEGY": "manual"}},
 "exchanges": {"binance": {` + exchange + `}}, "bot": {"SIMULATOR": true}, "GUI": {}}`
	files := []File{{Path: "config.json", Data: []byte(cfg)}}
	const start = int64(1_700_000_000_000)
	for p, pair := range Pairs {
		n := f.Orders / len(Pairs)
		if p < f.Orders%len(Pairs) {
			n++
		}
		var b strings.Builder
		b.WriteString("{\n  \"orders\": [\n")
		for i := n - 1; i >= 0; i-- { // newest first
			side, amount := "buy", "0.002"
			if i%2 == 1 {
				side, amount = "sell", "0.001"
			}
			rate := strconv.Itoa(30000 + (i*7919)%5000)
			fmt.Fprintf(&b, "    {\"time\": %d, \"pair\": %q, \"type\": %q, \"rate\": %s, \"amount\": %s, \"id\": %d, \"cost\": 1}",
				start+int64(i)*60_000+int64(p), pair, side, rate, amount, 1_000_000*(p+1)+i)
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString("  ],\n  \"balances\": {}\n}\n")
		files = append(files, File{Path: "json/binance-" + pair + "-state.json", Data: []byte(b.String())})
	}
	return files
}
