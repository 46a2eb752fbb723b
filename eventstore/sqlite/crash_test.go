package sqlite_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
	"github.com/tradeledger/tradeledger/eventstore/storetest"
)

// crashChildEnv names the database a re-executed test binary appends to
// until it is killed.
const crashChildEnv = "TRADELEDGER_CRASH_CHILD_DB"

// TestMain lets the test binary act as the crash test's child process.
func TestMain(m *testing.M) {
	if path := os.Getenv(crashChildEnv); path != "" {
		runCrashChild(path)
		return
	}
	os.Exit(m.Run())
}

// runCrashChild appends from several goroutines as fast as it can and
// prints "stream id" for every acknowledged (durable) event, until killed.
func runCrashChild(path string) {
	s := sqlite.NewStore(path)
	if err := s.Open(); err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(2)
	}
	out := bufio.NewWriter(os.Stdout)
	var mu sync.Mutex
	var wg sync.WaitGroup
	clock := domain.SystemClock{}
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			stream := fmt.Sprintf("crash-%d", g)
			for i := 0; ; i++ {
				e := domain.NewEvent(clock, "Tick", map[string]int{"g": g, "i": i})
				if _, err := s.Append(context.Background(), stream, domain.Any, e); err != nil {
					fmt.Fprintln(os.Stderr, "append:", err)
					os.Exit(3)
				}
				mu.Lock()
				fmt.Fprintf(out, "%s %s\n", stream, e.ID)
				out.Flush()
				mu.Unlock()
			}
		}(g)
	}
	wg.Wait()
}

// TestCrashLosesNoAcknowledgedAppend kills a child process that is
// appending, at random moments, many rounds over; after each kill every
// acknowledged event must be in the log exactly once, the hash chains must
// verify, and appends must go on.
func TestCrashLosesNoAcknowledgedAppend(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test re-executes the test binary; skipped with -short")
	}
	path := filepath.Join(t.TempDir(), "events.db")
	rng := rand.New(rand.NewSource(42))
	acked := map[string]string{} // id → stream
	const rounds = 12
	for round := 0; round < rounds; round++ {
		killAfter := 1 + rng.Intn(300) // acknowledgements read before the kill
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+path)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		n := 0
		for n < killAfter && sc.Scan() {
			stream, id, ok := strings.Cut(sc.Text(), " ")
			if !ok {
				t.Fatalf("round %d: bad child line %q", round, sc.Text())
			}
			acked[id] = stream
			n++
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		// Lines already in the pipe were acknowledged before the kill too.
		for sc.Scan() {
			if stream, id, ok := strings.Cut(sc.Text(), " "); ok {
				acked[id] = stream
			}
		}
		cmd.Wait()
		if n < killAfter {
			t.Fatalf("round %d: child stopped after %d acks: %s", round, n, stderr.String())
		}
		checkLog(t, path, acked)
	}
	if len(acked) < rounds {
		t.Fatalf("only %d acknowledged events over %d rounds", len(acked), rounds)
	}
}

// checkLog reopens the store and checks every acknowledged id is present
// exactly once, the chains verify, the Merkle tree (written in the same
// transactions) covers exactly the events that survived, and an append
// still works.
func checkLog(t *testing.T, path string, acked map[string]string) {
	t.Helper()
	s := openStore(t, path)
	defer s.Close()
	ctx := context.Background()
	seen := map[string]int{}
	prev := map[string]domain.Event{}
	for _, e := range storetest.ReadAll(t, s.ReadAll(ctx, 0, 0)) {
		seen[e.ID]++
		p, ok := prev[e.Stream]
		var wantPrev domain.Hash
		wantVersion := int64(0)
		if ok {
			wantPrev, wantVersion = p.Hash, p.Version+1
		}
		if e.Version != wantVersion || e.PrevHash != wantPrev || domain.ComputeHash(&e) != e.Hash {
			t.Fatalf("chain broken at %s/%d (position %d)", e.Stream, e.Version, e.Position)
		}
		prev[e.Stream] = e
	}
	for id, stream := range acked {
		if seen[id] != 1 {
			t.Fatalf("acknowledged event %s of %s found %d times", id, stream, seen[id])
		}
	}
	storetest.CheckTree(t, s, s)
	e := domain.NewEvent(domain.SystemClock{}, "AfterCrash", nil)
	if _, err := s.Append(ctx, "after-crash", domain.Any, e); err != nil {
		t.Fatalf("append after crash: %v", err)
	}
}
