package audit

import (
	"context"
	"crypto/sha256"

	"github.com/tradeledger/tradeledger/domain"
)

// TreeStore is the Merkle tree over a whole log (DESIGN §13) as a store
// keeps it: record i is the i-th event in commit order (from 0), its record
// data the event's 32-byte chain hash (ComputeHash, what VerifyLog
// recomputes), its leaf SHA-256(0x00 || hash) (RFC 6962). What it keeps are
// the tree's stored hashes in the layout of golang.org/x/mod/sumdb/tlog
// (StoredHashIndex: each record's leaf, then the hash of every subtree it
// completes), from which any root, inclusion proof or consistency proof
// of a size up to TreeSize is computed. The tree is derived data: it can
// be rebuilt from the log, and is the same on every store.
type TreeStore interface {
	// TreeSize returns how many records the tree holds: the first
	// TreeSize events of the log, their hashes written where a crash
	// cannot lose them.
	TreeSize(ctx context.Context) (int64, error)

	// ReadTreeHashes returns the stored hashes at the given stored-hash
	// indexes (tlog.StoredHashIndex), in the same order. An index beyond
	// the tree of TreeSize records is EINVALID; an unreadable store is
	// EUNAVAILABLE.
	ReadTreeHashes(ctx context.Context, indexes []int64) ([]domain.Hash, error)

	// RecordPosition returns the log position of record index (ENOTFOUND
	// beyond the tree).
	RecordPosition(ctx context.Context, index int64) (uint64, error)

	// RecordIndex returns the record index of the event at position
	// (ENOTFOUND when the tree holds no event there).
	RecordIndex(ctx context.Context, position uint64) (int64, error)

	// BuildTree adds to the tree the events of the log it does not hold
	// yet (a log written before the tree existed, or by a process that
	// did not keep it), until it covers the whole log, calling progress
	// (when not nil) now and then with the records done and the log's
	// event count as far as known. It returns once the tree covers every
	// event committed before it returns, or with ctx's error.
	BuildTree(ctx context.Context, progress func(records int64)) error

	// KeptCheckpoint returns the last checkpoint the log recorded among
	// the tree's records (the CheckpointSigned of the checkpoints stream
	// the tree added last, or of the largest size: a tree rebuilt from a
	// cut log never goes back to an older one), which the tree keeps
	// beside its records and not only in the log: a log cut at its end
	// together with its tree is still seen not to extend what was
	// signed. ok is false before the first.
	KeptCheckpoint(ctx context.Context) (c KeptCheckpoint, ok bool, err error)

	// CutTree removes the records from index records on, so that a tree
	// that holds events the log lost agrees with the log again (an
	// operator's decision: serve --accept-truncated-log) and can grow,
	// and marks the kept checkpoint abandoned: it stays, and is reported,
	// until the tree adds the next one, whatever that one's size.
	// EINVALID for records beyond the tree or below 0.
	CutTree(ctx context.Context, records int64) error
}

// KeptCheckpoint is a checkpoint as a TreeStore keeps it: the
// CheckpointSigned the log recorded, the position of its event, and
// whether an operator abandoned it (TreeStore.CutTree).
type KeptCheckpoint struct {
	domain.CheckpointSigned
	Position  uint64 `json:"position"`
	Abandoned bool   `json:"abandoned,omitempty"`
}

// TreeVerdict is what a log, the Merkle tree over it and the last
// checkpoint kept beside the tree say of each other: the tree's records
// are the log's events (a log cut at its end, or whose end was replaced,
// is not the tree's), and the tree extends the last checkpoint signed
// (a tree cut with its log does not). Problem says in plain words what
// differs, "" when nothing does.
type TreeVerdict struct {
	// Records is how many records the tree holds; Root, set by a full
	// verification, the root of those records as the events give it
	// (standard base64, as checkpoints write it).
	Records int64  `json:"records"`
	Root    string `json:"root,omitempty"`
	// Checkpoint is how many events the last checkpoint signed covers
	// (0 when none is kept), CheckpointRoot its root.
	Checkpoint     int64  `json:"checkpoint"`
	CheckpointRoot string `json:"checkpointRoot,omitempty"`
	// LogEvents is how many events the log holds: all of them after a
	// full verification; at a start check, how many of the tree's
	// records it still holds when it lost some.
	LogEvents int64 `json:"logEvents"`
	// Agreed is how many of the tree's first records are the log's
	// events; LostFrom and LostTo the positions lost, when the log
	// was cut (the tree's records beyond Agreed, and the kept
	// checkpoint's own event when the log no longer has it).
	Agreed   int64  `json:"agreed"`
	LostFrom uint64 `json:"lostFrom,omitempty"`
	LostTo   uint64 `json:"lostTo,omitempty"`
	Problem  string `json:"problem,omitempty"`
}

// FindRecord returns the index of the record at position in a tree of size
// records whose record i is at position at(i): positions increase with the
// index, so it bisects, after trying guess (a store whose positions are
// dense knows where the record must be). ENOTFOUND when no record is at
// position; at's errors are returned as they are.
func FindRecord(size int64, position uint64, guess int64, at func(i int64) (uint64, error)) (int64, error) {
	lo, hi := int64(0), size-1 // the record, if any, is in [lo, hi]
	for i := guess; lo <= hi; i = lo + (hi-lo)/2 {
		if i < lo || i > hi { // a guess off the tree: bisect from the start
			i = lo + (hi-lo)/2
		}
		p, err := at(i)
		switch {
		case err != nil:
			return 0, err
		case p == position:
			return i, nil
		case p < position:
			lo = i + 1
		default:
			hi = i - 1
		}
	}
	return 0, domain.Errorf(domain.ENOTFOUND, "the tree holds no event at position %d", position)
}

// TreeLeaf returns the leaf hash of a record of the log's Merkle tree
// whose data is an event's chain hash: SHA-256(0x00 || record), RFC 6962
// (tlog.RecordHash).
func TreeLeaf(record domain.Hash) domain.Hash {
	var buf [1 + len(domain.Hash{})]byte
	copy(buf[1:], record[:])
	return sha256.Sum256(buf[:])
}

// TreeNode returns the hash of an interior node of the tree:
// SHA-256(0x01 || left || right), RFC 6962 (tlog.NodeHash).
func TreeNode(left, right domain.Hash) domain.Hash {
	var buf [1 + 2*len(domain.Hash{})]byte
	buf[0] = 1
	copy(buf[1:], left[:])
	copy(buf[1+len(left):], right[:])
	return sha256.Sum256(buf[:])
}

// emptyTreeRoot is the root of the tree of no records: SHA-256 of nothing.
var emptyTreeRoot = domain.Hash(sha256.Sum256(nil))

// TreeFrontier is the right edge of the log's Merkle tree: for a tree of
// Size records, the hash of each complete subtree the records split into
// (one per bit set in Size, the larger ones first), which is all that
// adding the next record or computing the root needs. It is how a store
// extends its tree as it appends, and how a verifier rebuilds a root from
// the events alone, in memory of 64 hashes. The zero value is the empty
// tree.
type TreeFrontier struct {
	size int64
	// hashes[l] is the hash of the complete subtree of 2^l records that
	// the tree holds at level l, when bit l of size is set.
	hashes [63]domain.Hash
}

// Size returns the number of records added.
func (f *TreeFrontier) Size() int64 { return f.size }

// Add adds the next record (record index Size, whose data is an event's
// chain hash) and appends to stored the hashes the tree stores for it,
// in the order of tlog.StoredHashes: its leaf, then the hash of each
// subtree it completes, level by level (one to 63 hashes, two on
// average).
func (f *TreeFrontier) Add(record domain.Hash, stored []domain.Hash) []domain.Hash {
	return f.AddLeaf(TreeLeaf(record), stored)
}

// AddLeaf is Add given the record's leaf hash (TreeLeaf of its data).
func (f *TreeFrontier) AddLeaf(leaf domain.Hash, stored []domain.Hash) []domain.Hash {
	stored = append(stored, leaf)
	h, l := leaf, 0
	for f.size>>l&1 == 1 {
		h = TreeNode(f.hashes[l], h)
		f.hashes[l] = domain.Hash{} // merged: kept zero, so that equal trees have equal frontiers
		stored = append(stored, h)
		l++
	}
	f.hashes[l] = h
	f.size++
	return stored
}

// Root returns the root hash of the tree of Size records (the RFC 6962
// Merkle tree hash; SHA-256 of nothing for no records).
func (f *TreeFrontier) Root() domain.Hash {
	if f.size == 0 {
		return emptyTreeRoot
	}
	var h domain.Hash
	first := true
	for l := 0; l < len(f.hashes); l++ {
		if f.size>>l&1 == 0 {
			continue
		}
		if first {
			h, first = f.hashes[l], false
		} else {
			h = TreeNode(f.hashes[l], h)
		}
	}
	return h
}

// FrontierLevels returns, for a tree of size records, the subtrees a
// TreeFrontier holds: for each, its level l (2^l records) and its index n
// among the subtrees of its level (records n·2^l to (n+1)·2^l − 1), from
// the largest to the smallest. A store that keeps the tree's stored
// hashes reads those hashes (tlog.StoredHashIndex(l, n)) to rebuild the
// frontier (NewTreeFrontier).
func FrontierLevels(size int64) (levels []int, indexes []int64) {
	for l := 62; l >= 0; l-- {
		if size>>l&1 == 1 {
			levels = append(levels, l)
			indexes = append(indexes, size>>l-1)
		}
	}
	return levels, indexes
}

// NewTreeFrontier returns the frontier of a tree of size records whose
// subtree hashes, in the order FrontierLevels lists them, are hashes. It
// is EINVALID when there are not as many hashes as subtrees.
func NewTreeFrontier(size int64, hashes []domain.Hash) (TreeFrontier, error) {
	f := TreeFrontier{size: size}
	levels, _ := FrontierLevels(size)
	if size < 0 || len(hashes) != len(levels) {
		return TreeFrontier{}, domain.Errorf(domain.EINVALID, "a tree of %d records has %d complete subtrees, not %d", size, len(levels), len(hashes))
	}
	for i, l := range levels {
		f.hashes[l] = hashes[i]
	}
	return f, nil
}
