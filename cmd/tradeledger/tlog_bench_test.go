package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
	"github.com/tradeledger/tradeledger/eventstore/transparency"
)

// BenchmarkTransparency measures the proofs of DESIGN §13 on logs of
// about 1,000,000 and (opt-in, TRADELEDGER_BENCH_10M=1: minutes and
// gigabytes) 10,000,000 events, orders of three events each:
//
//   - the p50 and p99 of an inclusion proof of a random record in the tree
//     of the last checkpoint, in process (transparency.Log, "proof-…-µs",
//     after 2,000 proofs that warm it up) and through GET
//     /api/v1/audit/proof/inclusion from one client over loopback
//     ("http-proof-…-µs", after those); target p99 ≤ 2 ms at 10M;
//   - the stored hashes' payload per event ("tree-payload-B/event"; the
//     whole table, rows and pages included, is BenchmarkAppendTree's
//     tree-bytes/event in eventstore/sqlite);
//   - `tradeledger verify --since` over the 100,000 events appended after
//     a kept checkpoint ("since-s"), and at 1M beside a full verify of the
//     same log ("full-verify-s").
//
// The log is events, a checkpoint, then 100,001 more events (so that the
// proofs are against the checkpoint's tree): 31,667 new orders, and a
// cancel request on 5,000 orders from before the checkpoint, whose
// streams --since links to it. TRADELEDGER_BENCH_DATA=dir keeps each
// size's data dir in dir/tlog2-<events> for the next run (building it is
// the slow part). Run with -benchtime 1x.
func BenchmarkTransparency(b *testing.B) {
	sizes := []int{1_000_000}
	if os.Getenv("TRADELEDGER_BENCH_10M") == "1" {
		sizes = append(sizes, 10_000_000)
	}
	for _, events := range sizes {
		b.Run("events="+strconv.Itoa(events), func(b *testing.B) { benchTransparency(b, events, events == 1_000_000) })
	}
}

// What follows the checkpoint of the benchmark log: new orders of three
// events, and one event on as many orders from before it.
const (
	sinceOrders    = 31_667
	sinceContinued = 5_000
	sinceEvents    = 3*sinceOrders + sinceContinued
)

func benchTransparency(b *testing.B, events int, fullVerify bool) {
	dir := b.TempDir()
	if keep := os.Getenv("TRADELEDGER_BENCH_DATA"); keep != "" {
		dir = filepath.Join(keep, "tlog2-"+strconv.Itoa(events))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			b.Fatal(err)
		}
	}
	kept := prepareTlogLog(b, dir, events)
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		d, err := OpenDataDir(ctx, dir, "", zap.NewNop())
		if err != nil {
			b.Fatal(err)
		}
		cpb, err := os.ReadFile(kept)
		if err != nil {
			b.Fatal(err)
		}
		cp, err := transparency.OpenCheckpoint(cpb, d.CheckpointKey.VerifierKey())
		if err != nil {
			b.Fatal(err)
		}
		l := transparency.NewLog(d.Store, d.Tree, d.CheckpointKey, domain.SystemClock{})
		rng := rand.New(rand.NewSource(1))
		// Measured warm, as a serving process is: the first proofs after
		// opening read the tree's pages from the disk and fill the cache
		// of its upper hashes.
		for range 2_000 {
			if _, _, err := l.ProveInclusion(ctx, rng.Int63n(cp.Size), cp.Size); err != nil {
				b.Fatal(err)
			}
		}
		const proofs = 20_000
		lat := make([]time.Duration, proofs)
		for i := range lat {
			idx := rng.Int63n(cp.Size)
			start := time.Now()
			if _, _, err := l.ProveInclusion(ctx, idx, cp.Size); err != nil {
				b.Fatal(err)
			}
			lat[i] = time.Since(start)
		}
		reportLatency(b, "proof", lat)
		db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, "events.db")+"?mode=ro")
		if err != nil {
			b.Fatal(err)
		}
		var payload float64
		if err := db.QueryRow(`SELECT CAST(SUM(length(hashes)) AS REAL) / COUNT(*) FROM tree`).Scan(&payload); err != nil {
			b.Fatal(err)
		}
		db.Close()
		b.ReportMetric(payload, "tree-payload-B/event")
		d.Close()

		// The same through the API, one client over loopback.
		m := benchMain(dir)
		m.ManualCheckpoints = true
		if err := m.Run(ctx); err != nil {
			b.Fatal(err)
		}
		if err := m.Tlog.Build(ctx, nil); err != nil {
			b.Fatal(err)
		}
		token, err := m.Server.Auth.IssueToken("bench")
		if err != nil {
			b.Fatal(err)
		}
		client := &http.Client{}
		const requests = 5_000
		lat = make([]time.Duration, requests)
		for i := range lat {
			req, _ := http.NewRequest("GET", fmt.Sprintf("%s/api/v1/audit/proof/inclusion?index=%d&size=%d", m.Server.URL(), rng.Int63n(cp.Size), cp.Size), nil)
			req.Header.Set("Authorization", "Bearer "+token)
			start := time.Now()
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			lat[i] = time.Since(start)
			if resp.StatusCode != 200 {
				b.Fatalf("inclusion proof: %d", resp.StatusCode)
			}
		}
		reportLatency(b, "http-proof", lat)
		m.Close()

		run := func(args ...string) time.Duration {
			var out, errOut bytes.Buffer
			start := time.Now()
			if err := Run(ctx, append([]string{"verify", "--data", dir}, args...), strings.NewReader(""), &out, &errOut); err != nil {
				b.Fatalf("verify %v: %v\n%s%s", args, err, out.String(), errOut.String())
			}
			return time.Since(start)
		}
		sinceTime := run("--since", kept)
		b.ReportMetric(sinceTime.Seconds(), "since-s")
		b.ReportMetric(float64(sinceEvents)/sinceTime.Seconds(), "since-events/s")
		if fullVerify {
			b.ReportMetric(run().Seconds(), "full-verify-s")
		}
	}
}

// reportLatency reports the p50 and p99 of lat as name-p50-µs and
// name-p99-µs.
func reportLatency(b *testing.B, name string, lat []time.Duration) {
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, name+"-p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e3, name+"-p99-µs")
}

// prepareTlogLog makes sure dir holds the benchmark log of about events
// events, a checkpoint of them kept in dir/kept.checkpoint, and
// sinceEvents events after it; it returns the kept checkpoint's file.
func prepareTlogLog(b *testing.B, dir string, events int) string {
	kept := filepath.Join(dir, "kept.checkpoint")
	if _, err := os.Stat(kept); err == nil {
		return kept
	}
	ctx := context.Background()
	d, err := OpenDataDir(ctx, dir, "", zap.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	store := d.Store.(*sqlite.Store)
	if head, _ := store.Head(ctx); head > 16 {
		b.Fatalf("%s holds %d events but no kept checkpoint: remove it", dir, head)
	}
	start := time.Now()
	appendBenchOrders(b, store, 1, events/3)
	l := transparency.NewLog(d.Store, d.Tree, d.CheckpointKey, domain.SystemClock{})
	c, _, err := l.Issue(ctx, true)
	if err != nil {
		b.Fatal(err)
	}
	appendBenchOrders(b, store, int64(events/3+1), sinceOrders)
	step := int64(events/3) / sinceContinued
	batch := make([]domain.StreamAppend, 0, sinceContinued)
	for i := int64(0); i < sinceContinued; i++ {
		id := 1 + i*step
		e := domain.NewEvent(domain.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), domain.TypeOrderCancelRequested, domain.OrderCancelRequested{})
		batch = append(batch, domain.StreamAppend{Stream: domain.OrderStream(id), Expected: 2, Events: []domain.Event{e}})
	}
	if _, err := store.AppendBatch(ctx, batch); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(kept, []byte(c.Note), 0o644); err != nil {
		b.Fatal(err)
	}
	b.Logf("built a log of %d events, a checkpoint of %d and %d events after it in %s", events, c.Size, sinceEvents, time.Since(start).Round(time.Second))
	return kept
}

// appendBenchOrders appends orders n orders from id first on, three
// events each (requested, accepted, filled), in batches (the import's
// path), one second apart from 2025-01-01.
func appendBenchOrders(b *testing.B, store *sqlite.Store, first int64, n int) {
	ctx := context.Background()
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	pairs := []string{"USDT-BTC", "USDT-ETH", "USDT-SOL", "USDT-XRP"}
	const chunk = 16_384
	batch := make([]domain.StreamAppend, 0, chunk)
	for id := first; id < first+int64(n); id++ {
		clock := domain.NewManualClock(base.Add(time.Duration(id) * time.Second))
		side, price := domain.Buy, 100+id%50
		if id%2 == 1 {
			side, price = domain.Sell, 101+id%50
		}
		p, q := decimal.MustDecimal(strconv.FormatInt(price, 10)), decimal.MustDecimal("0.5")
		mk := func(typ string, data any) domain.Event {
			e := domain.NewEvent(clock, typ, data)
			e.Actor = domain.ActorCore
			return e
		}
		batch = append(batch, domain.StreamAppend{Stream: domain.OrderStream(id), Expected: domain.NoStream, Events: []domain.Event{
			mk(domain.TypeOrderRequested, domain.OrderRequested{OrderID: id, Exchange: "binance", Pair: pairs[id%4], Side: side, Kind: domain.KindLimit, Amount: q, Price: p, ClientOrderID: fmt.Sprint("c", id)}),
			mk(domain.TypeOrderAccepted, domain.OrderAccepted{ExchangeOrderID: fmt.Sprint("x", id)}),
			mk(domain.TypeOrderFilled, domain.OrderFilled{FillID: fmt.Sprint("f", id), Price: p, Quantity: q, Fee: decimal.MustDecimal("0.05"), FeeAsset: "USDT"}),
		}})
		if len(batch) == chunk || id == first+int64(n)-1 {
			if _, err := store.AppendBatch(ctx, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
}
