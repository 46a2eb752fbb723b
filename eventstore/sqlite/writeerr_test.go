package sqlite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
)

func bigEvent() domain.Event {
	return domain.NewEvent(domain.SystemClock{}, "E", map[string]string{"pad": strings.Repeat("x", 64<<10)})
}

// WriteErr reports a full disk while appends fail for it, and nothing once
// a commit succeeds again.
func TestWriteErrDiskFull(t *testing.T) {
	s := NewStore(filepath.Join(t.TempDir(), "events.db"))
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if _, err := s.Append(ctx, "s", domain.Any, bigEvent()); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteErr(); err != nil {
		t.Fatalf("WriteErr of a healthy store: %v", err)
	}
	// The file may not grow: SQLite answers SQLITE_FULL, as on a full disk.
	if err := execConn(s.w.db, "PRAGMA max_page_count=1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, "s", domain.Any, bigEvent()); domain.ErrorCode(err) != domain.EUNAVAILABLE {
		t.Fatalf("append on a full disk: %v, want EUNAVAILABLE", err)
	}
	if err := s.WriteErr(); err == nil || !strings.Contains(err.Error(), "full") {
		t.Fatalf("WriteErr on a full disk = %v, want the failure", err)
	}
	if err := execConn(s.w.db, "PRAGMA max_page_count=1000000"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, "s", domain.Any, bigEvent()); err != nil {
		t.Fatalf("append once space is back: %v", err)
	}
	if err := s.WriteErr(); err != nil {
		t.Fatalf("WriteErr after a successful commit = %v, want nil", err)
	}
}

// A failed fdatasync and a failed integrity check stop writes for good, and
// WriteErr says so.
func TestWriteErrSyncAndIntegrity(t *testing.T) {
	ctx := context.Background()
	s := NewStore(filepath.Join(t.TempDir(), "events.db"))
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	s.wal.syncFile = func(*os.File) error { return errors.New("input/output error") }
	if _, err := s.Append(ctx, "s", domain.Any, bigEvent()); err == nil {
		t.Fatal("append with a failing fdatasync succeeded")
	}
	if err := s.WriteErr(); err == nil || !strings.Contains(err.Error(), "durable") {
		t.Fatalf("WriteErr after a failed fdatasync = %v", err)
	}
	s.Close()

	s = NewStore(filepath.Join(t.TempDir(), "events.db"))
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.checkFile = func(string, <-chan struct{}) (string, error) {
		return "*** in database main *** Page 7: btreeInitPage() returns error code 11", nil
	}
	if err := s.WriteErr(); err != nil {
		t.Fatalf("WriteErr before the check ran: %v", err)
	}
	if err := s.CheckIntegrity(); err == nil {
		t.Fatal("CheckIntegrity passed a damaged file")
	}
	if err := s.WriteErr(); err == nil || !strings.Contains(err.Error(), "integrity") {
		t.Fatalf("WriteErr after a failed integrity check = %v", err)
	}
}
