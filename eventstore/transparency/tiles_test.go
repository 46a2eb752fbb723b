package transparency_test

import (
	"testing"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/tradeledger/tradeledger/eventstore/transparency"
)

// TestTilesPaths: the paths c2sp.org/tlog-tiles gives (its own example,
// 1234067 as x001/x234/067) read and written back.
func TestTilesPaths(t *testing.T) {
	for path, want := range map[string]tlog.Tile{
		"0/000":             {H: 8, L: 0, N: 0, W: 256},
		"1/x001/x234/067":   {H: 8, L: 1, N: 1234067, W: 256},
		"2/005.p/17":        {H: 8, L: 2, N: 5, W: 17},
		"entries/x001/000":  {H: 8, L: -1, N: 1000, W: 256},
		"entries/273.p/112": {H: 8, L: -1, N: 273, W: 112},
	} {
		got, err := transparency.ParseTilesPath(path)
		if err != nil || got != want {
			t.Errorf("ParseTilesPath(%q) = %+v, %v; want %+v", path, got, err, want)
		}
		if back := transparency.TilesPath(want); back != path {
			t.Errorf("TilesPath(%+v) = %q, want %q", want, back, path)
		}
	}
	for _, bad := range []string{"", "0", "8/0/000", "00/000", "64/000", "0/1", "0/001/002", "0/x001", "0/000.p/0", "0/000.p/256",
		"0/000.p/07", "data/000", "entries/000.p", "-1/000", "0/x1/000"} {
		if _, err := transparency.ParseTilesPath(bad); err == nil {
			t.Errorf("ParseTilesPath(%q) accepted", bad)
		}
	}
}
