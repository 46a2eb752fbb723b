// Package sqlitetest opens embedded event stores (eventstore/sqlite) for
// tests, the way the house's tests use them: a file in the test's
// temporary directory, opened, and closed when the test ends.
package sqlitetest

import (
	"path/filepath"
	"testing"

	"github.com/tradeledger/tradeledger/eventstore/sqlite"
)

// Open returns a new, open store in a file of tb.TempDir(), closed when
// tb and its subtests end. Failing to open it fails tb.
func Open(tb testing.TB) *sqlite.Store {
	tb.Helper()
	return OpenAt(tb, filepath.Join(tb.TempDir(), "events.db"))
}

// OpenAt is Open for the store at path, new or not. The store may be
// closed earlier (sqlite.Store.Close is idempotent), for instance to open
// the file again.
func OpenAt(tb testing.TB, path string) *sqlite.Store {
	tb.Helper()
	s := sqlite.NewStore(path)
	if err := s.Open(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}
