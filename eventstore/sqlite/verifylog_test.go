package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/audit"
	"github.com/tradeledger/tradeledger/eventstore/storetest"
)

// TestVerifyLogRecordsInOrder: VerifyLog, which builds a batch's Merkle
// records beside the checks of the next batches, gives Records every
// event's recomputed hash once, in log order, over several of its batches,
// and has given them all when it returns.
func TestVerifyLogRecordsInOrder(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, filepath.Join(t.TempDir(), "events.db"))
	defer s.Close()
	const streams = 14_000 // 42,000 events: three of VerifyLog's batches
	for from := 0; from < streams; from += 2000 {
		batch := make([]domain.StreamAppend, 2000)
		for i := range batch {
			batch[i] = domain.StreamAppend{Stream: domain.OrderStream(int64(from + i + 1)), Expected: domain.NoStream,
				Events: []domain.Event{storetest.Event("A", 1), storetest.Event("B", 2), storetest.Event("C", 3)}}
		}
		if _, err := s.AppendBatch(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	var got []domain.Hash
	sum, err := audit.VerifyLog(ctx, s, audit.VerifyOptions{Records: func(hs []domain.Hash) { got = append(got, hs...) }})
	if err != nil || !sum.OK {
		t.Fatalf("verify: %+v, %v", sum, err)
	}
	all := storetest.ReadAll(t, s.ReadAll(ctx, 0, 0))
	if len(got) != len(all) || len(all) != 3*streams {
		t.Fatalf("Records took %d hashes, the log holds %d events (want %d)", len(got), len(all), 3*streams)
	}
	for i := range all {
		if want := domain.ComputeHash(&all[i]); got[i] != want {
			t.Fatalf("record %d is %s, want the hash of the event at position %d, %s", i, got[i], all[i].Position, want)
		}
	}
}
