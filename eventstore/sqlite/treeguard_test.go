package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore/storetest"
)

// A log whose last rows were removed, or replaced by other events at the
// same positions (as a writer that did not check would have left it), is
// not the tree's: the store refuses every append and tree build, so that
// no event is written at a position the tree holds with another hash,
// until CutTree cuts the tree back to what the log holds.
func TestStoreRefusesATreeThatIsNotTheLog(t *testing.T) {
	ctx := context.Background()
	for _, replaced := range []bool{false, true} {
		dir := t.TempDir()
		path := filepath.Join(dir, "events.db")
		s := openStore(t, path)
		for i := 0; i < 10; i++ {
			if _, err := s.Append(ctx, "a", domain.Any, storetest.Event("Tick", i)); err != nil {
				t.Fatal(err)
			}
		}
		s.Close()
		// Events 9 and 10 as another log has them (other contents).
		other := openStore(t, filepath.Join(dir, "other.db"))
		for i := 0; i < 10; i++ {
			n := i
			if i >= 8 {
				n = 100 + i
			}
			if _, err := other.Append(ctx, "a", domain.Any, storetest.Event("Tick", n)); err != nil {
				t.Fatal(err)
			}
		}
		other.Close()
		db, err := sql.Open("sqlite3", "file:"+path)
		if err != nil {
			t.Fatal(err)
		}
		exec := func(q string, args ...any) {
			t.Helper()
			if _, err := db.Exec(q, args...); err != nil {
				t.Fatal(err)
			}
		}
		exec(`DELETE FROM events WHERE position > 8`)
		want := "event log was cut"
		if replaced {
			exec(`ATTACH DATABASE ? AS other`, filepath.Join(dir, "other.db"))
			exec(`INSERT INTO main.events SELECT * FROM other.events WHERE position > 8`)
			want = "event log was rewritten at its end: the event at position 10"
		}
		db.Close()

		s = openStore(t, path)
		if _, err := s.Append(ctx, "b", domain.NoStream, storetest.Event("Tick", 0)); err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("replaced %v: append: %v, want a refusal saying %q", replaced, err, want)
		}
		if err := s.BuildTree(ctx, nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("replaced %v: BuildTree: %v, want a refusal", replaced, err)
		}
		if err := s.WriteErr(); err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("replaced %v: WriteErr: %v", replaced, err)
		}
		// The operator's decision: the tree cut back to the 8 records the
		// log holds; appends go on from there, and the tree is the log's.
		if err := s.CutTree(ctx, 8); err != nil {
			t.Fatal(err)
		}
		if err := s.WriteErr(); err != nil {
			t.Fatalf("WriteErr after CutTree: %v", err)
		}
		if err := s.BuildTree(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Append(ctx, "b", domain.NoStream, storetest.Event("Tick", 0)); err != nil {
			t.Fatal(err)
		}
		storetest.CheckTree(t, s, s)
		s.Close()
	}
}
