// Package storetest is the conformance suite for domain.EventStore: one
// table of cases that every store (embedded SQLite, EventStoreDB, …) must
// pass. A store's tests call Run with a function that opens a fresh, empty
// store.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
)

// OpenFunc returns a fresh, empty store; the suite closes it.
type OpenFunc func(t *testing.T) domain.EventStore

var clock = domain.NewManualClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))

// Run runs every conformance case against stores from open.
func Run(t *testing.T, open OpenFunc) {
	cases := []struct {
		name string
		fn   func(t *testing.T, s domain.EventStore)
	}{
		{"AppendAndReadStream", testAppendAndReadStream},
		{"ExpectedVersion", testExpectedVersion},
		{"IdempotentRetry", testIdempotentRetry},
		{"ConcurrentAppendersOneStream", testConcurrentAppendersOneStream},
		{"ReadAllFromMiddle", testReadAllFromMiddle},
		{"SubscribeOrderUnderConcurrentWrites", testSubscribeOrder},
		{"SubscribeSlowConsumer", testSubscribeSlowConsumer},
		{"HashChain", testHashChain},
		{"HeadAndEmptyReads", testHeadAndEmptyReads},
		{"InvalidAppends", testInvalidAppends},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := open(t)
			defer s.Close()
			c.fn(t, s)
		})
	}
}

// Event returns a test event of type typ with payload {"n":n}.
func Event(typ string, n int) domain.Event {
	return domain.NewEvent(clock, typ, map[string]int{"n": n})
}

// ReadAll collects an iterator's events, failing the test on error.
func ReadAll(t testing.TB, it domain.EventIterator) []domain.Event {
	t.Helper()
	defer it.Close()
	var out []domain.Event
	for it.Next() {
		out = append(out, it.Event())
	}
	if err := it.Err(); err != nil {
		t.Fatalf("iterate: %v", err)
	}
	return out
}

func mustAppend(t *testing.T, s domain.EventStore, stream string, exp domain.ExpectedVersion, evs ...domain.Event) domain.AppendResult {
	t.Helper()
	res, err := s.Append(context.Background(), stream, exp, evs...)
	if err != nil {
		t.Fatalf("append %s: %v", stream, err)
	}
	return res
}

func testAppendAndReadStream(t *testing.T, s domain.EventStore) {
	ctx := context.Background()
	e1, e2, e3 := Event("A", 1), Event("B", 2), Event("C", 3)
	e1.Actor, e1.Correlation = "alice", "req-1"
	r := mustAppend(t, s, "s-1", domain.NoStream, e1, e2)
	if r.FirstVersion != 0 || r.LastVersion != 1 {
		t.Fatalf("result versions = %d..%d, want 0..1", r.FirstVersion, r.LastVersion)
	}
	r2 := mustAppend(t, s, "s-1", domain.ExpectedVersion(1), e3)
	if r2.FirstVersion != 2 || r2.LastPosition <= r.LastPosition {
		t.Fatalf("second append = %+v after %+v", r2, r)
	}
	got := ReadAll(t, s.ReadStream(ctx, "s-1", 0, 0))
	if len(got) != 3 {
		t.Fatalf("read %d events, want 3", len(got))
	}
	for i, want := range []domain.Event{e1, e2, e3} {
		g := got[i]
		if g.ID != want.ID || g.Type != want.Type || g.Version != int64(i) || g.Stream != "s-1" || string(g.Data) != string(want.Data) || g.Time != want.Time || g.Actor != want.Actor || g.Correlation != want.Correlation || g.Schema != want.Schema {
			t.Fatalf("event %d = %+v, want %+v", i, g, want)
		}
	}
	if got[2].Position != r2.LastPosition {
		t.Fatalf("position = %d, want %d", got[2].Position, r2.LastPosition)
	}
	if got := ReadAll(t, s.ReadStream(ctx, "s-1", 1, 1)); len(got) != 1 || got[0].ID != e2.ID {
		t.Fatalf("ReadStream(from 1, max 1) = %v", got)
	}
}

func testExpectedVersion(t *testing.T, s domain.EventStore) {
	ctx := context.Background()
	conflict := func(stream string, exp domain.ExpectedVersion) {
		t.Helper()
		_, err := s.Append(ctx, stream, exp, Event("X", 0))
		if domain.ErrorCode(err) != domain.ECONFLICT {
			t.Fatalf("append %s expecting %v: err = %v, want ECONFLICT", stream, exp, err)
		}
	}
	conflict("v", domain.StreamExists)
	conflict("v", domain.ExpectedVersion(0))
	mustAppend(t, s, "v", domain.NoStream, Event("A", 1))
	conflict("v", domain.NoStream)
	conflict("v", domain.ExpectedVersion(1))
	mustAppend(t, s, "v", domain.StreamExists, Event("B", 2))
	mustAppend(t, s, "v", domain.ExpectedVersion(1), Event("C", 3))
	mustAppend(t, s, "v", domain.Any, Event("D", 4))
	mustAppend(t, s, "w", domain.Any, Event("E", 5))
	if got := ReadAll(t, s.ReadStream(ctx, "v", 0, 0)); len(got) != 4 {
		t.Fatalf("stream v has %d events, want 4 (conflicts must write nothing)", len(got))
	}
}

func testIdempotentRetry(t *testing.T, s domain.EventStore) {
	ctx := context.Background()
	e1, e2 := Event("A", 1), Event("B", 2)
	first := mustAppend(t, s, "idem", domain.NoStream, e1, e2)
	mustAppend(t, s, "idem", domain.Any, Event("C", 3))
	// The retry carries the same ids and the original expectation.
	again, err := s.Append(ctx, "idem", domain.NoStream, e1, e2)
	if err != nil {
		t.Fatalf("retry: %v", err)
	}
	if again != first {
		t.Fatalf("retry result = %+v, want %+v", again, first)
	}
	// A retry whose expectation still holds (Any) is a retry all the same.
	if again, err = s.Append(ctx, "idem", domain.Any, e1, e2); err != nil || again != first {
		t.Fatalf("retry with Any = %+v, %v; want %+v", again, err, first)
	}
	if got := ReadAll(t, s.ReadStream(ctx, "idem", 0, 0)); len(got) != 3 {
		t.Fatalf("stream has %d events after retry, want 3", len(got))
	}
	// The same id in another stream is not a retry.
	if _, err := s.Append(ctx, "other", domain.Any, e1); domain.ErrorCode(err) != domain.ECONFLICT {
		t.Fatalf("same id in another stream: err = %v, want ECONFLICT", err)
	}
}

func testConcurrentAppendersOneStream(t *testing.T, s domain.EventStore) {
	ctx := context.Background()
	const writers, rounds = 8, 10
	wins := make([]int, rounds)
	var mu sync.Mutex
	for v := 0; v < rounds; v++ {
		exp := domain.NoStream
		if v > 0 {
			exp = domain.ExpectedVersion(v - 1)
		}
		var wg sync.WaitGroup
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				_, err := s.Append(ctx, "race", exp, Event("W", w))
				switch domain.ErrorCode(err) {
				case "":
					mu.Lock()
					wins[v]++
					mu.Unlock()
				case domain.ECONFLICT:
				default:
					t.Errorf("append: %v", err)
				}
			}(w)
		}
		wg.Wait()
	}
	for v, n := range wins {
		if n != 1 {
			t.Fatalf("version %d had %d winners, want exactly 1", v, n)
		}
	}
	if got := ReadAll(t, s.ReadStream(ctx, "race", 0, 0)); len(got) != rounds {
		t.Fatalf("stream has %d events, want %d", len(got), rounds)
	}
}

func testReadAllFromMiddle(t *testing.T, s domain.EventStore) {
	ctx := context.Background()
	var positions []uint64
	for i := 0; i < 20; i++ {
		r := mustAppend(t, s, fmt.Sprintf("m-%d", i%3), domain.Any, Event("M", i))
		positions = append(positions, r.LastPosition)
	}
	all := ReadAll(t, s.ReadAll(ctx, 0, 0))
	if len(all) != 20 {
		t.Fatalf("ReadAll = %d events, want 20", len(all))
	}
	for i := 1; i < len(all); i++ {
		if all[i].Position <= all[i-1].Position {
			t.Fatalf("positions not increasing at %d: %d after %d", i, all[i].Position, all[i-1].Position)
		}
	}
	mid := ReadAll(t, s.ReadAll(ctx, positions[10], 0))
	if len(mid) != 10 || mid[0].Position != positions[10] {
		t.Fatalf("ReadAll from %d = %d events starting %v", positions[10], len(mid), mid)
	}
	if got := ReadAll(t, s.ReadAll(ctx, positions[10], 3)); len(got) != 3 {
		t.Fatalf("ReadAll max 3 = %d events", len(got))
	}
}

func testSubscribeOrder(t *testing.T, s domain.EventStore) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// Some events before the subscription, the rest while it runs.
	for i := 0; i < 10; i++ {
		mustAppend(t, s, "pre", domain.Any, Event("P", i))
	}
	sub := s.Subscribe(ctx, 0)
	defer sub.Close()
	const writers, per = 8, 25
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < per; i++ {
				if _, err := s.Append(ctx, fmt.Sprintf("live-%d", w), domain.Any, Event("L", i)); err != nil {
					t.Errorf("append: %v", err)
					return
				}
			}
		}(w)
	}
	total := 10 + writers*per
	var got []domain.Event
	for len(got) < total && sub.Next() {
		got = append(got, sub.Event())
	}
	wg.Wait()
	if len(got) != total {
		t.Fatalf("subscription delivered %d events, want %d (err %v)", len(got), total, sub.Err())
	}
	all := ReadAll(t, s.ReadAll(context.Background(), 0, 0))
	for i := range all {
		if got[i].ID != all[i].ID || got[i].Position != all[i].Position {
			t.Fatalf("subscription event %d = %s@%d, log has %s@%d", i, got[i].ID, got[i].Position, all[i].ID, all[i].Position)
		}
	}
	// Per stream, versions arrive in order.
	last := map[string]int64{}
	for _, e := range got {
		if v, ok := last[e.Stream]; ok && e.Version != v+1 {
			t.Fatalf("stream %s: version %d after %d", e.Stream, e.Version, v)
		}
		last[e.Stream] = e.Version
	}
	cancel()
	if sub.Next() {
		t.Fatalf("Next after cancel returned an event")
	}
	if !errors.Is(sub.Err(), context.Canceled) {
		t.Fatalf("Err after cancel = %v, want context.Canceled", sub.Err())
	}
}

func testSubscribeSlowConsumer(t *testing.T, s domain.EventStore) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	r := mustAppend(t, s, "slow", domain.Any, Event("S", 0))
	sub := s.Subscribe(ctx, r.LastPosition) // from an exact position, inclusive
	defer sub.Close()
	if !sub.Next() || sub.Event().Position != r.LastPosition {
		t.Fatalf("first event = %+v, want position %d", sub.Event(), r.LastPosition)
	}
	// The consumer stalls while many commits happen (200 appends of 15
	// events: more than a store's read batch, few enough round trips for a
	// remote store under the race detector).
	const n, per = 3000, 15
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 1; i <= n; i += per {
			evs := make([]domain.Event, per)
			for j := range evs {
				evs[j] = Event("S", i+j)
			}
			if _, err := s.Append(ctx, "slow", domain.Any, evs...); err != nil {
				t.Errorf("append: %v", err)
				return
			}
		}
	}()
	wg.Wait()
	for i := 1; i <= n; i++ {
		if !sub.Next() {
			t.Fatalf("subscription ended at %d: %v", i, sub.Err())
		}
		if v := sub.Event().Version; v != int64(i) {
			t.Fatalf("event %d has version %d", i, v)
		}
	}
}

func testHashChain(t *testing.T, s domain.EventStore) {
	ctx := context.Background()
	for i := 0; i < 5; i++ {
		mustAppend(t, s, "chain", domain.Any, Event("H", i), Event("H2", i))
		mustAppend(t, s, "other-chain", domain.Any, Event("O", i))
	}
	for _, stream := range []string{"chain", "other-chain"} {
		evs := ReadAll(t, s.ReadStream(ctx, stream, 0, 0))
		var prev domain.Hash
		for _, e := range evs {
			if e.PrevHash != prev {
				t.Fatalf("%s/%d prevHash = %s, want %s", stream, e.Version, e.PrevHash, prev)
			}
			if h := domain.ComputeHash(&e); h != e.Hash {
				t.Fatalf("%s/%d hash = %s, recomputed %s", stream, e.Version, e.Hash, h)
			}
			prev = e.Hash
		}
	}
	// ReadAll returns the same hashes as ReadStream.
	byID := map[string]domain.Hash{}
	for _, e := range ReadAll(t, s.ReadAll(ctx, 0, 0)) {
		byID[e.ID] = e.Hash
	}
	for _, e := range ReadAll(t, s.ReadStream(ctx, "chain", 0, 0)) {
		if byID[e.ID] != e.Hash {
			t.Fatalf("ReadAll and ReadStream disagree on %s", e.ID)
		}
	}
}

func testHeadAndEmptyReads(t *testing.T, s domain.EventStore) {
	ctx := context.Background()
	if h, err := s.Head(ctx); err != nil || h != 0 {
		t.Fatalf("empty Head = %d, %v", h, err)
	}
	if got := ReadAll(t, s.ReadStream(ctx, "nothing", 0, 0)); len(got) != 0 {
		t.Fatalf("missing stream read %d events", len(got))
	}
	if got := ReadAll(t, s.ReadAll(ctx, 0, 0)); len(got) != 0 {
		t.Fatalf("empty log read %d events", len(got))
	}
	var last uint64
	for i := 0; i < 3; i++ {
		last = mustAppend(t, s, "h", domain.Any, Event("A", i)).LastPosition
	}
	if h, err := s.Head(ctx); err != nil || h != last {
		t.Fatalf("Head = %d, %v; want %d", h, err, last)
	}
	if got := ReadAll(t, s.ReadAll(ctx, last+1, 0)); len(got) != 0 {
		t.Fatalf("read past head returned %d events", len(got))
	}
}

func testInvalidAppends(t *testing.T, s domain.EventStore) {
	ctx := context.Background()
	bad := Event("A", 1)
	bad.Data = []byte("{not json")
	noID := Event("A", 1)
	noID.ID = ""
	dup := Event("A", 1)
	for name, evs := range map[string][]domain.Event{
		"no events": nil,
		"bad json":  {bad},
		"no id":     {noID},
		"dup ids":   {dup, dup},
	} {
		if _, err := s.Append(ctx, "bad", domain.Any, evs...); domain.ErrorCode(err) != domain.EINVALID {
			t.Fatalf("%s: err = %v, want EINVALID", name, err)
		}
	}
	if got := ReadAll(t, s.ReadStream(ctx, "bad", 0, 0)); len(got) != 0 {
		t.Fatalf("invalid appends wrote %d events", len(got))
	}
}
