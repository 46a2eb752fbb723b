package transparency

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/audit"
	"github.com/tradeledger/tradeledger/domain/readahead"
)

// FileTree is the Merkle tree of a store that does not keep one itself
// (EventStoreDB), derived from its log and kept in local files in Dir:
// hashes, every stored hash at offset 32·index (tlog's layout is dense),
// positions, each record's event position (8 bytes, little endian), and
// checkpoint, the last CheckpointSigned event the tree added (JSON,
// audit.KeptCheckpoint), kept beside the tree so that a log cut at its
// end is still seen not to extend what was signed. The tree is
// rebuildable: deleting the files only costs the time to read the log
// again (BuildTree), and forgets the checkpoint. Open checks that the
// files still describe Store's log: files whose first record is not the
// log's are another log's, and start over; files whose last record the
// log no longer holds (it was cut) or holds another event for are kept
// as they are, and the tree refuses to grow (BuildTree, Follow) until
// CutTree. Records are added by BuildTree and Follow; reads see the
// records written, flushed to the files.
type FileTree struct {
	// Dir holds the two files.
	Dir string
	// Store is the log the tree is derived from.
	Store domain.EventStore

	mu        sync.Mutex // adding records
	hashes    *os.File
	positions *os.File
	frontier  audit.TreeFrontier
	lastPos   uint64
	size      atomic.Int64 // records written
	buf       []byte
	posBuf    []byte
	// cut says why the tree is not the log's (load), nil when it is.
	cut atomic.Pointer[domain.Error]
}

var _ audit.TreeStore = (*FileTree)(nil)

// Files of a FileTree.
const (
	hashesFile     = "hashes"
	positionsFile  = "positions"
	checkpointFile = "checkpoint"
)

// OpenFileTree opens (creating if need be) the tree of store kept in dir.
func OpenFileTree(ctx context.Context, dir string, store domain.EventStore) (*FileTree, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("open tree: %w", err)
	}
	t := &FileTree{Dir: dir, Store: store}
	var err error
	if t.hashes, err = os.OpenFile(filepath.Join(dir, hashesFile), os.O_RDWR|os.O_CREATE, 0o600); err != nil {
		return nil, fmt.Errorf("open tree: %w", err)
	}
	if t.positions, err = os.OpenFile(filepath.Join(dir, positionsFile), os.O_RDWR|os.O_CREATE, 0o600); err != nil {
		t.hashes.Close()
		return nil, fmt.Errorf("open tree: %w", err)
	}
	if err := t.load(ctx); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// load reads the files' state: the records both hold whole, and the
// frontier; files that do not match the log start over.
func (t *FileTree) load(ctx context.Context) error {
	hs, err := t.hashes.Stat()
	if err != nil {
		return err
	}
	ps, err := t.positions.Stat()
	if err != nil {
		return err
	}
	size := ps.Size() / 8
	for size > 0 && tlog.StoredHashCount(size)*32 > hs.Size() {
		size-- // a crash between the two files' writes
	}
	if size > 0 {
		first, err := t.matches(ctx, 0)
		if err != nil {
			return err
		}
		if !first {
			size = 0 // another log's tree: start over
		} else if last, err := t.matches(ctx, size-1); err != nil {
			return err
		} else if !last {
			if err := t.truncate(ctx, size); err != nil {
				return err
			}
			lastPos := t.lastPos
			t.cut.Store(domain.Errorf(domain.EINTERNAL, "event log was cut or rewritten at its end: the Merkle tree's last record (%d) is the event at position %d, which the log no longer holds as it was; the tree is not extended (tradeledger serve says what to do)", size-1, lastPos))
			return nil
		}
	}
	return t.truncate(ctx, size)
}

// matches reports whether record i's leaf and position are those of the
// log's event at that position.
func (t *FileTree) matches(ctx context.Context, i int64) (bool, error) {
	var pb [8]byte
	if _, err := t.positions.ReadAt(pb[:], 8*i); err != nil {
		return false, err
	}
	pos := binary.LittleEndian.Uint64(pb[:])
	var leaf tlog.Hash
	if _, err := t.hashes.ReadAt(leaf[:], 32*tlog.StoredHashIndex(0, i)); err != nil {
		return false, err
	}
	it := t.Store.ReadAll(ctx, pos, 1)
	defer it.Close()
	if !it.Next() {
		return false, it.Err()
	}
	e := it.Event()
	return e.Position == pos && tlog.Hash(audit.TreeLeaf(domain.ComputeHash(&e))) == leaf, nil
}

// truncate cuts the files to size records and reads the frontier.
func (t *FileTree) truncate(ctx context.Context, size int64) error {
	if err := t.positions.Truncate(8 * size); err != nil {
		return err
	}
	if err := t.hashes.Truncate(32 * tlog.StoredHashCount(size)); err != nil {
		return err
	}
	levels, idx := audit.FrontierLevels(size)
	indexes := make([]int64, len(levels))
	for i, l := range levels {
		indexes[i] = tlog.StoredHashIndex(l, idx[i])
	}
	t.size.Store(size)
	hs, err := t.ReadTreeHashes(ctx, indexes)
	if err != nil {
		return err
	}
	if t.frontier, err = audit.NewTreeFrontier(size, hs); err != nil {
		return err
	}
	t.lastPos = 0
	if size > 0 {
		if t.lastPos, err = t.RecordPosition(ctx, size-1); err != nil {
			return err
		}
	}
	return nil
}

// Close closes the files.
func (t *FileTree) Close() error {
	return errors.Join(t.hashes.Close(), t.positions.Close())
}

// TreeSize implements audit.TreeStore.
func (t *FileTree) TreeSize(ctx context.Context) (int64, error) { return t.size.Load(), nil }

// ReadTreeHashes implements audit.TreeStore.
func (t *FileTree) ReadTreeHashes(ctx context.Context, indexes []int64) ([]domain.Hash, error) {
	limit := tlog.StoredHashCount(t.size.Load())
	out := make([]domain.Hash, len(indexes))
	for i, x := range indexes {
		if x < 0 || x >= limit {
			return nil, domain.Errorf(domain.EINVALID, "stored hash %d is beyond the tree of %d records", x, t.size.Load())
		}
		if _, err := t.hashes.ReadAt(out[i][:], 32*x); err != nil {
			return nil, domain.Errorf(domain.EUNAVAILABLE, "read the tree: %v", err)
		}
	}
	return out, nil
}

// RecordPosition implements audit.TreeStore.
func (t *FileTree) RecordPosition(ctx context.Context, index int64) (uint64, error) {
	if size := t.size.Load(); index < 0 || index >= size {
		return 0, domain.Errorf(domain.ENOTFOUND, "no record %d: the tree holds %d", index, size)
	}
	var b [8]byte
	if _, err := t.positions.ReadAt(b[:], 8*index); err != nil {
		return 0, domain.Errorf(domain.EUNAVAILABLE, "read the tree: %v", err)
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}

// RecordIndex implements audit.TreeStore, by bisection of the positions
// (they increase with the index).
func (t *FileTree) RecordIndex(ctx context.Context, position uint64) (int64, error) {
	return audit.FindRecord(t.size.Load(), position, -1, func(i int64) (uint64, error) { return t.RecordPosition(ctx, i) })
}

// BuildTree implements audit.TreeStore: it reads the log after the
// tree's last record up to the head as of the call.
func (t *FileTree) BuildTree(ctx context.Context, progress func(records int64)) error {
	if cut := t.cut.Load(); cut != nil {
		return cut
	}
	head, err := t.Store.Head(ctx)
	if err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.lastPos >= head {
		return nil
	}
	var addErr error
	err = readahead.Batches(ctx, t.Store.ReadAll(ctx, t.lastPos+1, 0), func(batch []domain.Event) bool {
		for i := range batch {
			if batch[i].Position > head {
				batch = batch[:i]
				break
			}
		}
		if addErr = t.add(batch); addErr != nil {
			return false
		}
		if progress != nil {
			progress(t.size.Load())
		}
		return len(batch) > 0 && batch[len(batch)-1].Position < head
	})
	return errors.Join(err, addErr)
}

// Follow adds the log's new events to the tree as they commit, until ctx
// ends (its error is returned then) or the log cannot be read.
func (t *FileTree) Follow(ctx context.Context) error {
	if cut := t.cut.Load(); cut != nil {
		return cut
	}
	t.mu.Lock()
	from := t.lastPos + 1
	t.mu.Unlock()
	sub := t.Store.Subscribe(ctx, from)
	defer sub.Close()
	events := make(chan domain.Event, 1024)
	errc := make(chan error, 1)
	go func() {
		defer close(events)
		for sub.Next() {
			select {
			case events <- sub.Event():
			case <-ctx.Done():
				return
			}
		}
		errc <- sub.Err()
	}()
	var batch []domain.Event
	for e := range events {
		// Whatever else has arrived joins this write (and its sync).
		batch = append(batch[:0], e)
	more:
		for len(batch) < 4096 {
			select {
			case e, ok := <-events:
				if !ok {
					break more
				}
				batch = append(batch, e)
			default:
				break more
			}
		}
		t.mu.Lock()
		err := t.add(batch)
		t.mu.Unlock()
		if err != nil {
			return err
		}
	}
	select {
	case err := <-errc:
		if err != nil {
			return err
		}
	default:
	}
	return ctx.Err()
}

// add appends events' records (t.mu held): events the tree has already
// are skipped.
func (t *FileTree) add(events []domain.Event) error {
	hs := t.buf[:0]
	ps := t.posBuf[:0]
	f := t.frontier
	last := t.lastPos
	var stored [64]domain.Hash
	var kept []*domain.Event // the checkpoints added
	for i := range events {
		e := &events[i]
		if e.Position <= last {
			continue
		}
		if e.Type == domain.TypeCheckpointSigned && e.Stream == domain.StreamCheckpoints {
			kept = append(kept, e)
		}
		for _, h := range f.Add(domain.ComputeHash(e), stored[:0]) {
			hs = append(hs, h[:]...)
		}
		ps = binary.LittleEndian.AppendUint64(ps, e.Position)
		last = e.Position
	}
	t.buf, t.posBuf = hs, ps
	if len(ps) == 0 {
		return nil
	}
	size := t.size.Load()
	// Hashes first: a crash between the two writes leaves records whose
	// positions are missing, which load drops.
	if _, err := t.hashes.WriteAt(hs, 32*tlog.StoredHashCount(size)); err != nil {
		return fmt.Errorf("write the tree: %w", err)
	}
	if _, err := t.positions.WriteAt(ps, 8*size); err != nil {
		return fmt.Errorf("write the tree: %w", err)
	}
	if err := t.hashes.Sync(); err != nil {
		return fmt.Errorf("sync the tree: %w", err)
	}
	if err := t.positions.Sync(); err != nil {
		return fmt.Errorf("sync the tree: %w", err)
	}
	t.frontier, t.lastPos = f, last
	t.size.Store(f.Size())
	for _, e := range kept {
		if err := t.keep(e); err != nil {
			return err
		}
	}
	return nil
}

// keep keeps e, a CheckpointSigned the tree just added, unless the kept
// checkpoint is of a larger size and not abandoned (a tree rebuilt from a
// cut log meets older checkpoints).
func (t *FileTree) keep(e *domain.Event) error {
	var k audit.KeptCheckpoint
	if err := e.Decode(&k.CheckpointSigned); err != nil {
		return fmt.Errorf("keep the checkpoint at position %d: %w", e.Position, err)
	}
	k.Position = e.Position
	old, ok, err := t.KeptCheckpoint(context.Background())
	if err != nil {
		return err
	}
	if ok && !old.Abandoned && old.Size > k.Size {
		return nil
	}
	return t.writeKept(k)
}

// writeKept writes k as the kept checkpoint: a file written whole beside
// the old one, synced, then renamed over it.
func (t *FileTree) writeKept(k audit.KeptCheckpoint) error {
	b, err := json.Marshal(k)
	if err != nil {
		return err
	}
	tmp := filepath.Join(t.Dir, checkpointFile+".new")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("keep the checkpoint: %w", err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(t.Dir, checkpointFile))
	}
	if err == nil {
		err = syncDir(t.Dir)
	}
	if err != nil {
		return fmt.Errorf("keep the checkpoint: %w", err)
	}
	return nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// KeptCheckpoint implements audit.TreeStore.
func (t *FileTree) KeptCheckpoint(ctx context.Context) (audit.KeptCheckpoint, bool, error) {
	var k audit.KeptCheckpoint
	b, err := os.ReadFile(filepath.Join(t.Dir, checkpointFile))
	if errors.Is(err, os.ErrNotExist) {
		return k, false, nil
	}
	if err != nil {
		return k, false, domain.Errorf(domain.EUNAVAILABLE, "read the kept checkpoint: %v", err)
	}
	if err := json.Unmarshal(b, &k); err != nil {
		return k, false, domain.Errorf(domain.EINTERNAL, "the kept checkpoint %s does not decode: %v", filepath.Join(t.Dir, checkpointFile), err)
	}
	return k, true, nil
}

// CutTree implements audit.TreeStore: the files are cut to records, and
// the tree is the log's again if the log holds its last record (or it
// has none).
func (t *FileTree) CutTree(ctx context.Context, records int64) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if size := t.size.Load(); records < 0 || records > size {
		return domain.Errorf(domain.EINVALID, "cannot cut the Merkle tree of %d records to %d", size, records)
	}
	if err := t.truncate(ctx, records); err != nil {
		return err
	}
	if err := t.hashes.Sync(); err != nil {
		return fmt.Errorf("sync the tree: %w", err)
	}
	if err := t.positions.Sync(); err != nil {
		return fmt.Errorf("sync the tree: %w", err)
	}
	if k, ok, err := t.KeptCheckpoint(ctx); err != nil {
		return err
	} else if ok && !k.Abandoned {
		k.Abandoned = true
		if err := t.writeKept(k); err != nil {
			return err
		}
	}
	if records > 0 {
		ok, err := t.matches(ctx, records-1)
		if err != nil {
			return err
		}
		if !ok {
			return domain.Errorf(domain.EINTERNAL, "the Merkle tree cut to %d records still disagrees with the log", records)
		}
	}
	t.cut.Store(nil)
	return nil
}
