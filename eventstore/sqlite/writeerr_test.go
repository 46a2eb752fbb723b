package sqlite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
)

// openTempStore opens a new store in t's temporary directory, closed when
// t ends (an earlier Close is fine: Close is idempotent).
func openTempStore(t *testing.T) *Store {
	t.Helper()
	s := NewStore(filepath.Join(t.TempDir(), "events.db"))
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func bigEvent() domain.Event {
	return domain.NewEvent(domain.SystemClock{}, "E", map[string]string{"pad": strings.Repeat("x", 64<<10)})
}

// WriteErr reports a full disk while appends fail for it, and nothing once
// a commit succeeds again.
func TestWriteErrDiskFull(t *testing.T) {
	s := openTempStore(t)
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
	s := openTempStore(t)
	s.wal.syncFile = func(*os.File) error { return errors.New("input/output error") }
	if _, err := s.Append(ctx, "s", domain.Any, bigEvent()); err == nil {
		t.Fatal("append with a failing fdatasync succeeded")
	}
	if err := s.WriteErr(); err == nil || !strings.Contains(err.Error(), "durable") {
		t.Fatalf("WriteErr after a failed fdatasync = %v", err)
	}
	s.Close()

	s = openTempStore(t)
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

// Close interrupts an integrity check under way and returns only once it
// has ended, and a check asked for after Close opens nothing: no
// connection touches the data directory after Close (a serve closing
// while its background check starts left files behind its temp dir).
func TestCloseEndsIntegrityCheck(t *testing.T) {
	s := openTempStore(t)
	started, ended := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	s.checkFile = func(_ string, interrupt <-chan struct{}) (string, error) {
		if calls.Add(1) == 1 {
			close(started)
			<-interrupt
			close(ended)
		}
		return "", errors.New("interrupted")
	}
	result := make(chan error, 1)
	go func() { result <- s.CheckIntegrity() }()
	<-started
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ended:
	default:
		t.Fatal("Close returned while the integrity check was still running")
	}
	if err := <-result; domain.ErrorCode(err) != domain.EUNAVAILABLE {
		t.Fatalf("check interrupted by Close = %v, want EUNAVAILABLE", err)
	}
	if err := s.CheckIntegrity(); domain.ErrorCode(err) != domain.EUNAVAILABLE {
		t.Fatalf("check after Close = %v, want EUNAVAILABLE", err)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("the file was checked %d times; a check after Close must not open it", n)
	}
}
