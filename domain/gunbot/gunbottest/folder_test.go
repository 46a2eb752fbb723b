package gunbottest

import (
	"encoding/json"
	"testing"
	"testing/fstest"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/gunbot"
)

// TestFolderReads checks that a generated folder is one gunbot.Read takes
// whole: every order on the pair of its file, none skipped, the pairs'
// shares as said, buys and sells alternating, and the simulator's
// balances in the configuration when asked for.
func TestFolderReads(t *testing.T) {
	for _, c := range []struct {
		orders   int
		balances map[string]string
	}{{1, nil}, {23, nil}, {1000, map[string]string{"USDT": "1000000000", "BTC": "1000"}}} {
		fsys := fstest.MapFS{}
		for _, f := range (Folder{Orders: c.orders, SimulatorBalances: c.balances}).Files() {
			fsys[f.Path] = &fstest.MapFile{Data: f.Data}
		}
		folder, err := gunbot.Read(fsys)
		if err != nil {
			t.Fatalf("%d orders: %v", c.orders, err)
		}
		if len(folder.Skipped) > 0 {
			t.Fatalf("%d orders: skipped %v", c.orders, folder.Skipped)
		}
		if got := len(folder.Orders); got != c.orders {
			t.Fatalf("%d orders: read %d", c.orders, got)
		}
		perPair := map[string]int{}
		sides := map[domain.Side]int{}
		for _, o := range folder.Orders {
			perPair[o.Pair]++
			sides[o.Side]++
			if o.Exchange != "binance" {
				t.Fatalf("order on %q", o.Exchange)
			}
		}
		for i, p := range Pairs {
			want := c.orders / len(Pairs)
			if i < c.orders%len(Pairs) {
				want++
			}
			if perPair[p] != want {
				t.Errorf("%d orders: %s has %d, want %d", c.orders, p, perPair[p], want)
			}
		}
		if d := sides[domain.Buy] - sides[domain.Sell]; d < 0 || d > len(Pairs) {
			t.Errorf("%d orders: %d buys, %d sells", c.orders, sides[domain.Buy], sides[domain.Sell])
		}
		var cfg struct {
			Exchanges map[string]struct {
				Simulator struct {
					Balances map[string]string `json:"balances"`
				} `json:"simulator"`
			} `json:"exchanges"`
		}
		if err := json.Unmarshal(folder.Config.JSON, &cfg); err != nil {
			t.Fatal(err)
		}
		got := cfg.Exchanges["binance"].Simulator.Balances
		if len(got) != len(c.balances) {
			t.Fatalf("simulator balances %v, want %v", got, c.balances)
		}
		for a, v := range c.balances {
			if got[a] != v {
				t.Errorf("simulator balance %s = %q, want %q", a, got[a], v)
			}
		}
	}
}
