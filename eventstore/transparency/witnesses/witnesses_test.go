package witnesses_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
	"github.com/tradeledger/tradeledger/eventstore/sqlite/sqlitetest"
	"github.com/tradeledger/tradeledger/eventstore/transparency"
	"github.com/tradeledger/tradeledger/eventstore/transparency/cosign"
	"github.com/tradeledger/tradeledger/eventstore/transparency/witness"
	"github.com/tradeledger/tradeledger/eventstore/transparency/witnesses"
)

// env is a log on an embedded store whose events are applied to its
// transparency.Log as they are written (the runner's part, in small).
type env struct {
	t     testing.TB
	ctx   context.Context
	store *sqlite.Store
	key   *transparency.Key
	skey  string
	clock *domain.ManualClock
	log   *transparency.Log
	cmds  *eventstore.Commands

	mu      sync.Mutex
	applied uint64
}

func newEnv(t *testing.T, skey string) *env { return newEnvTB(t, skey) }

func newEnvTB(t testing.TB, skey string) *env {
	s := sqlitetest.Open(t)
	if skey == "" {
		var err error
		if skey, err = transparency.GenerateKey(nil); err != nil {
			t.Fatal(err)
		}
	}
	key, err := transparency.ParseKey(skey)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, ctx: eventstore.WithActor(context.Background(), domain.ActorCore), store: s, key: key, skey: skey,
		clock: domain.NewManualClock(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))}
	e.log = transparency.NewLog(s, s, key, e.clock)
	e.cmds = eventstore.NewCommands(s, e)
	e.log.Commands = e.cmds
	return e
}

// WaitFor implements eventstore.Waiter: it applies the events up to pos.
func (e *env) WaitFor(ctx context.Context, pos uint64) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	it := e.store.ReadAll(ctx, e.applied+1, 0)
	defer it.Close()
	for it.Next() && e.applied < pos {
		ev := it.Event()
		if err := e.log.Apply(&ev); err != nil {
			return err
		}
		e.applied = ev.Position
	}
	return it.Err()
}

func (e *env) grow(n int, tag string) {
	for i := 0; i < n; i++ {
		ev := domain.NewEvent(e.clock, "Tick", map[string]any{"tag": tag, "i": i})
		if _, err := e.store.Append(e.ctx, fmt.Sprintf("s-%s-%d", tag, i%3), domain.Any, ev); err != nil {
			e.t.Fatal(err)
		}
	}
}

func (e *env) checkpoint() domain.CheckpointSigned {
	c, _, err := e.log.Issue(e.ctx, true)
	if err != nil {
		e.t.Fatal(err)
	}
	head, _ := e.store.Head(e.ctx)
	e.WaitFor(e.ctx, head)
	return c
}

func ourWitness(t testing.TB, name string, logKey string) (*witness.Witness, witnesses.Witness, *atomic.Int64) {
	w, err := witness.Open(t.TempDir(), name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddLog(context.Background(), "", logKey); err != nil {
		t.Fatal(err)
	}
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.ServeHTTP(rw, r)
	}))
	t.Cleanup(func() { srv.Close(); w.Close() })
	ww, err := witnesses.ParseWitness(w.VerifierKey() + " " + srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return w, ww, &requests
}

func TestCosignaturesJoinTheNote(t *testing.T) {
	e := newEnv(t, "")
	_, w1, _ := ourWitness(t, "witness.test/one", e.key.VerifierKey())
	_, w2, _ := ourWitness(t, "witness.test/two", e.key.VerifierKey())
	c := witnesses.New(e.log, []witnesses.Witness{w1, w2}, e.cmds, e.clock)
	e.grow(10, "a")
	e.checkpoint()
	if st := c.Status(); st.Missing != 2 || st.Cosigned != 0 {
		t.Fatalf("before: %+v", st)
	}
	c.Tick(e.ctx)
	latest, _ := e.log.Latest()
	got, err := cosign.Quorum([]byte(latest.Note), []*cosign.Verifier{w1.Verifier, w2.Verifier}, 0)
	if err != nil || len(got) != 2 {
		t.Fatalf("served note %q: %v", latest.Note, err)
	}
	if _, err := transparency.OpenCheckpoint([]byte(latest.Note), e.key.VerifierKey()); err != nil {
		t.Fatalf("the log's signature with the cosignatures: %v", err)
	}
	st := c.Status()
	if st.Missing != 0 || st.Cosigned != 2 || st.Witnesses[0].Size != latest.Size || !st.Witnesses[1].Current {
		t.Fatalf("after: %+v", st)
	}
	// The checkpoints stream holds one CheckpointCosigned per witness, and
	// no new checkpoint is due for them (the log grew by its own events).
	if issued, err := e.log.Tick(e.ctx); err != nil || issued {
		t.Fatalf("Tick after the cosignatures issued=%v err=%v, want nothing new", issued, err)
	}
	// A log reopened reads the cosignatures back.
	again := transparency.NewLog(e.store, e.store, e.key, e.clock)
	if err := again.Open(e.ctx); err != nil {
		t.Fatal(err)
	}
	if reopened, _ := again.Latest(); reopened.Note != latest.Note {
		t.Fatalf("reopened note %q, want %q", reopened.Note, latest.Note)
	}

	// The log grows: the next checkpoint goes with a consistency proof.
	e.grow(7, "b")
	e.checkpoint()
	c.Tick(e.ctx)
	if st := c.Status(); st.Cosigned != 2 || st.Witnesses[0].Size != 10+1+2+7 { // the first checkpoint, its event, the cosignatures, the growth
		t.Fatalf("second checkpoint: %+v", st)
	}
}

// TestConflictFollowed: a client that does not know what the witness
// holds sends old 0, is told the size (409) and goes on from it.
func TestConflictFollowed(t *testing.T) {
	e := newEnv(t, "")
	_, w1, requests := ourWitness(t, "witness.test/one", e.key.VerifierKey())
	e.grow(5, "a")
	e.checkpoint()
	witnesses.New(e.log, []witnesses.Witness{w1}, e.cmds, e.clock).Tick(e.ctx)
	e.grow(5, "b")
	e.checkpoint()
	// A Log that learnt nothing of the witnesses (opened, not replayed).
	fresh := transparency.NewLog(e.store, e.store, e.key, e.clock)
	if err := fresh.Open(e.ctx); err != nil {
		t.Fatal(err)
	}
	if len(fresh.Witnesses()) != 0 {
		t.Fatal("a log opened without a replay knows the witnesses")
	}
	requests.Store(0)
	c := witnesses.New(fresh, []witnesses.Witness{w1}, e.cmds, e.clock)
	c.Tick(e.ctx)
	if n := requests.Load(); n != 2 {
		t.Fatalf("%d requests, want 2 (old 0 → 409, then from its size)", n)
	}
	if latest, _ := e.log.Latest(); !strings.Contains(latest.Note, "— witness.test/one ") {
		t.Fatalf("not cosigned after the 409: %q", latest.Note)
	}
}

// TestDownWitnessBacksOff: a witness that does not answer is retried
// after waits that double, with jitter, on the injected clock.
func TestDownWitnessBacksOff(t *testing.T) {
	e := newEnv(t, "")
	var down atomic.Bool
	down.Store(true)
	var requests atomic.Int64
	_, w1, _ := ourWitness(t, "witness.test/one", e.key.VerifierKey())
	target := w1.URL
	proxy := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if down.Load() {
			http.Error(rw, "maintenance", http.StatusServiceUnavailable)
			return
		}
		r2, _ := http.NewRequest(r.Method, target+r.URL.Path, r.Body)
		res, err := http.DefaultClient.Do(r2)
		if err != nil {
			http.Error(rw, err.Error(), http.StatusBadGateway)
			return
		}
		defer res.Body.Close()
		rw.Header().Set("Content-Type", res.Header.Get("Content-Type"))
		rw.WriteHeader(res.StatusCode)
		b, _ := io.ReadAll(res.Body)
		rw.Write(b)
	}))
	defer proxy.Close()
	w1.URL = proxy.URL
	c := witnesses.New(e.log, []witnesses.Witness{w1}, e.cmds, e.clock)
	c.Jitter = func() float64 { return 0.5 }
	e.grow(3, "a")
	e.checkpoint()
	start := e.clock.Now()
	c.Tick(e.ctx)
	st := c.Status().Witnesses[0]
	if !strings.Contains(st.Error, "503") || st.NextAttempt.Sub(start) != 750*time.Millisecond {
		t.Fatalf("after one failure: error %q, next in %s, want 503 and 750ms (1s, half of it jittered)", st.Error, st.NextAttempt.Sub(start))
	}
	c.Tick(e.ctx) // not due yet
	if requests.Load() != 1 {
		t.Fatalf("%d requests before the wait was over", requests.Load())
	}
	e.clock.Advance(750 * time.Millisecond)
	c.Tick(e.ctx)
	if st := c.Status().Witnesses[0]; requests.Load() != 2 || st.NextAttempt.Sub(e.clock.Now()) != 1500*time.Millisecond {
		t.Fatalf("second failure: %d requests, next in %s, want 2 and 1.5s", requests.Load(), st.NextAttempt.Sub(e.clock.Now()))
	}
	down.Store(false)
	e.clock.Advance(1500 * time.Millisecond)
	c.Tick(e.ctx)
	if st := c.Status(); st.Cosigned != 1 || st.Witnesses[0].Error != "" {
		t.Fatalf("once up: %+v", st)
	}
}

// TestForkRefused: the same key signs a second log (a copy grown
// otherwise): the witness that cosigned the first refuses it, which is
// recorded once, and not sent again until the next checkpoint.
func TestForkRefused(t *testing.T) {
	a := newEnv(t, "")
	b := newEnv(t, a.skey)
	_, w1, requests := ourWitness(t, "witness.test/one", a.key.VerifierKey())
	a.grow(12, "a")
	a.checkpoint()
	witnesses.New(a.log, []witnesses.Witness{w1}, a.cmds, a.clock).Tick(a.ctx)

	b.grow(15, "b")
	cp := b.checkpoint()
	var errs []string
	cb := witnesses.New(b.log, []witnesses.Witness{w1}, b.cmds, b.clock)
	cb.OnError = func(_ witnesses.Witness, err error) { errs = append(errs, err.Error()) }
	requests.Store(0)
	cb.Tick(b.ctx)
	st := cb.Status()
	r := st.Witnesses[0].Refused
	if r == nil || r.Size != cp.Size || r.WitnessSize != 12 || r.Status != http.StatusUnprocessableEntity || st.Cosigned != 0 || st.Missing != 1 {
		t.Fatalf("status %+v, refusal %+v", st, r)
	}
	if len(errs) != 1 || !strings.Contains(errs[0], "REFUSED") {
		t.Fatalf("errors heard: %q", errs)
	}
	cb.Tick(b.ctx)
	if n := requests.Load(); n != 2 { // 409 (12), then the proof refused
		t.Fatalf("%d requests, want 2: a refused checkpoint is not sent again", n)
	}
	it := b.store.ReadStream(b.ctx, domain.StreamCheckpoints, 0, 0)
	refusals := 0
	for it.Next() {
		if it.Event().Type == domain.TypeWitnessRefused {
			refusals++
		}
	}
	it.Close()
	if refusals != 1 {
		t.Fatalf("%d WitnessRefused events, want 1", refusals)
	}
	// A log cut below what the witness holds: refused as well.
	c := newEnv(t, a.skey)
	c.grow(2, "c")
	c.checkpoint()
	cc := witnesses.New(c.log, []witnesses.Witness{w1}, c.cmds, c.clock)
	cc.Tick(c.ctx)
	if r := cc.Status().Witnesses[0].Refused; r == nil || r.WitnessSize != 12 || r.Status != http.StatusConflict {
		t.Fatalf("cut log: refusal %+v", r)
	}
}

// TestBadCosignatureNotRecorded: an answer whose cosignature does not
// verify with the witness's key is a failure, and nothing is recorded.
func TestBadCosignatureNotRecorded(t *testing.T) {
	e := newEnv(t, "")
	impostor, _, _ := ourWitness(t, "witness.test/one", e.key.VerifierKey())
	_, real, _ := ourWitness(t, "witness.test/one", e.key.VerifierKey())
	srv := httptest.NewServer(impostor)
	defer srv.Close()
	real.URL = srv.URL // the right key, another witness answering
	c := witnesses.New(e.log, []witnesses.Witness{real}, e.cmds, e.clock)
	e.grow(3, "a")
	e.checkpoint()
	c.Tick(e.ctx)
	st := c.Status()
	if st.Cosigned != 0 || st.Witnesses[0].Error == "" {
		t.Fatalf("status %+v", st)
	}
	if latest, _ := e.log.Latest(); strings.Contains(latest.Note, "witness.test/one") {
		t.Fatal("a cosignature by another key joined the note")
	}
}
