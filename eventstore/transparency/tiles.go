package transparency

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/tradeledger/tradeledger/domain"
)

// ParseTilesPath reads a path of c2sp.org/tlog-tiles after its "tile/":
// "<L>/<N>[.p/<W>]", a hash tile of level L, or "entries/<N>[.p/<W>]", an
// entry bundle; N in zero-padded groups of three digits, all but the last
// starting with x ("x001/x234/067"), W from 1 to 255 for a partial tile.
// The tile returned has height TileHeight (W 256 for a full one; L −1 for
// an entry bundle). ENOTFOUND for any other path.
func ParseTilesPath(path string) (tlog.Tile, error) {
	bad := domain.Errorf(domain.ENOTFOUND, "no tile %s: tiles are tile/L/N[.p/W] and tile/entries/N[.p/W] (c2sp.org/tlog-tiles)", path)
	f := strings.Split(path, "/")
	if len(f) < 2 {
		return tlog.Tile{}, bad
	}
	t := tlog.Tile{H: TileHeight, W: 1 << TileHeight}
	if f[0] == "entries" {
		t.L = -1
	} else {
		l, err := strconv.Atoi(f[0])
		if err != nil || l < 0 || l > 63 || strconv.Itoa(l) != f[0] {
			return tlog.Tile{}, bad
		}
		t.L = l
	}
	f = f[1:]
	if n := len(f); n >= 2 && strings.HasSuffix(f[n-2], ".p") {
		w, err := strconv.Atoi(f[n-1])
		if err != nil || w < 1 || w > 255 || strconv.Itoa(w) != f[n-1] {
			return tlog.Tile{}, bad
		}
		t.W = w
		f[n-2] = strings.TrimSuffix(f[n-2], ".p")
		f = f[:n-1]
	}
	for i, el := range f {
		if i < len(f)-1 {
			if !strings.HasPrefix(el, "x") {
				return tlog.Tile{}, bad
			}
			el = el[1:]
		}
		if len(el) != 3 || strings.Trim(el, "0123456789") != "" {
			return tlog.Tile{}, bad
		}
		d, _ := strconv.Atoi(el)
		if t.N > (1<<62)/1000 {
			return tlog.Tile{}, bad
		}
		t.N = t.N*1000 + int64(d)
	}
	return t, nil
}

// TilesPath returns t's path under c2sp.org/tlog-tiles's "tile/" (an
// entry bundle when t.L is −1): the inverse of ParseTilesPath.
func TilesPath(t tlog.Tile) string {
	level := strconv.Itoa(t.L)
	if t.L < 0 {
		level = "entries"
	}
	n := fmt.Sprintf("%03d", t.N%1000)
	for rest := t.N / 1000; rest > 0; rest /= 1000 {
		n = fmt.Sprintf("x%03d/", rest%1000) + n
	}
	p := level + "/" + n
	if t.W < 1<<uint(t.H) {
		p += ".p/" + strconv.Itoa(t.W)
	}
	return p
}

// TilesTile returns the tile at a c2sp.org/tlog-tiles path (after
// "tile/"): a hash tile's hashes, or an entry bundle (EntryBundle).
// ENOTFOUND for another path or a tile beyond the tree.
func (l *Log) TilesTile(ctx context.Context, path string) ([]byte, error) {
	t, err := ParseTilesPath(path)
	if err != nil {
		return nil, err
	}
	if t.L < 0 {
		return l.EntryBundle(ctx, t.N, t.W)
	}
	return l.Tile(ctx, t.Path())
}

// EntryBundle returns the entries of records n·256 to n·256+width−1 as
// c2sp.org/tlog-tiles serves them: each a big-endian uint16 length and
// the record's data, the event's 32-byte chain hash, whose RFC 6962 leaf
// hash is the level-0 tile's. ENOTFOUND beyond the tree.
func (l *Log) EntryBundle(ctx context.Context, n int64, width int) ([]byte, error) {
	size, err := l.Tree.TreeSize(ctx)
	if err != nil {
		return nil, err
	}
	start := n << TileHeight
	if n < 0 || width < 1 || width > 1<<TileHeight || n > size>>TileHeight || start+int64(width) > size {
		return nil, domain.Errorf(domain.ENOTFOUND, "no entry bundle %d of width %d in the tree of %d records", n, width, size)
	}
	pos, err := l.Tree.RecordPosition(ctx, start)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, width*(2+len(domain.Hash{})))
	got := 0
	it := l.Store.ReadAll(ctx, pos, width)
	defer it.Close()
	for it.Next() && got < width {
		h := it.Event().Hash
		out = binary.BigEndian.AppendUint16(out, uint16(len(h)))
		out = append(out, h[:]...)
		got++
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	if got != width {
		return nil, domain.Errorf(domain.EINTERNAL, "records %d to %d: the log holds %d events from position %d", start, start+int64(width)-1, got, pos)
	}
	return out, nil
}
