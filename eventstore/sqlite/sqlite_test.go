package sqlite_test

import (
	"path/filepath"
	"testing"

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
