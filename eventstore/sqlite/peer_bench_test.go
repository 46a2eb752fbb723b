package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hallgren/eventsourcing/core"
	hallgrensql "github.com/hallgren/eventsourcing/eventstore/sql"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
)

// BenchmarkPeer runs one workload through this store and through the event
// store a Go developer would pick instead: the SQL event store of
// github.com/hallgren/eventsourcing (module eventstore/sql v0.4.0, the
// newest the module proxy serves that does not raise the go-sqlite3 our
// binary links) on SQLite through github.com/mattn/go-sqlite3, with one
// Save at a time as its README advises for SQLite (peerStore: later
// versions' OpenWithSingelWriter, a mutex around Save) and set up with its
// Migrate. Each sub-benchmark prints both figures and "ratio" = ours/peer,
// measured in the same run; the append workloads alternate between the two
// stores in rounds, as fsync times drift on a shared machine.
//
// Workloads: orders of three events (requested, accepted, filled: an
// OrderFilled-sized payload each), each writer appending, one event per
// append with the expected version, to its own order streams, with 1 and
// with 64 writers; a replay of a whole log (30,000 events, 10,000 orders)
// into a counting projection (ours through projections.Runner, the peer by
// paging through its All, as its projections do); and reads of the three
// events of a random order stream (ours ReadStream, the peer's Get).
//
// Made equal: one SQLite file each in WAL mode, every append durable before
// it returns, a 64 MiB page cache, a 10 s busy timeout, the same payload
// bytes. What cannot be: the peer makes a commit durable with SQLite's
// synchronous=FULL, which on this build (no HAVE_FDATASYNC) calls fsync on
// the WAL at each commit; ours runs synchronous=NORMAL and fdatasyncs the
// WAL itself before it acknowledges (durable.go), one fdatasync for a whole
// group of commits. Each store keeps its own schema and does its own work
// per event: ours also checks and indexes a unique event id, chains and
// hashes every event, and keeps the stream head; the peer stores its
// timestamp as RFC 3339 text (second precision) and has no event id. The
// peer's log for the read workloads is loaded with synchronous=OFF (only
// the reads are timed).
func BenchmarkPeer(b *testing.B) {
	b.Run("append/writers=1", func(b *testing.B) { benchPeerAppends(b, 1, 100) })
	b.Run("append/writers=64", func(b *testing.B) { benchPeerAppends(b, 64, 10) })
	b.Run("replay", benchPeerReplay)
	b.Run("read3", benchPeerReads)
}

// peerOrderTypes are the three events of one order.
var peerOrderTypes = [3]string{domain.TypeOrderRequested, domain.TypeOrderAccepted, domain.TypeOrderFilled}

// peerOrder is one order's events as each store takes them.
type peerOrder struct {
	stream string
	ours   [3]domain.Event
	peer   [3]core.Event
}

func makePeerOrders(n, first int) []peerOrder {
	clock := domain.SystemClock{}
	orders := make([]peerOrder, n)
	for i := range orders {
		o := &orders[i]
		o.stream = domain.OrderStream(int64(first + i))
		for k, typ := range peerOrderTypes {
			e := benchEvent(clock, i)
			e.Type = typ
			o.ours[k] = e
			o.peer[k] = core.Event{
				AggregateID: o.stream, Version: core.Version(k + 1), AggregateType: "order",
				Timestamp: time.UnixMilli(e.Time), Reason: typ, Data: e.Data,
			}
		}
	}
	return orders
}

// openPeer opens the peer's store in the file at path, durable (WAL,
// synchronous=FULL) or not (for loading), and creates its table with its
// Migrate when the file is new.
func openPeer(b *testing.B, path string, durable bool) *peerStore {
	_, statErr := os.Stat(path)
	sync := "FULL"
	if !durable {
		sync = "OFF"
	}
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_synchronous="+sync+"&_busy_timeout=10000&_cache_size=-65536")
	if err != nil {
		b.Fatal(err)
	}
	s := &peerStore{SQL: hallgrensql.Open(db)}
	if errors.Is(statErr, fs.ErrNotExist) {
		if err := s.Migrate(); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// peerStore is the peer's SQL event store with one Save at a time: SQLite
// takes one writer, and concurrent Saves would fail with SQLITE_BUSY
// instead of waiting (what the peer's later OpenWithSingelWriter does).
type peerStore struct {
	*hallgrensql.SQL
	mu sync.Mutex
}

// Save saves events as the peer does, one caller at a time.
func (s *peerStore) Save(events []core.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.SQL.Save(events)
}

func openOurs(b *testing.B, path string) *sqlite.Store {
	s := sqlite.NewStore(path)
	if err := s.Open(); err != nil {
		b.Fatal(err)
	}
	return s
}

// reportPeer prints one workload's figures.
func reportPeer(b *testing.B, what string, events int, ours, peer time.Duration) {
	o, p := float64(events)/ours.Seconds(), float64(events)/peer.Seconds()
	b.ReportMetric(o, "events/s")
	b.ReportMetric(p, "peer-events/s")
	b.ReportMetric(o/p, "ratio")
	b.Logf("%s: ours %.0f events/s, hallgren/eventsourcing sql %.0f events/s, ratio %.2f", what, o, p, o/p)
}

// benchPeerAppends has writers append orders orders each, event by event,
// to their own streams, alternating between the two stores in rounds.
func benchPeerAppends(b *testing.B, writers, orders int) {
	rounds := min(orders, 10)
	var oursTime, peerTime time.Duration
	for n := 0; n < b.N; n++ {
		b.StopTimer()
		work := make([][]peerOrder, writers)
		for w := range work {
			work[w] = makePeerOrders(orders, w*orders+1)
		}
		ours := openOurs(b, filepath.Join(b.TempDir(), "ours.db"))
		peer := openPeer(b, filepath.Join(b.TempDir(), "peer.db"), true)
		run := func(from, to int, appendOrder func(o *peerOrder) error) time.Duration {
			return appendConcurrently(b, writers, from, to, func(w, i int) error { return appendOrder(&work[w][i]) })
		}
		appendOurs := func(o *peerOrder) error {
			expected := domain.NoStream
			for k := range o.ours {
				if _, err := ours.Append(context.Background(), o.stream, expected, o.ours[k]); err != nil {
					return err
				}
				expected = domain.ExpectedVersion(k)
			}
			return nil
		}
		appendPeer := func(o *peerOrder) error {
			for k := range o.peer {
				if err := peer.Save(o.peer[k : k+1]); err != nil {
					return err
				}
			}
			return nil
		}
		b.StartTimer()
		for r := 0; r < rounds; r++ {
			from, to := r*orders/rounds, (r+1)*orders/rounds
			if r%2 == 0 {
				oursTime += run(from, to, appendOurs)
				peerTime += run(from, to, appendPeer)
			} else {
				peerTime += run(from, to, appendPeer)
				oursTime += run(from, to, appendOurs)
			}
		}
		b.StopTimer()
		ours.Close()
		peer.Close()
	}
	reportPeer(b, fmt.Sprintf("appends, %d writers", writers), 3*writers*orders*b.N, oursTime, peerTime)
}

// peerLogOrders is the size of the log of the read workloads.
const peerLogOrders = 10000

// loadPeerLogs writes the same peerLogOrders orders into both stores.
func loadPeerLogs(b *testing.B) (*sqlite.Store, *peerStore, []peerOrder) {
	orders := makePeerOrders(peerLogOrders, 1)
	ours := openOurs(b, filepath.Join(b.TempDir(), "ours.db"))
	var wg sync.WaitGroup
	const loaders = 64
	for w := 0; w < loaders; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < len(orders); i += loaders {
				o := &orders[i]
				if _, err := ours.Append(context.Background(), o.stream, domain.NoStream, o.ours[:]...); err != nil {
					b.Error(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	path := filepath.Join(b.TempDir(), "peer.db")
	loader := openPeer(b, path, false)
	for i := range orders {
		if err := loader.Save(orders[i].peer[:]); err != nil {
			b.Fatal(err)
		}
	}
	loader.Close()
	return ours, openPeer(b, path, true), orders
}

// benchPeerReplay replays each whole log into a counting projection.
func benchPeerReplay(b *testing.B) {
	b.StopTimer()
	ours, peer, _ := loadPeerLogs(b)
	defer ours.Close()
	defer peer.Close()
	const want = 3 * peerLogOrders
	var oursTime, peerTime time.Duration
	for n := 0; n < b.N; n++ {
		b.StartTimer()
		d, replayed := replayCounting(b, ours)
		b.StopTimer()
		oursTime += d
		if replayed != want {
			b.Fatalf("ours replayed %d events, want %d", replayed, want)
		}

		b.StartTimer()
		start := time.Now()
		count, err := peerReplay(peer, func(core.Event) {})
		peerTime += time.Since(start)
		b.StopTimer()
		if err != nil || count != want {
			b.Fatalf("peer replayed %d events (%v), want %d", count, err, want)
		}
	}
	reportPeer(b, "replay into a counting projection", want*b.N, oursTime, peerTime)
}

// peerReplay pages through the peer's whole log as its projections do,
// handing each event to apply, and returns how many there were.
func peerReplay(s *peerStore, apply func(core.Event)) (int, error) {
	const page = 4096
	count := 0
	start := core.Version(0)
	for {
		it, err := s.All(start, page)
		if err != nil {
			return count, err
		}
		got := 0
		for it.Next() {
			e, err := it.Value()
			if err != nil {
				it.Close()
				return count, err
			}
			apply(e)
			start = e.GlobalVersion + 1
			count++
			got++
		}
		it.Close()
		if got < page {
			return count, nil
		}
	}
}

// benchPeerReads reads the three events of random order streams.
func benchPeerReads(b *testing.B) {
	b.StopTimer()
	ours, peer, orders := loadPeerLogs(b)
	defer ours.Close()
	defer peer.Close()
	const reads = 5000
	rng := rand.New(rand.NewPCG(1, 2))
	var oursTime, peerTime time.Duration
	for n := 0; n < b.N; n++ {
		picks := make([]string, reads)
		for i := range picks {
			picks[i] = orders[rng.IntN(len(orders))].stream
		}
		b.StartTimer()
		start := time.Now()
		for _, stream := range picks {
			it := ours.ReadStream(context.Background(), stream, 0, 0)
			got := 0
			for it.Next() {
				if e := it.Event(); e.Stream != stream {
					b.Fatalf("ours read an event of %s in %s", e.Stream, stream)
				}
				got++
			}
			if err := errors.Join(it.Err(), it.Close()); err != nil || got != 3 {
				b.Fatalf("ours read %d events of %s (%v), want 3", got, stream, err)
			}
		}
		oursTime += time.Since(start)

		start = time.Now()
		for _, stream := range picks {
			it, err := peer.Get(context.Background(), stream, "order", 0)
			if err != nil {
				b.Fatal(err)
			}
			got := 0
			for it.Next() {
				if _, err := it.Value(); err != nil {
					b.Fatal(err)
				}
				got++
			}
			it.Close()
			if got != 3 {
				b.Fatalf("peer read %d events of %s, want 3", got, stream)
			}
		}
		peerTime += time.Since(start)
		b.StopTimer()
	}
	reportPeer(b, "reads of a random 3-event stream", 3*reads*b.N, oursTime, peerTime)
}
