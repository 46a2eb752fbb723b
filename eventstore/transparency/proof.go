package transparency

import (
	"context"
	"encoding/json"
	"io"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/audit"
)

// checkSize checks that size, the parameter name asks for, is within the
// tree: EINVALID beyond it or below zero.
func (l *Log) checkSize(ctx context.Context, name string, size int64) error {
	have, err := l.Tree.TreeSize(ctx)
	if err != nil {
		return err
	}
	if size < 0 || size > have {
		return domain.Errorf(domain.EINVALID, "%s must be from 0 to the tree's size %d, not %d", name, have, size)
	}
	return nil
}

// ProveInclusion returns record index's leaf hash (tlog.RecordHash of its
// event's chain hash) and the proof that it is in the tree of size
// records: tlog.CheckRecord(proof, size, root, index, leaf) holds for the
// root of a checkpoint of size records. EINVALID unless 0 ≤ index < size
// ≤ the tree's size.
func (l *Log) ProveInclusion(ctx context.Context, index, size int64) (tlog.Hash, tlog.RecordProof, error) {
	if err := l.checkSize(ctx, "size", size); err != nil {
		return tlog.Hash{}, nil, err
	}
	if index < 0 || index >= size {
		return tlog.Hash{}, nil, domain.Errorf(domain.EINVALID, "index must be from 0 to size-1 (%d), not %d", size-1, index)
	}
	hr := l.hashReader(ctx)
	p, err := tlog.ProveRecord(size, index, hr)
	if err != nil {
		return tlog.Hash{}, nil, treeErr(err)
	}
	leaf, err := hr.ReadHashes([]int64{tlog.StoredHashIndex(0, index)})
	if err != nil {
		return tlog.Hash{}, nil, treeErr(err)
	}
	return leaf[0], nonNil(p), nil
}

// ProveConsistency returns the proof that the tree of from records is a
// prefix of the tree of to records. EINVALID unless 1 ≤ from ≤ to ≤ the
// tree's size (every tree extends the empty one: there is nothing to
// prove).
func (l *Log) ProveConsistency(ctx context.Context, from, to int64) (tlog.TreeProof, error) {
	if err := l.checkSize(ctx, "to", to); err != nil {
		return nil, err
	}
	if from < 1 || from > to {
		return nil, domain.Errorf(domain.EINVALID, "from must be from 1 to to (%d), not %d", to, from)
	}
	p, err := tlog.ProveTree(to, from, l.hashReader(ctx))
	if err != nil {
		return nil, treeErr(err)
	}
	return nonNil(p), nil
}

// nonNil makes an empty proof a JSON array.
func nonNil(p []tlog.Hash) []tlog.Hash {
	if p == nil {
		return []tlog.Hash{}
	}
	return p
}

// treeErr keeps a domain.Error from the tree as it is; anything else
// (tlog's own complaints) is EINTERNAL: the stored tree is not what tlog
// expects.
func treeErr(err error) error {
	if err == nil || domain.ErrorCode(err) != "" {
		return err
	}
	return domain.Errorf(domain.EINTERNAL, "the Merkle tree cannot be read: %v", err)
}

// Root returns the root hash of the tree of size records (EINVALID beyond
// the tree).
func (l *Log) Root(ctx context.Context, size int64) (tlog.Hash, error) {
	if err := l.checkSize(ctx, "size", size); err != nil {
		return tlog.Hash{}, err
	}
	h, err := tlog.TreeHash(size, l.hashReader(ctx))
	return h, treeErr(err)
}

// Record returns the event of record index: ENOTFOUND beyond the tree.
func (l *Log) Record(ctx context.Context, index int64) (domain.Event, error) {
	if index < 0 {
		return domain.Event{}, domain.Errorf(domain.EINVALID, "index must be 0 or more, not %d", index)
	}
	pos, err := l.Tree.RecordPosition(ctx, index)
	if err != nil {
		return domain.Event{}, err
	}
	it := l.Store.ReadAll(ctx, pos, 1)
	defer it.Close()
	if !it.Next() {
		if err := it.Err(); err != nil {
			return domain.Event{}, err
		}
		return domain.Event{}, domain.Errorf(domain.EINTERNAL, "record %d is the event at position %d, which the log does not hold", index, pos)
	}
	e := it.Event()
	if e.Position != pos {
		return domain.Event{}, domain.Errorf(domain.EINTERNAL, "record %d is the event at position %d, which the log does not hold", index, pos)
	}
	return e, nil
}

// Tile returns the data of the hash tile at path (tlog.Tile.Path, height
// TileHeight, e.g. "tile/8/0/000" or "tile/8/1/000.p/3"): ENOTFOUND for a
// path that is not such a tile (record-data tiles are not served) or a
// tile beyond the tree. Full tiles never change.
func (l *Log) Tile(ctx context.Context, path string) ([]byte, error) {
	t, err := tlog.ParseTilePath(path)
	if err != nil || t.H != TileHeight || t.L < 0 {
		return nil, domain.Errorf(domain.ENOTFOUND, "no tile %s: tiles are tile/%d/L/N[.p/W]", path, TileHeight)
	}
	size, err := l.Tree.TreeSize(ctx)
	if err != nil {
		return nil, err
	}
	// The tile's hashes are W nodes of level L·H from N·2^H on: the tree
	// must have that many nodes at that level.
	shift := uint(t.L * t.H)
	if shift >= 63 || t.N > (size>>shift)>>uint(t.H) || t.N<<uint(t.H)+int64(t.W) > size>>shift {
		return nil, domain.Errorf(domain.ENOTFOUND, "no tile %s in the tree of %d records", path, size)
	}
	data, err := tlog.ReadTileData(t, l.hashReader(ctx))
	return data, treeErr(err)
}

// TileIsFull reports whether the tile at path is complete (and never
// changes): a client may cache it for good.
func TileIsFull(path string) bool {
	t, err := tlog.ParseTilePath(path)
	return err == nil && t.W == 1<<uint(t.H)
}

// Bundle is a self-contained proof about one order: every event of its
// stream, each with its record index and inclusion proof in the tree of
// the signed checkpoint. VerifyBundle checks it with the verifier key
// alone.
type Bundle struct {
	// Format names this layout.
	Format string `json:"format"`
	// Order is the order's id; its events are the stream order-<id>.
	Order int64 `json:"order"`
	// Checkpoint is the signed checkpoint (note text) the proofs are
	// against; every event's index is below its size.
	Checkpoint string        `json:"checkpoint"`
	Events     []BundleEvent `json:"events"`
}

// BundleFormat is Bundle.Format.
const BundleFormat = "tradeledger-proof-bundle/1"

// BundleEvent is one event of a Bundle: the whole envelope as stored (its
// hash is recomputed from these fields) and its inclusion proof.
type BundleEvent struct {
	Index int64        `json:"index"`
	Event domain.Event `json:"event"`
	Proof []tlog.Hash  `json:"proof"`
}

// WriteOrderBundle writes OrderBundle's bundle to w as indented JSON,
// the events' data bytes as stored (no HTML escaping: the hashes cover
// those bytes).
func (l *Log) WriteOrderBundle(ctx context.Context, id int64, w io.Writer) error {
	b, err := l.OrderBundle(ctx, id)
	if err != nil {
		return err
	}
	return b.Encode(w)
}

// Encode writes b as indented JSON, its events' data unescaped (see
// WriteOrderBundle).
func (b Bundle) Encode(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(b)
}

// OrderBundle returns the bundle of order id's events, proven against the
// last checkpoint; when that checkpoint does not cover the order's last
// event yet, a checkpoint is issued first (IssueCovering: one for any
// number of concurrent callers). An order without
// events is ENOTFOUND.
func (l *Log) OrderBundle(ctx context.Context, id int64) (Bundle, error) {
	stream := domain.OrderStream(id)
	var events []domain.Event
	it := l.Store.ReadStream(ctx, stream, 0, 0)
	for it.Next() {
		events = append(events, it.Event())
	}
	err := it.Err()
	it.Close()
	if err != nil {
		return Bundle{}, err
	}
	if len(events) == 0 {
		return Bundle{}, domain.Errorf(domain.ENOTFOUND, "order %d not found", id)
	}
	indexes := make([]int64, len(events))
	for i, e := range events {
		if indexes[i], err = l.Tree.RecordIndex(ctx, e.Position); domain.ErrorCode(err) == domain.ENOTFOUND {
			// Not in the tree yet: catch it up (it covers everything
			// committed once BuildTree returns).
			if err = l.Tree.BuildTree(ctx, nil); err == nil {
				indexes[i], err = l.Tree.RecordIndex(ctx, e.Position)
			}
		}
		if err != nil {
			return Bundle{}, err
		}
	}
	cp, ok := l.Latest()
	if !ok || cp.Origin != l.Key.Origin() || cp.Size <= indexes[len(indexes)-1] {
		if cp, err = l.IssueCovering(ctx, indexes[len(indexes)-1]); err != nil {
			return Bundle{}, err
		}
	}
	b := Bundle{Format: BundleFormat, Order: id, Checkpoint: cp.Note, Events: make([]BundleEvent, len(events))}
	hr := l.hashReader(ctx)
	for i, e := range events {
		p, err := tlog.ProveRecord(cp.Size, indexes[i], hr)
		if err != nil {
			return Bundle{}, treeErr(err)
		}
		b.Events[i] = BundleEvent{Index: indexes[i], Event: e, Proof: nonNil(p)}
	}
	return b, nil
}

// Identity names the log up to position: how many events it holds up to
// there (the Merkle tree's size) and the tree's root at that size. Two
// logs with the same identity at a position hold the same events up to it
// (read-model snapshots are checked against it). ENOTFOUND when the tree
// holds no event at position yet (a tree still being built, or a position
// that is no event's).
func Identity(ctx context.Context, tree audit.TreeStore, position uint64) (records int64, root domain.Hash, err error) {
	if position > 0 {
		i, err := tree.RecordIndex(ctx, position)
		if err != nil {
			return 0, domain.Hash{}, err
		}
		records = i + 1
	}
	h, err := tlog.TreeHash(records, TreeHashReader(ctx, tree))
	if err != nil {
		return 0, domain.Hash{}, treeErr(err)
	}
	return records, domain.Hash(h), nil
}
