package projections

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/snap"
	"github.com/tradeledger/tradeledger/projections/snapdiff"
)

// Checking a snapshot against the log (DESIGN §16: a snapshot is a cache,
// never evidence). The state a snapshot holds is rebuilt from the log up
// to its position (Rebuild), then each projection's state is encoded
// again and compared with the snapshot's section byte for byte, streaming
// (nothing the size of a section is held); the first projection that
// differs is decoded from the snapshot and from the rebuilt state into
// empty projections and walked field by field (snapdiff.Diff) to name the
// first value that differs. `tradeledger verify --snapshots` checks every
// snapshot kept, serve the one it started from, in the background.

// SnapshotCheck is what checking a snapshot file against the log found.
type SnapshotCheck struct {
	Path   string
	Header snap.Header
	// Signed is nil when the file's signature verifies with the
	// directory's Key and every section compared has the SHA-256 the
	// signed index names; else it says why not.
	Signed error
	// Diff is the first difference between the snapshot and the state
	// rebuilt from the log at its position (nil: none); Differing names
	// every projection whose state differs, in their order.
	Diff      *SnapshotDiff
	Differing []string
}

// OK reports whether the snapshot is signed and holds the log's state.
func (c *SnapshotCheck) OK() bool { return c.Signed == nil && c.Diff == nil }

// SnapshotDiff is the first difference between a snapshot and the log.
type SnapshotDiff struct {
	// Projection is the projection (its section) that differs, "" for
	// the snapshot's header.
	Projection string
	// Value is the path of the first value that differs in the
	// projection's state (snapdiff.Diff); "" when the section as a whole
	// does (missing, another version, bytes that do not decode).
	Value string
	// Snapshot and Log are the value in the snapshot and in the state
	// rebuilt from the log, as text (or, with Value "", what differs).
	Snapshot, Log string
}

func (d *SnapshotDiff) String() string {
	where := "projection " + d.Projection
	if d.Projection == "" {
		where = "the header"
	}
	if d.Value == "" {
		return fmt.Sprintf("%s: %s in the snapshot, %s in the log", where, d.Snapshot, d.Log)
	}
	return fmt.Sprintf("%s: %s is %s in the snapshot, %s in the log", where, d.Value, d.Snapshot, d.Log)
}

// Check compares the snapshot file at path with rebuilt: projections fed
// the log up to the snapshot's position (Rebuild.To(Header.Position) —
// read the header first with Header); times are the latest times of the
// events they were fed. fresh returns empty projections of the same kinds
// in the same order, into which the first projection that differs is
// decoded to name the value. yield, when set, is called every 64 KiB
// encoded (a check beside the service gives way). The error is for a
// file that cannot be read as a snapshot at all.
func (s *Snapshots) Check(ctx context.Context, path string, rebuilt []Snapshotter, times RebuildTimes, fresh func() []Snapshotter, yield func()) (SnapshotCheck, error) {
	file, _, err := openSnapshotFile(path, false)
	if err != nil {
		return SnapshotCheck{Path: path}, err
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return SnapshotCheck{Path: path}, err
	}
	h, err := snap.ReadHeader(file, st.Size())
	if err != nil {
		return SnapshotCheck{Path: path}, err
	}
	c := SnapshotCheck{Path: path, Header: h, Signed: s.checkSignature(&h)}
	if h.MaxTime != times.Max || h.MaxOwnTime != times.Own {
		c.Diff = &SnapshotDiff{Value: "latest event times", Snapshot: fmt.Sprintf("%d, own %d", h.MaxTime, h.MaxOwnTime),
			Log: fmt.Sprintf("%d, own %d", times.Max, times.Own)}
	}
	for i, p := range rebuilt {
		if err := ctx.Err(); err != nil {
			return c, err
		}
		sec, ok := h.Section(p.Name())
		switch {
		case !ok:
			c.setDiff(&SnapshotDiff{Projection: p.Name(), Snapshot: "no section", Log: "a state"})
			c.Differing = append(c.Differing, p.Name())
			continue
		case sec.Version != p.SnapshotVersion():
			c.setDiff(&SnapshotDiff{Projection: p.Name(), Snapshot: fmt.Sprintf("encoding version %d", sec.Version),
				Log: fmt.Sprintf("version %d", p.SnapshotVersion())})
			c.Differing = append(c.Differing, p.Name())
			continue
		}
		equal, sum, err := compareSection(file, sec, p, yield)
		if err != nil {
			return c, fmt.Errorf("projection %s: %w", p.Name(), err)
		}
		if equal {
			if sum != sec.Sum && c.Signed == nil {
				c.Signed = fmt.Errorf("projection %s: its bytes are the log's, but not the ones the signed index names", p.Name())
			}
			continue
		}
		if c.Signed == nil {
			if sum, err := sectionSum(file, sec); err != nil || sum != sec.Sum {
				c.Signed = fmt.Errorf("projection %s: its bytes are not the ones the signed index names", p.Name())
			}
		}
		c.Differing = append(c.Differing, p.Name())
		if c.Diff == nil {
			c.Diff = nameDiff(file, sec, p, i, fresh)
		}
	}
	return c, nil
}

// setDiff records d unless a difference is recorded already.
func (c *SnapshotCheck) setDiff(d *SnapshotDiff) {
	if c.Diff == nil {
		c.Diff = d
	}
}

// errDiffers ends the encoding of a state at its first byte that is not
// the snapshot's.
var errDiffers = errors.New("differs from the snapshot")

// compareSection encodes p's state and compares it with sec's bytes as it
// goes: equal when every byte is the same and none is missing; sum is the
// SHA-256 of the encoding (when equal).
func compareSection(file io.ReaderAt, sec snap.Section, p Snapshotter, yield func()) (equal bool, sum [32]byte, err error) {
	w := &cmpWriter{r: io.NewSectionReader(file, sec.Offset, sec.Length), sum: sha256.New()}
	e := snap.NewEncoder(w)
	if yield != nil {
		e.SetYield(yield)
	}
	p.Freeze()(e)
	err = e.Close()
	switch {
	case errors.Is(err, errDiffers):
		return false, sum, nil
	case err != nil:
		return false, sum, err
	}
	w.sum.Sum(sum[:0])
	return w.n == sec.Length, sum, nil
}

// sectionSum returns the SHA-256 of sec's bytes in file.
func sectionSum(file io.ReaderAt, sec snap.Section) (sum [32]byte, err error) {
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(file, sec.Offset, sec.Length)); err != nil {
		return sum, err
	}
	h.Sum(sum[:0])
	return sum, nil
}

// cmpWriter compares what is written with what r holds.
type cmpWriter struct {
	r   io.Reader
	n   int64 // bytes compared
	buf []byte
	sum hash.Hash
}

func (w *cmpWriter) Write(p []byte) (int, error) {
	if cap(w.buf) < len(p) {
		w.buf = make([]byte, len(p))
	}
	b := w.buf[:len(p)]
	if _, err := io.ReadFull(w.r, b); err != nil || !bytes.Equal(b, p) {
		return 0, errDiffers
	}
	w.n += int64(len(p))
	w.sum.Write(p)
	return len(p), nil
}

// nameDiff names the first value of projection number i that differs
// between the snapshot's section sec and the rebuilt p: both decoded into
// empty projections (fresh) and walked by snapdiff.Diff.
func nameDiff(file io.ReaderAt, sec snap.Section, p Snapshotter, i int, fresh func() []Snapshotter) *SnapshotDiff {
	d := &SnapshotDiff{Projection: p.Name(), Snapshot: "other bytes", Log: "the log's"}
	if fresh == nil {
		return d
	}
	a, b := fresh(), fresh()
	if len(a) <= i || len(b) <= i {
		return d // no empty models to decode into
	}
	fromSnap, fromLog := a[i], b[i]
	// The snapshot's bytes, as they are: their SHA-256 may well be what
	// differs, which Done would refuse (it is called to end the hashing,
	// its verdict left aside).
	sd := snap.Open(file, sec)
	install, err := fromSnap.Load(sd)
	_ = sd.Done()
	if err != nil {
		d.Snapshot = fmt.Sprintf("a state that does not decode (%v)", err)
		return d
	}
	install()
	var buf bytes.Buffer
	e := snap.NewEncoder(&buf)
	p.Freeze()(e)
	if err := e.Close(); err != nil {
		d.Log = fmt.Sprintf("a state that does not encode (%v)", err)
		return d
	}
	install, err = fromLog.Load(snap.NewDecoder(bytes.NewReader(buf.Bytes()), int64(buf.Len())))
	if err != nil {
		d.Log = fmt.Sprintf("a state that does not decode again (%v)", err)
		return d
	}
	install()
	if path, a, b, found := snapdiff.Diff(fromSnap, fromLog); found {
		d.Value, d.Snapshot, d.Log = path, a, b
		if path == "" {
			d.Value = "(the whole state)"
		}
	}
	return d
}

// RebuildTimes are the latest times of the events a Rebuild applied: when
// one was recorded, and the latest one speaks of (OwnTime).
type RebuildTimes struct{ Max, Own int64 }

// Rebuild replays a log into projections from its first event, stopping at
// each position asked for (To), so that the states of several snapshots
// are rebuilt in one pass. Pace, when set, is called after each batch of
// events (a rebuild beside the service gives way there).
type Rebuild struct {
	Store       domain.EventStore
	Projections []Projection
	Pace        func()

	cr    cutReader
	times eventTimes
}

// To applies the events after the last position reached up to and
// including position pos, which must be an event's position of the log at
// or after the last one reached.
func (r *Rebuild) To(ctx context.Context, pos uint64) error {
	if pos < r.cr.res.Position {
		return fmt.Errorf("rebuild: at position %d already, past %d", r.cr.res.Position, pos)
	}
	// A store that learns of appends made through another handle late
	// (eventstore/sqlite polls its file's head) is asked to look now:
	// the position asked for was committed, the caller saw it applied.
	if head, err := r.Store.Head(ctx); err == nil && head < pos {
		if s, ok := r.Store.(interface{ Refresh() (uint64, error) }); ok {
			if _, err := s.Refresh(); err != nil {
				return fmt.Errorf("rebuild: read the log's head: %w", err)
			}
		}
	}
	r.cr.cut, r.cr.done, r.cr.times = Cut{Position: pos}, false, &r.times
	if err := r.cr.replay(ctx, r.Store, r.Projections, ReplayOptions{Pace: r.Pace}); err != nil {
		return err
	}
	if r.cr.res.Position != pos && pos != 0 {
		return fmt.Errorf("rebuild: the log has no event at position %d (the last one up to it is at %d)", pos, r.cr.res.Position)
	}
	return nil
}

// Times returns the latest times of the events applied so far.
func (r *Rebuild) Times() RebuildTimes { return RebuildTimes{Max: r.times.max, Own: r.times.own} }

// Header reads the header of the snapshot file at path (a regular file,
// not followed through a link), without checking its signature: what a
// check reads first, to know which position to rebuild.
func (s *Snapshots) Header(path string) (snap.Header, error) {
	file, _, err := openSnapshotFile(path, false)
	if err != nil {
		return snap.Header{}, err
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return snap.Header{}, err
	}
	return snap.ReadHeader(file, st.Size())
}

// Remove removes the snapshot file at path (a regular file; a link or
// anything else of that name is left alone): a snapshot found to differ
// from the log.
func (s *Snapshots) Remove(path string) error {
	f, _, err := openSnapshotFile(path, false)
	if err != nil {
		return err
	}
	f.Close()
	if err := os.Remove(path); err != nil {
		return err
	}
	syncDir(s.Dir)
	return nil
}
