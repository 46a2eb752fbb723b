package projections

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/snap"
)

// Defaults of Snapshots and SnapshotWriter.
const (
	// DefaultSnapshotKeep is how many snapshots a directory keeps.
	DefaultSnapshotKeep = 3
	// DefaultSnapshotEvery is how many events the writer lets pass
	// between two snapshots.
	DefaultSnapshotEvery = 100_000
	// DefaultSnapshotInterval is the longest the writer waits before it
	// writes a snapshot of a log that grew.
	DefaultSnapshotInterval = 10 * time.Minute
	// DefaultSnapshotPoll is how often the writer looks at the runner.
	DefaultSnapshotPoll = time.Second
	// DefaultSnapshotWriteRate is how fast a snapshot is written, in
	// bytes a second.
	DefaultSnapshotWriteRate = 64 << 20
)

// snapSuffix ends the name of a snapshot file, <position>.snap.
const snapSuffix = ".snap"

// SnapshotKey signs the snapshots a directory writes and checks the
// signature of those it reads: the log's checkpoint key
// (transparency.Key). text is the file's index (snap.Header.SignedText).
type SnapshotKey interface {
	SignSnapshot(text []byte) ([]byte, error)
	VerifySnapshot(text, signed []byte) error
}

// Snapshots is a directory of read-model snapshots of one log, each file
// named after the position it holds the state at (<position>.snap). Fill
// its fields (NewSnapshots); it is safe for concurrent use, and two
// processes may write into the same directory (a file appears whole under
// its name or not at all).
//
// Only regular files are snapshots: an entry that is a symbolic link, a
// FIFO, a device or a directory is passed over, never followed, opened
// for writing or shrunk (openSnapshotFile), whatever its name.
type Snapshots struct {
	// Dir is the directory (created on the first Write).
	Dir string
	// Key signs each snapshot written and checks each one read: a file
	// whose signature does not verify (edited by someone without the
	// key, or written for another log) is refused. Without a Key
	// nothing is written and nothing loads.
	Key SnapshotKey
	// Keep is how many snapshots Write leaves, the newest.
	Keep int
	// Identity returns how many events the log holds up to position and
	// the Merkle tree's root at that size: what names the log there. An
	// error (a tree that does not reach the position yet) means the
	// position cannot be named: Write refuses, Load passes the file over.
	Identity func(ctx context.Context, position uint64) (records int64, root domain.Hash, err error)
	// Clock stamps the files' Created.
	Clock domain.Clock
	// WriteRate bounds how fast Write writes a snapshot, in bytes a
	// second (0: as fast as it encodes). Written at full speed, the
	// encoding takes one of the cores and the file's writeback the disk
	// for as long as it lasts, and the service's own work (the store's
	// fdatasyncs, which every placement waits for) queues behind them;
	// paced, it takes turns with them.
	WriteRate int64
}

// NewSnapshots returns the snapshots of dir, signed and checked with key,
// with default settings.
func NewSnapshots(dir string, identity func(ctx context.Context, position uint64) (int64, domain.Hash, error), key SnapshotKey, clock domain.Clock) *Snapshots {
	return &Snapshots{Dir: dir, Key: key, Keep: DefaultSnapshotKeep, Identity: identity, Clock: clock, WriteRate: DefaultSnapshotWriteRate}
}

// SnapshotFile is a snapshot file written.
type SnapshotFile struct {
	Path     string
	Position uint64
	Bytes    int64
	Encode   time.Duration // encoding and writing it (the runner does not wait for this)
}

// Write encodes f into Dir/<position>.snap — written under a temporary
// name, synced, then renamed, so that a crash leaves the whole file or
// none — and removes all but the Keep newest snapshots. The log must be
// nameable at f's position (Identity).
func (s *Snapshots) Write(ctx context.Context, f *Frozen) (SnapshotFile, error) {
	start := time.Now()
	if s.Key == nil {
		return SnapshotFile{}, errors.New("snapshot: no key to sign it with")
	}
	records, root, err := s.Identity(ctx, f.Position)
	if err != nil {
		return SnapshotFile{}, fmt.Errorf("snapshot at %d: the log cannot be named there yet: %w", f.Position, err)
	}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return SnapshotFile{}, err
	}
	tmp, err := os.CreateTemp(s.Dir, ".writing-*")
	if err != nil {
		return SnapshotFile{}, err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	err = writeSnapshot(newSyncingWriter(tmp, s.WriteRate), s.Key, f, snap.Header{Position: f.Position, Records: records, Root: root,
		MaxTime: f.MaxTime, MaxOwnTime: f.MaxOwnTime, Created: s.Clock.Now().UnixMilli()})
	if err == nil {
		err = tmp.Sync()
	}
	size := int64(0)
	if st, serr := tmp.Stat(); serr == nil {
		size = st.Size()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return SnapshotFile{}, fmt.Errorf("write snapshot: %w", err)
	}
	path := filepath.Join(s.Dir, strconv.FormatUint(f.Position, 10)+snapSuffix)
	if err := os.Rename(tmp.Name(), path); err != nil {
		return SnapshotFile{}, err
	}
	syncDir(s.Dir)
	s.prune()
	return SnapshotFile{Path: path, Position: f.Position, Bytes: size, Encode: time.Since(start)}, nil
}

func writeSnapshot(file *syncingWriter, key SnapshotKey, f *Frozen, h snap.Header) error {
	w, err := snap.NewWriter(file)
	if err != nil {
		return err
	}
	w.Sign = key.SignSnapshot
	// Without turns, the goroutines made ready on the core the encoding
	// runs on wait for the scheduler's preemption, up to 10 ms, unless the
	// other core is idle to take them.
	w.Yield = runtime.Gosched
	for _, sec := range f.sections {
		if err := w.Section(sec.name, sec.version, sec.encode); err != nil {
			return err
		}
	}
	return w.Finish(h)
}

// snapshotSyncBytes is how much of a snapshot is written between two syncs
// of its file.
const snapshotSyncBytes = 1 << 20

// syncingWriter writes to f, syncs it after every snapshotSyncBytes, and
// keeps to rate bytes a second (0: no bound). A snapshot is large (about
// 130 bytes per order). Written whole and synced once, its dirty pages
// reach the disk in one burst, and the store's fdatasync of its WAL, which
// every placement waits for twice, waits behind that burst: on the
// reference machine a 130 MB file synced once made a concurrent 8 KiB
// fdatasync take up to 29–35 ms, synced every MiB 0.6–3 ms, for 20–30%
// more time writing the file.
type syncingWriter struct {
	f       *os.File
	rate    int64
	now     func() time.Time    // time.Now
	sleep   func(time.Duration) // time.Sleep
	start   time.Time
	written int64 // bytes written
	pending int   // bytes written since the last sync
}

// newSyncingWriter returns a writer to f keeping to rate bytes a second
// from now on (0: no bound).
func newSyncingWriter(f *os.File, rate int64) *syncingWriter {
	return &syncingWriter{f: f, rate: rate, now: time.Now, sleep: time.Sleep, start: time.Now()}
}

func (w *syncingWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.written += int64(n)
	w.pending += n
	if err == nil && w.pending >= snapshotSyncBytes {
		w.pending, err = 0, w.f.Sync()
	}
	if err == nil && w.rate > 0 {
		due := w.start.Add(time.Duration(float64(w.written) / float64(w.rate) * float64(time.Second)))
		if d := due.Sub(w.now()); d > 0 {
			w.sleep(d)
		}
	}
	return n, err
}

// syncDir makes a rename in dir durable (best effort: not every system
// can sync a directory, and a lost rename only loses a cache).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// prune removes all but the Keep newest snapshots, and temporary files of
// writes that a crash interrupted long ago.
func (s *Snapshots) prune() {
	keep := s.Keep
	if keep <= 0 {
		keep = DefaultSnapshotKeep
	}
	list, _ := s.List()
	for _, f := range list[min(keep, len(list)):] {
		removeGradually(f.Path)
	}
	entries, _ := os.ReadDir(s.Dir)
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), ".writing-") {
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > time.Hour {
			_ = os.Remove(filepath.Join(s.Dir, e.Name()))
		}
	}
}

// removeStepBytes is how much of a removed snapshot is freed at a time.
const removeStepBytes = 4 << 20

// removeGradually removes the snapshot file at path after shrinking it by
// removeStepBytes at a time, each step synced. Freeing a whole snapshot at
// once is one large journal commit — with online discard, as on the
// reference machine, one large discard — that the store's next WAL
// fdatasync waits for: removing a 130 MB file made a concurrent 8 KiB
// fdatasync take up to 20–21 ms there, shrunk first 1.1–1.3 ms.
//
// Only a regular file with no other name is shrunk (openSnapshotFile): a
// symbolic link, a FIFO or a device put in its place is left alone, and a
// file with another name (a hard link to something else) is only unlinked.
func removeGradually(path string) {
	f, sole, err := openSnapshotFile(path, true)
	if err != nil {
		return
	}
	if st, err := f.Stat(); err == nil && sole {
		for size := st.Size(); size > 0; {
			size = max(size-removeStepBytes, 0)
			if f.Truncate(size) != nil || f.Sync() != nil {
				break
			}
		}
	}
	f.Close()
	_ = os.Remove(path)
}

// errNotRegular says that the entry at path is no snapshot file.
func errNotRegular(path string, mode os.FileMode) error {
	what := "not a regular file"
	switch {
	case mode&os.ModeSymlink != 0:
		what = "a symbolic link"
	case mode.IsDir():
		what = "a directory"
	case mode&os.ModeNamedPipe != 0:
		what = "a FIFO"
	case mode&os.ModeDevice != 0:
		what = "a device"
	case mode&os.ModeSocket != 0:
		what = "a socket"
	}
	return fmt.Errorf("%s is %s, not a snapshot file: left alone", filepath.Base(path), what)
}

// List returns the snapshot files of the directory, newest (highest
// position) first; none when the directory does not exist. Only regular
// files named <position>.snap are listed: a link, a FIFO, a device or a
// directory of that name is not (its type is read from the directory, not
// from what it points to).
func (s *Snapshots) List() ([]SnapshotFile, error) {
	entries, err := os.ReadDir(s.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []SnapshotFile
	for _, e := range entries {
		name := e.Name()
		pos, err := strconv.ParseUint(strings.TrimSuffix(name, snapSuffix), 10, 64)
		if !strings.HasSuffix(name, snapSuffix) || err != nil || !e.Type().IsRegular() {
			continue
		}
		f := SnapshotFile{Path: filepath.Join(s.Dir, name), Position: pos}
		if info, err := e.Info(); err == nil {
			f.Bytes = info.Size()
		}
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Position > out[j].Position })
	return out, nil
}

// LoadedSnapshot is a snapshot Load installed.
type LoadedSnapshot struct {
	Header snap.Header
	Info   SnapshotInfo
}

// Load installs into projs the newest snapshot that is valid for a log
// whose head is head and that accept takes (nil: any), and returns it;
// false when there is none, and then no projection changed. A snapshot is
// valid when its file checks (snap.ReadHeader, every frame's checksum),
// its signature verifies with Key and each section's bytes have the
// SHA-256 the signed index names, its position is within the log, the log has its Merkle root there
// (Identity: not a snapshot of another log, nor of one rewritten since),
// and it holds a section of every projection of projs at the version the
// projection encodes (sections of other projections are ignored). Each
// invalid snapshot is told to skip with why; one accept refuses is passed
// over in silence.
func (s *Snapshots) Load(ctx context.Context, head uint64, projs []Snapshotter, accept func(h *snap.Header) bool, skip func(path string, why error)) (LoadedSnapshot, bool) {
	if skip == nil {
		skip = func(string, error) {}
	}
	list, err := s.List()
	if err != nil {
		skip(s.Dir, err)
		return LoadedSnapshot{}, false
	}
	for _, f := range list {
		start := time.Now()
		h, err := s.load(ctx, f.Path, head, projs, accept)
		if errors.Is(err, errNotAccepted) {
			continue
		}
		if err != nil {
			skip(f.Path, err)
			continue
		}
		return LoadedSnapshot{Header: h, Info: SnapshotInfo{Path: f.Path, Position: h.Position,
			Created: time.UnixMilli(h.Created).UTC(), Load: time.Since(start)}}, true
	}
	return LoadedSnapshot{}, false
}

var errNotAccepted = errors.New("not accepted")

// load checks the snapshot at path and installs it into projs.
func (s *Snapshots) load(ctx context.Context, path string, head uint64, projs []Snapshotter, accept func(h *snap.Header) bool) (snap.Header, error) {
	file, h, err := s.open(path)
	if err != nil {
		return h, err
	}
	defer file.Close()
	if accept != nil && !accept(&h) {
		return h, errNotAccepted
	}
	if h.Position > head {
		return h, fmt.Errorf("its position %d is beyond the log's head %d: a snapshot of another log, or of a log cut short", h.Position, head)
	}
	records, root, err := s.Identity(ctx, h.Position)
	if err != nil {
		return h, fmt.Errorf("the log cannot be named at its position %d yet: %w", h.Position, err)
	}
	if records != h.Records || root != h.Root {
		return h, fmt.Errorf("the log's Merkle root at its position %d (%d events, %x) is not the snapshot's (%d events, %x): a snapshot of another log, or of a log rewritten since",
			h.Position, records, root[:8], h.Records, h.Root[:8])
	}
	secs := make([]snap.Section, len(projs))
	for i, p := range projs {
		sec, ok := h.Section(p.Name())
		if !ok {
			return h, fmt.Errorf("it holds no state of projection %s", p.Name())
		}
		if sec.Version != p.SnapshotVersion() {
			return h, fmt.Errorf("its state of projection %s has version %d, this release's is %d", p.Name(), sec.Version, p.SnapshotVersion())
		}
		secs[i] = sec
	}
	// The sections decode in parallel: each is a projection of its own.
	installs := make([]func(), len(projs))
	errs := make([]error, len(projs))
	var wg sync.WaitGroup
	for i, p := range projs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := snap.Open(file, secs[i])
			install, err := p.Load(d)
			if derr := d.Done(); err == nil { // Done also ends the section's hashing
				err = derr
			}
			if err != nil {
				errs[i] = fmt.Errorf("projection %s: %w", p.Name(), err)
				return
			}
			installs[i] = install
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return h, err
	}
	for _, install := range installs {
		install()
	}
	return h, nil
}

// open opens the snapshot file at path (a regular file, openSnapshotFile),
// reads its header and checks its signature with Key: a file whose
// signature does not verify is refused before any of its state is read.
func (s *Snapshots) open(path string) (*os.File, snap.Header, error) {
	file, _, err := openSnapshotFile(path, false)
	if err != nil {
		return nil, snap.Header{}, err
	}
	st, err := file.Stat()
	if err != nil {
		file.Close()
		return nil, snap.Header{}, err
	}
	h, err := snap.ReadHeader(file, st.Size())
	if err == nil {
		err = s.checkSignature(&h)
	}
	if err != nil {
		file.Close()
		return nil, h, err
	}
	return file, h, nil
}

// checkSignature checks h's signature with Key.
func (s *Snapshots) checkSignature(h *snap.Header) error {
	if s.Key == nil {
		return errors.New("no key to check its signature with")
	}
	if err := s.Key.VerifySnapshot(h.SignedText(), h.Signature); err != nil {
		return fmt.Errorf("refused: %s (a snapshot edited, or written, by someone without this log's key)", domain.ErrorMessage(err))
	}
	return nil
}

// SnapshotWriter writes a snapshot of a runner's projections in the
// background whenever Every events were applied since the last one, or
// Interval passed and the log grew. Fill its fields (NewSnapshotWriter),
// then Start; Close stops it.
type SnapshotWriter struct {
	Runner    *Runner
	Snapshots *Snapshots
	Every     uint64
	Interval  time.Duration
	// Poll is how often it looks at the runner's position.
	Poll time.Duration
	// Clock times Interval.
	Clock domain.Clock
	// OnWrite, when set, is told of each snapshot written in the
	// background and of each failure.
	OnWrite func(f *Frozen, file SnapshotFile, err error)

	mu     sync.Mutex // one write at a time
	last   uint64     // position of the last snapshot
	lastAt time.Time
	stop   context.CancelFunc
	done   chan struct{}
}

// NewSnapshotWriter returns a writer of runner's snapshots into snaps with
// default settings; the last snapshot is taken to be the one the runner
// started from.
func NewSnapshotWriter(runner *Runner, snaps *Snapshots, clock domain.Clock) *SnapshotWriter {
	w := &SnapshotWriter{Runner: runner, Snapshots: snaps, Every: DefaultSnapshotEvery, Interval: DefaultSnapshotInterval,
		Poll: DefaultSnapshotPoll, Clock: clock, lastAt: clock.Now()}
	if info, ok, _ := runner.Snapshot(); ok {
		w.last = info.Position
	}
	return w
}

// Write freezes the runner's projections now and writes their snapshot
// (replacing a file of the same position), and returns the frozen state's
// figures (position, pause) with the file.
func (w *SnapshotWriter) Write(ctx context.Context) (*Frozen, SnapshotFile, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	f, err := w.Runner.Freeze(ctx)
	if err != nil {
		return nil, SnapshotFile{}, err
	}
	file, err := w.Snapshots.Write(ctx, f)
	if err != nil {
		return f, file, err
	}
	w.last, w.lastAt = f.Position, w.Clock.Now()
	return f, file, nil
}

// WriteSoon makes a snapshot due at the next poll, once the runner has
// applied any event: the one serve started from was discarded, or none
// was valid (of an older format), so that the next start does not replay
// the whole log.
func (w *SnapshotWriter) WriteSoon() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.last, w.lastAt = 0, time.Time{}
}

// due reports whether a snapshot is due at position pos and time now.
func (w *SnapshotWriter) due(pos uint64, now time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if pos <= w.last {
		return false
	}
	return pos-w.last >= w.Every || now.Sub(w.lastAt) >= w.Interval
}

// Start writes snapshots in the background until Close.
func (w *SnapshotWriter) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	w.stop, w.done = cancel, make(chan struct{})
	go func() {
		defer close(w.done)
		t := time.NewTicker(w.Poll)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if !w.due(w.Runner.Position(), w.Clock.Now()) {
				continue
			}
			f, file, err := w.Write(ctx)
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				// Try again after a full interval, not at every poll.
				w.mu.Lock()
				w.lastAt = w.Clock.Now()
				if f != nil {
					w.last = f.Position
				}
				w.mu.Unlock()
			}
			if w.OnWrite != nil {
				w.OnWrite(f, file, err)
			}
		}
	}()
}

// Close stops the background writes, waiting for one under way.
func (w *SnapshotWriter) Close() {
	if w.stop != nil {
		w.stop()
		<-w.done
		w.stop = nil
	}
}
