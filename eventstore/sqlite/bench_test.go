package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
	"github.com/tradeledger/tradeledger/projections"
)

// benchEvent is an OrderFilled-sized event.
func benchEvent(clock domain.Clock, i int) domain.Event {
	return domain.NewEvent(clock, domain.TypeOrderFilled, domain.OrderFilled{
		FillID: fmt.Sprintf("f-%d", i), Price: decimal.MustDecimal("27123.45"), Quantity: decimal.MustDecimal("0.0123"),
		Fee: decimal.MustDecimal("0.00001230"), FeeAsset: "BTC",
	})
}

// rawInserts writes evs into bare tables (no index) with synchronous=FULL,
// in transactions of batch rows, the rows built before the clock starts:
// through database/sql with a prepared single-row insert (sqlTime), and
// through SQLite's C API as the store's writer does (cTime).
func rawInserts(b *testing.B, evs []domain.Event, batch int) (sqlTime, cTime time.Duration) {
	cTime, err := sqlite.RawInsertC(filepath.Join(b.TempDir(), "raw-c.db"), evs, batch)
	if err != nil {
		b.Fatal(err)
	}
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(b.TempDir(), "raw.db")+"?_journal_mode=WAL&_synchronous=FULL")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE events (position INTEGER PRIMARY KEY, stream TEXT, version INTEGER, id TEXT, hash BLOB, record BLOB)`); err != nil {
		b.Fatal(err)
	}
	n := len(evs)
	streams, recs := make([]string, n), make([][]byte, n)
	for i := range evs {
		e := &evs[i]
		streams[i] = fmt.Sprintf("order-%d", i)
		// About the store's record: envelope fields, payload, two hashes.
		recs[i] = append(append([]byte(e.ID+e.Type+"bench"), e.Data...), make([]byte, 64)...)
	}
	var h domain.Hash
	start := time.Now()
	for i := 0; i < n; i += batch {
		tx, err := db.Begin()
		if err != nil {
			b.Fatal(err)
		}
		st, _ := tx.Prepare(`INSERT INTO events VALUES (?,?,?,?,?,?)`)
		for j := i; j < i+batch && j < n; j++ {
			if _, err := st.Exec(j+1, streams[j], 0, evs[j].ID, h[:], recs[j]); err != nil {
				b.Fatal(err)
			}
		}
		st.Close()
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start), cTime
}

// BenchmarkAppend measures durable appends through the store API with 1 and
// 64 concurrent writers. Each append opens one new order stream with one
// event; streams are named as the Trader names them (domain.OrderStream, ids
// increasing). The events are built before the clock starts: the figure is
// the store's alone.
//
// Its reference ("raw-events/s"; "ratio" = store/raw) writes the same
// events, in the order the writers take them, through sqlite.RawIndexed:
// the same rows byte for byte (sealed as the store seals them), the same
// schema and indexes, the same pragmas, the same SQLite and C-level insert
// loop, each transaction made durable as the store makes it (fdatasync of
// the WAL) before the next begins, in transactions of as many rows as there
// are writers: the most one group commit can gather, since each writer
// waits for its append. What cannot be equal: the reference does none of
// the store's work per append (checks, hashing and chaining, stream-head
// and id bookkeeping, the handover between the appending goroutines, the
// writer and the syncer), and it syncs each transaction before it begins
// the next, where the store overlaps a sync with the next commit. On a
// shared machine fsync times drift by several times within seconds, so the
// two run in alternating rounds of a tenth of the events each, on files
// that grow as in one run. "cpu-us/event" and "raw-cpu-us/event" are the
// process's CPU time (user and system) per event in each, which the disk's
// drift does not move ("raw-cpu-us/event" is the CPU of the reference's timed
// inserts, commits and syncs; "raw-seal-cpu-us/event" that of sealing its
// rows before its clock starts, which the store does in its appends);
// "events/sync" is how many events one fdatasync of
// the store covered on average, "ms/sync" how long one took, and
// "sync-bound-events/s" = writers / ms/sync the most the store could reach
// with every writer's append in every sync; "cpu-ratio" = cpu-us/event ÷
// raw-cpu-us/event. Two older references stay for comparison:
// a bare table (no index) with synchronous=FULL through the C API
// ("ratio-bare") and through database/sql ("ratio-sql").
// Target: ≥ 100,000 events/s with 64 writers, ≥ 0.8 of the reference.
func BenchmarkAppend(b *testing.B) {
	const rounds = 10
	for _, writers := range []int{1, 64} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			perWriter := 20000 / writers
			if writers == 1 {
				perWriter = 2000 // one writer pays one fsync per event
			}
			total := perWriter * writers
			var storeTime, rawTime, sqlTime, cTime, storeCPU, rawCPU, sealCPU time.Duration
			var obs countingObserver
			for n := 0; n < b.N; n++ {
				b.StopTimer()
				clock := domain.SystemClock{}
				// Built in the order the writers take them, round by
				// round, so that their ids (UUIDv7, time-ordered) arrive
				// about as ordered as when each is made just before its
				// append, as the service does. made is that order, the
				// references' order.
				evs, made := make([]domain.Event, total), make([]domain.Event, total)
				for i := range evs {
					made[i] = benchEvent(clock, i)
					evs[(i%writers)*perWriter+i/writers] = made[i]
				}
				st, ct := rawInserts(b, made, writers)
				sqlTime, cTime = sqlTime+st, cTime+ct
				raw, err := sqlite.OpenRawIndexed(filepath.Join(b.TempDir(), "raw-indexed.db"), func(i int) string { return domain.OrderStream(int64(i + 1)) })
				if err != nil {
					b.Fatal(err)
				}
				s := sqlite.NewStore(filepath.Join(b.TempDir(), "events.db"))
				// The store's goroutines, and the writers below, carry
				// the label run=store in a CPU profile (-tagfocus).
				var openErr error
				pprof.Do(context.Background(), storeLabels, func(context.Context) { openErr = s.Open() })
				if openErr != nil {
					b.Fatal(openErr)
				}
				s.SetObserver(&obs)
				var nextOrder atomic.Int64
				for r := 0; r < rounds; r++ {
					from, to := r*perWriter/rounds, (r+1)*perWriter/rounds
					runRaw := func() {
						cpu := cpuTime()
						rows := raw.Seal(made[from*writers : to*writers])
						sealed := cpuTime()
						rt, err := raw.Write(rows, writers)
						if err != nil {
							b.Fatal(err)
						}
						rawTime, rawCPU, sealCPU = rawTime+rt, rawCPU+cpuTime()-sealed, sealCPU+sealed-cpu
					}
					// Each goes first in every other round.
					if r%2 == 0 {
						runRaw()
					}
					cpu := cpuTime()
					b.StartTimer()
					// The writers inherit the labels.
					pprof.Do(context.Background(), storeLabels, func(context.Context) {
						storeTime += appendConcurrently(b, writers, from, to, func(w, i int) error {
							_, err := s.Append(context.Background(), domain.OrderStream(nextOrder.Add(1)), domain.NoStream, evs[w*perWriter+i])
							return err
						})
					})
					b.StopTimer()
					storeCPU += cpuTime() - cpu
					if r%2 == 1 {
						runRaw()
					}
				}
				s.Close()
				raw.Close()
			}
			events := float64(total * b.N)
			b.ReportMetric(events/storeTime.Seconds(), "events/s")
			b.ReportMetric(events/rawTime.Seconds(), "raw-events/s")
			b.ReportMetric(rawTime.Seconds()/storeTime.Seconds(), "ratio")
			b.ReportMetric(float64(storeCPU.Microseconds())/events, "cpu-us/event")
			b.ReportMetric(float64(rawCPU.Microseconds())/events, "raw-cpu-us/event")
			b.ReportMetric(float64(sealCPU.Microseconds())/events, "raw-seal-cpu-us/event")
			// The steadiest figure on a shared machine: the store's CPU
			// per event over the reference's in the time it is timed.
			b.ReportMetric(storeCPU.Seconds()/rawCPU.Seconds(), "cpu-ratio")
			b.ReportMetric(float64(obs.events.Load())/float64(obs.syncs.Load()), "events/sync")
			b.ReportMetric(float64(obs.events.Load())/float64(obs.batches.Load()), "events/commit")
			// The bound fdatasync sets: each writer waits for its
			// append's sync, so at most writers events per sync time.
			msPerSync := float64(obs.syncTime.Load()) / 1e6 / float64(obs.syncs.Load())
			b.ReportMetric(msPerSync, "ms/sync")
			b.ReportMetric(float64(writers)/msPerSync*1000, "sync-bound-events/s")
			b.ReportMetric(cTime.Seconds()/storeTime.Seconds(), "ratio-bare")
			b.ReportMetric(sqlTime.Seconds()/storeTime.Seconds(), "ratio-sql")
			b.Logf("%d writers: store %.0f events/s, raw insert with the same indexes and syncs %.0f events/s, ratio %.2f; CPU %.1f vs %.1f µs/event; %.1f events per fdatasync",
				writers, events/storeTime.Seconds(), events/rawTime.Seconds(), rawTime.Seconds()/storeTime.Seconds(),
				float64(storeCPU.Microseconds())/events, float64(rawCPU.Microseconds())/events, float64(obs.events.Load())/float64(obs.syncs.Load()))
		})
	}
}

// appendConcurrently has writers goroutines each call write(w, i) for i
// from from to to (exclusive), w being the writer, and returns the wall
// time until all are done. A writer's error fails b and stops that writer.
func appendConcurrently(b *testing.B, writers, from, to int, write func(w, i int) error) time.Duration {
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := from; i < to; i++ {
				if err := write(w, i); err != nil {
					b.Error(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	return time.Since(start)
}

// storeLabels mark the store's goroutines in BenchmarkAppend's CPU profile.
var storeLabels = pprof.Labels("run", "store")

// cpuTime is the CPU time (user and system) the process has used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// countingObserver counts the store's committed events and syncs.
type countingObserver struct{ events, batches, syncs, syncTime atomic.Int64 }

func (o *countingObserver) ObserveAppend(time.Duration) {}
func (o *countingObserver) ObserveBatch(n int) {
	o.events.Add(int64(n))
	o.batches.Add(1)
}
func (o *countingObserver) ObserveSync(d time.Duration) {
	o.syncs.Add(1)
	o.syncTime.Add(int64(d))
}

// counting is the trivial projection of the replay benchmark.
type counting struct{ n int }

func (c *counting) Name() string                { return "counting" }
func (c *counting) Apply(e *domain.Event) error { c.n++; return nil }

// replayCounting replays s's whole log into a counting projection through
// a Runner; it returns the time until the Runner had started (caught up)
// and the events applied.
func replayCounting(b *testing.B, s domain.EventStore) (time.Duration, int) {
	start := time.Now()
	r := projections.NewRunner(s)
	c := &counting{}
	r.Register(c)
	if err := r.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	d := time.Since(start)
	r.Close()
	return d, c.n
}

// BenchmarkReplay measures replaying a log into a trivial projection through
// the Runner, against two raw scans of the same file's rows in the same run:
// the store's own C-level row copy without any decoding (sqlite.RawScan,
// "ratio"), the fastest this file can be read, and a database/sql scan of
// position and record ("ratio-sql"), the naive reference.
// Target: ≥ 500,000 events/s and ≥ 50% of the raw scan.
func BenchmarkReplay(b *testing.B) {
	const n = 200000
	path := filepath.Join(b.TempDir(), "events.db")
	s := sqlite.NewStore(path)
	if err := s.Open(); err != nil {
		b.Fatal(err)
	}
	clock := domain.SystemClock{}
	batch := make([]domain.Event, 0, 1000)
	for i := 0; i < n; i++ {
		batch = append(batch, benchEvent(clock, i))
		if len(batch) == cap(batch) {
			if _, err := s.Append(context.Background(), fmt.Sprintf("order-%d", i), domain.NoStream, batch...); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	b.ResetTimer()
	var replayTime, rawTime, sqlTime time.Duration
	for it := 0; it < b.N; it++ {
		start := time.Now()
		rows, err := sqlite.RawScan(path)
		if err != nil || rows != n {
			b.Fatalf("raw scan: %d rows, %v", rows, err)
		}
		rawTime += time.Since(start)

		start = time.Now()
		if rows, err = sqlScan(path); err != nil || rows != n {
			b.Fatalf("database/sql scan: %d rows, %v", rows, err)
		}
		sqlTime += time.Since(start)

		d, replayed := replayCounting(b, s)
		replayTime += d
		if replayed != n {
			b.Fatalf("replayed %d events, want %d", replayed, n)
		}
	}
	s.Close()
	events := float64(n * b.N)
	b.ReportMetric(events/replayTime.Seconds(), "events/s")
	b.ReportMetric(events/rawTime.Seconds(), "raw-events/s")
	b.ReportMetric(rawTime.Seconds()/replayTime.Seconds(), "ratio")
	b.ReportMetric(sqlTime.Seconds()/replayTime.Seconds(), "ratio-sql")
}

// sqlScan reads every row's position and record with database/sql, without
// decoding them.
func sqlScan(path string) (int, error) {
	db, err := sql.Open("sqlite3", "file:"+path+"?_query_only=1")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	rows, err := db.Query(`SELECT position, record FROM events ORDER BY position`)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	var pos int64
	var rec sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&pos, &rec); err != nil {
			return n, err
		}
		n++
	}
	return n, rows.Err()
}
