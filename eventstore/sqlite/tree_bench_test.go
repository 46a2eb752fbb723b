package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
)

// BenchmarkAppendTree measures what the Merkle tree costs appends: 64
// writers append durably (one new order stream with one event each, as
// BenchmarkAppend) to a store that keeps the tree, and to one that does
// not (sqlite.NewStoreWithoutTree), in alternating rounds of a tenth of
// the events each on files that grow as in one run, since fsync times
// drift on a shared machine. It reports both rates ("tree-events/s",
// "plain-events/s"), "tree-cost" = 1 − tree/plain rate, the process's
// CPU per event in each ("tree-cpu-us/event", "plain-cpu-us/event",
// steadier than the rates) and "tree-cpu-cost" = 1 − plain/tree CPU, and
// "tree-bytes/event": how much larger the file with the tree is, per
// event, once both are checkpointed (the stored hashes' rows).
// Target: tree-cost ≤ 10%.
func BenchmarkAppendTree(b *testing.B) {
	const (
		writers   = 64
		perWriter = 20000 / writers
		rounds    = 10
	)
	total := writers * perWriter
	var treeTime, plainTime, treeCPU, plainCPU time.Duration
	var treeBytes, plainBytes int64
	for n := 0; n < b.N; n++ {
		b.StopTimer()
		clock := domain.SystemClock{}
		evs := make([][]domain.Event, 2)
		for k := range evs {
			evs[k] = make([]domain.Event, total)
			for i := range evs[k] {
				evs[k][i] = benchEvent(clock, i)
			}
		}
		dir := b.TempDir()
		stores := []*sqlite.Store{sqlite.NewStore(filepath.Join(dir, "tree.db")), sqlite.NewStoreWithoutTree(filepath.Join(dir, "plain.db"))}
		for _, s := range stores {
			if err := s.Open(); err != nil {
				b.Fatal(err)
			}
		}
		var next [2]atomic.Int64
		run := func(k, from, to int) (time.Duration, time.Duration) {
			s := stores[k]
			cpu := cpuTime()
			b.StartTimer()
			d := appendConcurrently(b, writers, from, to, func(w, i int) error {
				_, err := s.Append(context.Background(), domain.OrderStream(next[k].Add(1)), domain.NoStream, evs[k][w*perWriter+i])
				return err
			})
			b.StopTimer()
			return d, cpuTime() - cpu
		}
		for r := 0; r < rounds; r++ {
			from, to := r*perWriter/rounds, (r+1)*perWriter/rounds
			for _, k := range [][2]int{{0, 1}, {1, 0}}[r%2] {
				d, c := run(k, from, to)
				if k == 0 {
					treeTime, treeCPU = treeTime+d, treeCPU+c
				} else {
					plainTime, plainCPU = plainTime+d, plainCPU+c
				}
			}
		}
		if size, _ := stores[0].TreeSize(context.Background()); size != int64(total) {
			b.Fatalf("tree of %d records after %d appends", size, total)
		}
		for k, s := range stores {
			s.Close()
			bytes := fileBytes(b, s.Path)
			if k == 0 {
				treeBytes += bytes
			} else {
				plainBytes += bytes
			}
		}
	}
	events := float64(total * b.N)
	b.ReportMetric(events/treeTime.Seconds(), "tree-events/s")
	b.ReportMetric(events/plainTime.Seconds(), "plain-events/s")
	b.ReportMetric(1-plainTime.Seconds()/treeTime.Seconds(), "tree-cost")
	b.ReportMetric(float64(treeCPU.Microseconds())/events, "tree-cpu-us/event")
	b.ReportMetric(float64(plainCPU.Microseconds())/events, "plain-cpu-us/event")
	b.ReportMetric(1-plainCPU.Seconds()/treeCPU.Seconds(), "tree-cpu-cost")
	b.ReportMetric(float64(treeBytes-plainBytes)/events, "tree-bytes/event")
}

// fileBytes checkpoints the closed database at path into its main file
// and returns that file's size: pages in use, free pages dropped.
func fileBytes(b *testing.B, path string) int64 {
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var pages, size int64
	if _, err := db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		b.Fatal(err)
	}
	if err := db.QueryRow(`PRAGMA page_count`).Scan(&pages); err != nil {
		b.Fatal(err)
	}
	var free int64
	if err := db.QueryRow(`PRAGMA freelist_count`).Scan(&free); err != nil {
		b.Fatal(err)
	}
	if err := db.QueryRow(`PRAGMA page_size`).Scan(&size); err != nil {
		b.Fatal(err)
	}
	return (pages - free) * size
}
