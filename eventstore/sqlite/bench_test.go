package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
	"github.com/tradeledger/tradeledger/projections"
)

// benchEvent is an OrderFilled-sized event.
func benchEvent(clock domain.Clock, i int) domain.Event {
	return domain.NewEvent(clock, domain.TypeOrderFilled, domain.OrderFilled{
		FillID: fmt.Sprintf("f-%d", i), Price: domain.MustDecimal("27123.45"), Quantity: domain.MustDecimal("0.0123"),
		Fee: domain.MustDecimal("0.00001230"), FeeAsset: "BTC",
	})
}

// rawInserts writes evs into bare tables (no index) with synchronous=FULL,
// in transactions of batch rows, the rows built before the clock starts:
// through database/sql with a prepared single-row insert (sqlTime), and
// through SQLite's C API as the store's writer does (cTime, the physical
// floor).
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
// 64 concurrent writers, and reports the ratio to raw batched inserts of the
// same rows into a bare table with synchronous=FULL, measured in the same
// run, in transactions of as many rows as there are writers (the most one
// group commit can gather): "ratio" to inserts through SQLite's C API, as
// the store's writer makes them (the physical floor), "ratio-sql" to
// inserts through database/sql. Each append opens
// one new order stream with one event; streams are named as the Trader names
// them (domain.OrderStream, ids increasing). As for the raw reference, the
// events are built before the clock starts: the figure is the store's alone.
// Target: ≥ 50,000 events/s with 64 writers, ≥ 50% of raw.
func BenchmarkAppend(b *testing.B) {
	for _, writers := range []int{1, 64} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			perWriter := 20000 / writers
			if writers == 1 {
				perWriter = 2000 // one writer pays one fsync per event
			}
			total := perWriter * writers
			var storeTime, sqlTime, cTime time.Duration
			for n := 0; n < b.N; n++ {
				b.StopTimer()
				clock := domain.SystemClock{}
				// Built in the order the writers take them, round by
				// round, so that their ids (UUIDv7, time-ordered) arrive
				// about as ordered as when each is made just before its
				// append, as the service does.
				evs := make([]domain.Event, total)
				for i := range evs {
					evs[(i%writers)*perWriter+i/writers] = benchEvent(clock, i)
				}
				// A commit can gather at most one append per writer, so
				// the raw references commit as many rows each.
				st, ct := rawInserts(b, evs, writers)
				sqlTime, cTime = sqlTime+st, cTime+ct
				s := sqlite.NewStore(filepath.Join(b.TempDir(), "events.db"))
				if err := s.Open(); err != nil {
					b.Fatal(err)
				}
				var nextOrder atomic.Int64
				b.StartTimer()
				start := time.Now()
				var wg sync.WaitGroup
				for w := 0; w < writers; w++ {
					wg.Add(1)
					go func(w int) {
						defer wg.Done()
						for i := 0; i < perWriter; i++ {
							stream := domain.OrderStream(nextOrder.Add(1))
							if _, err := s.Append(context.Background(), stream, domain.NoStream, evs[w*perWriter+i]); err != nil {
								b.Error(err)
								return
							}
						}
					}(w)
				}
				wg.Wait()
				storeTime += time.Since(start)
				b.StopTimer()
				s.Close()
			}
			events := float64(total * b.N)
			b.ReportMetric(events/storeTime.Seconds(), "events/s")
			b.ReportMetric(events/cTime.Seconds(), "raw-events/s")
			b.ReportMetric(cTime.Seconds()/storeTime.Seconds(), "ratio")
			b.ReportMetric(sqlTime.Seconds()/storeTime.Seconds(), "ratio-sql")
		})
	}
}

// counting is the trivial projection of the replay benchmark.
type counting struct{ n int }

func (c *counting) Name() string                { return "counting" }
func (c *counting) Apply(e *domain.Event) error { c.n++; return nil }

// BenchmarkReplay measures replaying a log into a trivial projection through
// the Runner, against two raw scans of the same file's rows in the same run:
// the store's own C-level row copy without any decoding (sqlite.RawScan,
// "ratio"), the fastest this file can be read, and a database/sql scan of
// position and record ("ratio-sql"), the naive reference of DESIGN §9.
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

		start = time.Now()
		r := projections.NewRunner(s)
		c := &counting{}
		r.Register(c)
		if err := r.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		replayTime += time.Since(start)
		r.Close()
		if c.n != n {
			b.Fatalf("replayed %d events, want %d", c.n, n)
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
