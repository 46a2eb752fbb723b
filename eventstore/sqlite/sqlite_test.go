package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
	"github.com/tradeledger/tradeledger/eventstore/storetest"
)

func openStore(t testing.TB, path string) *sqlite.Store {
	t.Helper()
	s := sqlite.NewStore(path)
	if err := s.Open(); err != nil {
		t.Fatalf("open: %v", err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) domain.EventStore {
		return openStore(t, filepath.Join(t.TempDir(), "events.db"))
	})
}

// An operator command (another process) may append to the file while the
// service runs: both stay consistent and the service's subscribers see it.
func TestTwoWritersOnOneFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.db")
	service, command := openStore(t, path), openStore(t, path)
	defer service.Close()
	defer command.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sub := service.Subscribe(ctx, 1)
	defer sub.Close()
	mustAppend := func(s *sqlite.Store, exp domain.ExpectedVersion) domain.AppendResult {
		t.Helper()
		r, err := s.Append(ctx, "config", exp, storetest.Event("Changed", 0))
		if err != nil {
			t.Fatalf("append: %v", err)
		}
		return r
	}
	mustAppend(service, domain.NoStream)
	mustAppend(command, domain.ExpectedVersion(0)) // the command sees the service's event
	r := mustAppend(service, domain.ExpectedVersion(1))
	if r.LastVersion != 2 || r.LastPosition != 3 {
		t.Fatalf("third append = %+v, want version 2 at position 3", r)
	}
	for want := uint64(1); want <= 3; want++ {
		if !sub.Next() {
			t.Fatalf("subscription ended: %v", sub.Err())
		}
		if got := sub.Event().Position; got != want {
			t.Fatalf("subscription position = %d, want %d", got, want)
		}
	}
	verifyChains(t, storetest.ReadAll(t, service.ReadAll(ctx, 0, 0)))
}
