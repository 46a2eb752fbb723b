package esdb_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore/esdb"
	"github.com/tradeledger/tradeledger/eventstore/esdb/esdbtest"
	"github.com/tradeledger/tradeledger/eventstore/storetest"
)

// These tests talk to esdbtest, an in-process protocol test double, over a
// real gRPC connection: not to EventStoreDB. TestConformanceServer runs the
// same suite against a real server when TRADELEDGER_TEST_ESDB is set.

func newDouble(t testing.TB) *esdbtest.Server {
	t.Helper()
	srv, err := esdbtest.NewServer()
	if err != nil {
		t.Fatalf("start test double: %v", err)
	}
	t.Cleanup(srv.Close)
	return srv
}

func openStore(t testing.TB, url string) *esdb.Store {
	t.Helper()
	s := esdb.NewStore(url)
	s.Logger = zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))
	s.ReconnectDelay = time.Millisecond
	s.MaxReconnectDelay = 20 * time.Millisecond
	if err := s.Open(); err != nil {
		t.Fatalf("open: %v", err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) domain.EventStore {
		return openStore(t, newDouble(t).URL())
	})
}

// Small pages make every iterator and the tail scan cross page borders.
func TestConformanceSmallPages(t *testing.T) {
	storetest.Run(t, func(t *testing.T) domain.EventStore {
		s := esdb.NewStore(newDouble(t).URL())
		s.Logger = zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))
		s.ReadBatchSize = 3
		s.IdempotencyDepth = 7
		if err := s.Open(); err != nil {
			t.Fatalf("open: %v", err)
		}
		return s
	})
}

func TestConformanceServer(t *testing.T) {
	url := os.Getenv("TRADELEDGER_TEST_ESDB")
	if url == "" {
		t.Skip("TRADELEDGER_TEST_ESDB not set (e.g. esdb://127.0.0.1:2113?tls=false): the suite against a real EventStoreDB/KurrentDB is skipped; TestConformance ran it against the protocol test double")
	}
	// A real server cannot be emptied between cases: each case gets a
	// namespace of its own, which to the store is an empty log.
	storetest.Run(t, func(t *testing.T) domain.EventStore {
		s := esdb.NewStore(url)
		s.Logger = zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))
		s.Namespace = fmt.Sprintf("conformance-%d-", time.Now().UnixNano())
		if err := s.Open(); err != nil {
			t.Fatalf("open: %v", err)
		}
		return s
	})
}

func collect(t *testing.T, it domain.EventIterator, n int) []domain.Event {
	t.Helper()
	var out []domain.Event
	for len(out) < n && it.Next() {
		out = append(out, it.Event())
	}
	if len(out) != n {
		t.Fatalf("got %d events, want %d (err %v)", len(out), n, it.Err())
	}
	return out
}

func sameEvents(t *testing.T, got, want []domain.Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d events, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].ID != want[i].ID || got[i].Position != want[i].Position || got[i].Hash != want[i].Hash {
			t.Fatalf("event %d = %s@%d, want %s@%d", i, got[i].ID, got[i].Position, want[i].ID, want[i].Position)
		}
	}
}

// A subscription the server drops mid-stream, again and again, resumes with
// no gap and no duplicate.
func TestSubscriptionDroppedMidStream(t *testing.T) {
	srv := newDouble(t)
	srv.DropAfter = 7
	s := openStore(t, srv.URL())
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i := 0; i < 20; i++ {
		if _, err := s.Append(ctx, fmt.Sprintf("d-%d", i%3), domain.Any, storetest.Event("D", i)); err != nil {
			t.Fatal(err)
		}
	}
	sub := s.Subscribe(ctx, 0)
	defer sub.Close()
	got := collect(t, sub, 10)
	// Live events while drops keep happening, and system events between.
	for i := 20; i < 50; i++ {
		if i%5 == 0 {
			srv.AppendSystem("$stats-node", "$statsCollected")
		}
		if _, err := s.Append(ctx, fmt.Sprintf("d-%d", i%3), domain.Any, storetest.Event("D", i)); err != nil {
			t.Fatal(err)
		}
	}
	got = append(got, collect(t, sub, 40)...)
	srv.DropSubscriptions()
	if _, err := s.Append(ctx, "d-x", domain.Any, storetest.Event("D", 50)); err != nil {
		t.Fatal(err)
	}
	got = append(got, collect(t, sub, 1)...)
	sameEvents(t, got, storetest.ReadAll(t, s.ReadAll(ctx, 0, 0)))
	if n := srv.Subscriptions(); n < 8 {
		t.Fatalf("server saw %d subscriptions, want ≥ 8: the drops did not happen", n)
	}
}

// A subscription from an inclusive position that is an event's position
// (not the one after a known event) starts exactly there.
func TestSubscribeFromExactPosition(t *testing.T) {
	srv := newDouble(t)
	ctx := context.Background()
	w := openStore(t, srv.URL())
	defer w.Close()
	var res []domain.AppendResult
	for i := 0; i < 10; i++ {
		srv.AppendSystem("$stats", "$statsCollected")
		r, err := w.Append(ctx, "x", domain.Any, storetest.Event("X", i))
		if err != nil {
			t.Fatal(err)
		}
		res = append(res, r)
	}
	// A fresh store knows no positions: it must find its start itself.
	for _, from := range []uint64{res[4].LastPosition, res[4].LastPosition - 1, res[3].LastPosition + 1} {
		r := openStore(t, srv.URL())
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		sub := r.Subscribe(ctx, from)
		got := collect(t, sub, 6)
		sub.Close()
		cancel()
		if got[0].Position != res[4].LastPosition || got[0].Version != 4 {
			t.Fatalf("Subscribe(%d) started at %d (v%d), want %d", from, got[0].Position, got[0].Version, res[4].LastPosition)
		}
		all := storetest.ReadAll(t, r.ReadAll(context.Background(), from, 0))
		if len(all) != 6 || all[0].Version != 4 {
			t.Fatalf("ReadAll(%d) = %d events from v%d", from, len(all), all[0].Version)
		}
		r.Close()
	}
}

// The store skips system events everywhere, and the head ignores them.
func TestSystemEventsSkipped(t *testing.T) {
	srv := newDouble(t)
	s := openStore(t, srv.URL())
	defer s.Close()
	ctx := context.Background()
	r, err := s.Append(ctx, "a", domain.NoStream, storetest.Event("A", 1))
	if err != nil {
		t.Fatal(err)
	}
	srv.AppendSystem("$stats-node", "$statsCollected")
	srv.AppendSystem("$ce-a", "$>")
	if h, err := s.Head(ctx); err != nil || h != r.LastPosition {
		t.Fatalf("Head = %d, %v; want %d", h, err, r.LastPosition)
	}
	if got := storetest.ReadAll(t, s.ReadAll(ctx, 0, 0)); len(got) != 1 || got[0].Stream != "a" {
		t.Fatalf("ReadAll = %+v", got)
	}
	if _, err := s.Append(ctx, "$stats-node", domain.Any, storetest.Event("A", 2)); domain.ErrorCode(err) != domain.EINVALID {
		t.Fatalf("append to a system stream: %v, want EINVALID", err)
	}
}

// An unreachable server fails appends with EUNAVAILABLE; once it is back,
// the same Store works again and a running subscription resumes.
func TestUnavailableAndReconnect(t *testing.T) {
	srv := newDouble(t)
	s := esdb.NewStore(srv.URL() + "&maxDiscoverAttempts=2&discoveryInterval=10&gossipTimeout=1")
	s.Logger = zaptest.NewLogger(t, zaptest.Level(zap.ErrorLevel+1))
	s.ReconnectDelay, s.MaxReconnectDelay = time.Millisecond, 20*time.Millisecond
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	first, err := s.Append(ctx, "u", domain.NoStream, storetest.Event("U", 0))
	if err != nil {
		t.Fatal(err)
	}
	sub := s.Subscribe(ctx, 0)
	defer sub.Close()
	collect(t, sub, 1)

	srv.Stop()
	for i := 0; i < 2; i++ { // the first call may still see the old connection die
		_, err = s.Append(ctx, "u", domain.ExpectedVersion(0), storetest.Event("U", 1))
		if domain.ErrorCode(err) != domain.EUNAVAILABLE {
			t.Fatalf("append while down: err = %v, want EUNAVAILABLE", err)
		}
	}
	if _, err := s.Head(ctx); domain.ErrorCode(err) != domain.EUNAVAILABLE {
		t.Fatalf("Head while down: err = %v, want EUNAVAILABLE", err)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	var second domain.AppendResult
	for i := 0; ; i++ { // the client may need a discovery round to come back
		second, err = s.Append(ctx, "u", domain.ExpectedVersion(0), storetest.Event("U", 1))
		if err == nil {
			break
		}
		if domain.ErrorCode(err) != domain.EUNAVAILABLE || i > 100 {
			t.Fatalf("append after restart: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if second.LastPosition <= first.LastPosition {
		t.Fatalf("positions after restart: %d after %d", second.LastPosition, first.LastPosition)
	}
	got := collect(t, sub, 1)
	if got[0].Version != 1 {
		t.Fatalf("subscription resumed at version %d, want 1", got[0].Version)
	}
}

// The hash chain and every envelope field survive the trip through the
// server, including ids that are not UUIDs.
func TestEnvelopeRoundTrip(t *testing.T) {
	s := openStore(t, newDouble(t).URL())
	defer s.Close()
	ctx := context.Background()
	e := storetest.Event("T", 1)
	e.ID = "import-0001"
	e.Actor, e.Correlation = "cli", "corr-ü"
	e.Data = []byte(`{ "n" : 1 }`)
	if _, err := s.Append(ctx, "rt", domain.NoStream, e); err != nil {
		t.Fatal(err)
	}
	got := storetest.ReadAll(t, s.ReadStream(ctx, "rt", 0, 0))
	if len(got) != 1 {
		t.Fatalf("read %d events", len(got))
	}
	g := got[0]
	if g.ID != e.ID || g.Actor != "cli" || g.Correlation != "corr-ü" || string(g.Data) != `{"n":1}` || g.Time != e.Time || g.Schema != 1 {
		t.Fatalf("event = %+v", g)
	}
	if domain.ComputeHash(&g) != g.Hash {
		t.Fatalf("hash does not verify")
	}
	// The retry of a non-UUID id is recognised too.
	if _, err := s.Append(ctx, "rt", domain.NoStream, e); err != nil {
		t.Fatalf("retry: %v", err)
	}
}

func TestParseURL(t *testing.T) {
	for _, c := range []struct {
		url string
		ok  bool
	}{
		{"esdb://127.0.0.1:2113?tls=false", true},
		{"kurrentdb://admin:changeit@node1:2113,node2:2113,node3:2113?tlsVerifyCert=false", true},
		{"kurrentdb+discover://admin:changeit@cluster.local:2113", true},
		{"postgres://x", false},
		{"esdb://admin:secretpw@host:2113/path", false},
	} {
		_, err := esdb.ParseURL(c.url)
		if (err == nil) != c.ok {
			t.Fatalf("ParseURL(%q) err = %v, want ok=%v", c.url, err, c.ok)
		}
		if err != nil && errors.Is(err, err) && containsPassword(err.Error()) {
			t.Fatalf("error repeats the password: %v", err)
		}
	}
}

func containsPassword(s string) bool {
	for i := 0; i+8 <= len(s); i++ {
		if s[i:i+8] == "secretpw" {
			return true
		}
	}
	return false
}
