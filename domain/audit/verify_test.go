package audit_test

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/audit"
)

// chainLog builds a log the way a store does: per-stream versions and hash
// chains, increasing positions. streams lists each event's stream in log
// order.
func chainLog(t *testing.T, streams ...string) []domain.Event {
	t.Helper()
	clock := domain.NewManualClock(time.UnixMilli(1_700_000_000_000))
	type head struct {
		version int64
		hash    domain.Hash
	}
	heads := map[string]head{}
	var log []domain.Event
	for i, s := range streams {
		e := domain.NewEvent(clock, "Tested", map[string]int{"n": i})
		h, ok := heads[s]
		if !ok {
			h.version = -1
		}
		e.Stream, e.Version, e.Position, e.PrevHash, e.Actor = s, h.version+1, uint64(10+2*i), h.hash, "test"
		e.Hash = domain.ComputeHash(&e)
		heads[s] = head{e.Version, e.Hash}
		log = append(log, e)
		clock.Advance(time.Millisecond)
	}
	return log
}

func verifyAll(log []domain.Event) audit.VerifySummary {
	v := audit.NewVerifier()
	for i := range log {
		v.Add(&log[i])
	}
	return v.Summary(true)
}

func rehash(e *domain.Event) { e.Hash = domain.ComputeHash(e) }

func TestVerifierSoundLog(t *testing.T) {
	log := chainLog(t, "a", "b", "a", "c", "a", "b")
	s := verifyAll(log)
	if !s.OK || s.Fault != nil {
		t.Fatalf("sound log: fault %v", s.Fault)
	}
	if got, want := s.Events, int64(6); got != want {
		t.Fatalf("events=%d, want %d", got, want)
	}
	if got, want := s.Streams, 3; got != want {
		t.Fatalf("streams=%d, want %d", got, want)
	}
	if got, want := s.LastPosition, log[5].Position; got != want {
		t.Fatalf("lastPosition=%d, want %d", got, want)
	}
	wantHeads := []audit.StreamHead{{"a", 2, log[4].Hash}, {"b", 1, log[5].Hash}, {"c", 0, log[3].Hash}}
	if len(s.Heads) != len(wantHeads) {
		t.Fatalf("heads=%v, want %v", s.Heads, wantHeads)
	}
	for i := range wantHeads {
		if s.Heads[i] != wantHeads[i] {
			t.Fatalf("head %d=%v, want %v", i, s.Heads[i], wantHeads[i])
		}
	}
	// The digest is defined over sorted "stream\x00hex\n" lines.
	var text strings.Builder
	for _, h := range wantHeads {
		text.WriteString(h.Stream + "\x00" + h.Hash.String() + "\n")
	}
	if got, want := s.HeadsDigest, domain.Hash(sha256.Sum256([]byte(text.String()))); got != want {
		t.Fatalf("digest=%s, want %s", got, want)
	}
	// Heads out of order give the same digest.
	rev := []audit.StreamHead{wantHeads[2], wantHeads[0], wantHeads[1]}
	if got := audit.HeadsDigest(rev); got != s.HeadsDigest {
		t.Fatalf("digest of unsorted heads=%s, want %s", got, s.HeadsDigest)
	}
	if rev[0].Stream != "c" {
		t.Fatal("HeadsDigest sorted its argument in place")
	}
	if s2 := audit.NewVerifier().Summary(false); !s2.OK || s2.Heads != nil || s2.Events != 0 {
		t.Fatalf("empty log summary=%+v", s2)
	}
}

func TestVerifierFaults(t *testing.T) {
	// Each case damages a sound log of streams a,b,a,a,b and names the
	// index of the first event that must be reported, and a word of the
	// problem.
	cases := []struct {
		name    string
		damage  func(log []domain.Event) []domain.Event
		bad     int
		problem string
		faults  int64 // faulty events in the whole log
	}{
		{"edited data", func(l []domain.Event) []domain.Event {
			l[2].Data = json.RawMessage(`{"n":99}`)
			return l
		}, 2, "edited", 1},
		{"edited actor", func(l []domain.Event) []domain.Event {
			l[3].Actor = "mallory"
			return l
		}, 3, "edited", 1},
		{"edited time", func(l []domain.Event) []domain.Event {
			l[1].Time++
			return l
		}, 1, "edited", 1},
		{"deleted in the middle", func(l []domain.Event) []domain.Event {
			return append(l[:2:2], l[3:]...) // a@1 gone: a@2 skips ahead
		}, 2, "skips ahead", 1},
		{"deleted first of stream", func(l []domain.Event) []domain.Event {
			return l[1:] // a@0 gone
		}, 1, "skips ahead", 1},
		{"reordered in stream", func(l []domain.Event) []domain.Event {
			l[2], l[3] = l[3], l[2]
			l[2].Position, l[3].Position = l[3].Position, l[2].Position
			return l
		}, 2, "skips ahead", 2},
		{"versions swapped", func(l []domain.Event) []domain.Event {
			l[2].Version, l[3].Version = l[3].Version, l[2].Version
			return l
		}, 2, "skips ahead", 2},
		{"data swapped", func(l []domain.Event) []domain.Event {
			l[2].Data, l[3].Data = l[3].Data, l[2].Data
			return l
		}, 2, "edited", 2},
		{"forged re-hash in the middle", func(l []domain.Event) []domain.Event {
			l[2].Data = json.RawMessage(`{"n":99}`)
			rehash(&l[2])
			return l
		}, 3, "chain broken", 1},
		{"duplicated event", func(l []domain.Event) []domain.Event {
			d := l[2]
			d.Position = l[4].Position + 2
			return append(l, d)
		}, 5, "repeats", 1},
		{"id reused in another stream", func(l []domain.Event) []domain.Event {
			l[4].ID = l[0].ID
			rehash(&l[4]) // b@1 is chained correctly, only its id is reused
			return l
		}, 4, "id appears earlier", 1},
		{"position goes back", func(l []domain.Event) []domain.Event {
			l[3].Position = l[1].Position
			return l
		}, 3, "position", 1},
		{"time goes back in stream", func(l []domain.Event) []domain.Event {
			l[3].Time = l[2].Time - 1000
			rehash(&l[3])
			return l
		}, 3, "earlier than", 1},
		{"nonzero prevHash at version 0", func(l []domain.Event) []domain.Event {
			l[1].PrevHash[0] = 1
			rehash(&l[1])
			return l
		}, 1, "first event", 2}, // b@1 links to the original b@0
		{"empty id", func(l []domain.Event) []domain.Event {
			l[0].ID = ""
			return l
		}, 0, "empty event id", 1},
		{"invalid data rehashed", func(l []domain.Event) []domain.Event {
			l[4].Data = json.RawMessage(`{"n":`)
			rehash(&l[4])
			return l
		}, 4, "not valid JSON", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			log := c.damage(chainLog(t, "a", "b", "a", "a", "b"))
			s := verifyAll(log)
			// AddBatch, with the log cut into batches of every size, finds
			// the same fault after the same events.
			for size := 1; size <= len(log); size++ {
				v := audit.NewVerifier()
				for i := 0; i < len(log); i += size {
					v.AddBatch(log[i:min(i+size, len(log))])
				}
				if b := v.Summary(true); fmt.Sprint(b) != fmt.Sprint(s) {
					t.Fatalf("batches of %d: %+v; Add: %+v", size, b, s)
				}
			}
			if s.OK || s.Fault == nil {
				t.Fatalf("damage not detected: %+v", s)
			}
			want := log[c.bad]
			f := s.Fault
			if f.Stream != want.Stream || f.Version != want.Version || f.Position != want.Position || f.ID != want.ID {
				t.Fatalf("fault at %s/%d pos %d id %s, want %s/%d pos %d id %s (%s)",
					f.Stream, f.Version, f.Position, f.ID, want.Stream, want.Version, want.Position, want.ID, f.Problem)
			}
			if !strings.Contains(f.Problem, c.problem) {
				t.Fatalf("problem %q does not mention %q", f.Problem, c.problem)
			}
			if got, want := s.Events, int64(len(log)); got != want {
				t.Fatalf("events checked=%d, want the whole log's %d", got, want)
			}
			if s.FaultCount != c.faults || int64(len(s.Faults)) != c.faults || s.Fault != &s.Faults[0] {
				t.Fatalf("faultCount=%d, faults %v, want %d", s.FaultCount, s.Faults, c.faults)
			}
			if !strings.Contains(f.Error(), want.Stream) {
				t.Fatalf("Error() %q does not name the stream", f.Error())
			}
		})
	}
}

// A stream rewritten and re-hashed up to its head verifies as a chain; the
// heads digest is what exposes it.
func TestVerifierDigestExposesRewrittenTail(t *testing.T) {
	log := chainLog(t, "a", "b", "a", "a")
	before := verifyAll(log).HeadsDigest
	log[2].Data = json.RawMessage(`{"n":42}`)
	rehash(&log[2])
	log[3].PrevHash = log[2].Hash
	rehash(&log[3])
	s := verifyAll(log)
	if !s.OK {
		t.Fatalf("rewritten tail has sound chains, got fault %v", s.Fault)
	}
	if s.HeadsDigest == before {
		t.Fatal("heads digest unchanged after rewriting a stream")
	}
	// Truncating a stream's end changes the digest too.
	if verifyAll(log[:3]).HeadsDigest == before {
		t.Fatal("heads digest unchanged after cutting an event")
	}
}

// One bad event does not hide tampering later in the log: verification
// goes on and reports every faulty event, listing the first MaxFaults.
func TestVerifierReportsEveryFault(t *testing.T) {
	log := chainLog(t, "a", "b", "a", "c", "a", "b", "c")
	log[1].Data = json.RawMessage(`{"n":91}`) // b@0 edited
	log[4].Actor = "mallory"                  // a@2 edited
	log[6].Data = json.RawMessage(`{"n":96}`) // c@1 edited
	s := verifyAll(log)
	if s.OK || s.FaultCount != 3 || len(s.Faults) != 3 || s.Events != int64(len(log)) {
		t.Fatalf("summary %+v, want 3 faults among %d events", s, len(log))
	}
	for i, bad := range []int{1, 4, 6} {
		if f := s.Faults[i]; f.ID != log[bad].ID || !strings.Contains(f.Problem, "edited") {
			t.Fatalf("fault %d = %v, want event %d edited", i, f, bad)
		}
	}
	v := audit.NewVerifier()
	v.MaxFaults = 1
	v.AddBatch(log)
	if s := v.Summary(false); s.FaultCount != 3 || len(s.Faults) != 1 || s.Faults[0].ID != log[1].ID {
		t.Fatalf("MaxFaults 1: %+v, want 3 counted and the first listed", s)
	}
	v = audit.NewVerifier()
	v.MaxFaults = -1
	v.AddBatch(log)
	if s := v.Summary(false); s.FaultCount != 3 || s.Faults != nil || s.Fault != nil || s.OK {
		t.Fatalf("MaxFaults -1: %+v, want 3 counted, none listed", s)
	}
}

// A stored hash zeroed (or otherwise changed) on a stream's head is
// reported on that event, and the next event, chained by a writer onto the
// hash of the head's contents, is not blamed for it.
func TestVerifierDamagedStoredHash(t *testing.T) {
	log := chainLog(t, "a", "b", "a")
	next := domain.NewEvent(domain.NewManualClock(time.UnixMilli(1_700_000_001_000)), "Tested", map[string]int{"n": 9})
	next.Actor = "test"
	evs := []domain.Event{next}
	audit.Chain("a", audit.TipOf(&log[2]), evs)
	evs[0].Position = log[2].Position + 2
	log[2].Hash = domain.Hash{} // the head's stored hash zeroed; the writer chained onto its contents
	log = append(log, evs[0])
	s := verifyAll(log)
	if s.FaultCount != 1 || s.Fault == nil || s.Fault.ID != log[2].ID || !strings.Contains(s.Fault.Problem, "zero") {
		t.Fatalf("summary %+v, want one fault: a@1's zeroed hash", s)
	}
}

// TestVerifierHeadsSortedByName: the heads, and so the digest, are in the
// order of the streams' names as strings, whatever the mix of order
// streams (sorted by their ids' digits) and other names, through Add and
// AddBatch alike.
func TestVerifierHeadsSortedByName(t *testing.T) {
	streams := []string{"order-1", "order-10", "order-2", "order-100", "order-9", "order-0", "order--5", "order-19",
		"order-1000000000000000000", "order-999999999999999999", "order-9223372036854775807", "order-01", "order-x",
		"oco-3", "order", "order-", "zeta", "a", "order-120", "order-12", "order-11", "order-2000", "order-3"}
	log := chainLog(t, append(streams, streams...)...)
	want := append([]string(nil), streams...)
	sortStrings(want)
	batch := audit.NewVerifier()
	batch.AddBatch(log)
	for _, sum := range []audit.VerifySummary{verifyAll(log), batch.Summary(true)} {
		var got []string
		for _, h := range sum.Heads {
			got = append(got, h.Stream)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("heads in the order\n%v\nwant\n%v", got, want)
		}
		if !sum.OK || sum.HeadsDigest != audit.HeadsDigest(sum.Heads) {
			t.Fatalf("summary %+v", sum)
		}
	}
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
