package sqlite

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
)

func TestRecordRoundTrip(t *testing.T) {
	e := domain.Event{ID: "0190-…", Stream: "order-7", Version: 3, Type: "OrderFilled", Schema: 1, Time: 1700000000123,
		Actor: "alice", Correlation: "req", Data: []byte(`{"price":"1.00000000"}`)}
	e.PrevHash[0], e.Hash[31] = 1, 2
	var got domain.Event
	if err := decodeRecord(appendRecord(nil, &e), &got); err != nil {
		t.Fatal(err)
	}
	if got.ID != e.ID || got.Stream != e.Stream || got.Version != e.Version || got.Type != e.Type || got.Schema != e.Schema ||
		got.Time != e.Time || got.Actor != e.Actor || got.Correlation != e.Correlation || !bytes.Equal(got.Data, e.Data) ||
		got.PrevHash != e.PrevHash || got.Hash != e.Hash {
		t.Fatalf("round trip = %+v, want %+v", got, e)
	}
}

// FuzzDecodeRecord: the log reader never panics on damaged records, and what
// it accepts re-encodes to the same bytes.
func FuzzDecodeRecord(f *testing.F) {
	e := domain.Event{ID: "id", Stream: "s", Type: "T", Data: []byte(`{}`), Time: 5}
	f.Add(appendRecord(nil, &e))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, rec []byte) {
		var got domain.Event
		if err := decodeRecord(rec, &got); err != nil {
			return
		}
		if again := appendRecord(nil, &got); !bytes.Equal(again, rec) {
			// Varints have one canonical form each; a non-canonical input
			// may decode, but must then decode to the same event.
			var second domain.Event
			if err := decodeRecord(again, &second); err != nil || second.ID != got.ID || !bytes.Equal(second.Data, got.Data) {
				t.Fatalf("re-encoding changed the event")
			}
		}
	})
}

// TestRecordNumbers: the one-byte paths of decodeRecord read numbers and
// lengths at and around their limits as binary's varints do.
func TestRecordNumbers(t *testing.T) {
	for _, n := range []int64{0, 1, -1, 63, -63, 64, -64, 65, -65, 127, 128, -128, 1 << 40, -(1 << 40), 1<<63 - 1, -1 << 63} {
		for _, size := range []int{0, 1, 127, 128, 300} {
			e := domain.Event{ID: strings.Repeat("i", size), Stream: "order-1", Type: "T", Actor: strings.Repeat("a", size%130),
				Version: n, Schema: int(n % 1000), Time: n, Data: bytes.Repeat([]byte("d"), size)}
			var got domain.Event
			if err := decodeRecord(appendRecord(nil, &e), &got); err != nil {
				t.Fatalf("n %d, size %d: %v", n, size, err)
			}
			if got.Version != e.Version || got.Schema != e.Schema || got.Time != e.Time || got.ID != e.ID || got.Actor != e.Actor || !bytes.Equal(got.Data, e.Data) {
				t.Fatalf("n %d, size %d: got %+v, want %+v", n, size, got, e)
			}
		}
	}
}

// TestRecordSizeBounds: recordSize is never less than the record's length,
// whatever the version and time a seal gives the event (at their widest),
// for fields of every length class of a uvarint, and exceeds it by no
// more than those two varints' widest.
func TestRecordSizeBounds(t *testing.T) {
	for _, n := range []int{0, 1, 127, 128, 16383, 16384, 70000} {
		s := strings.Repeat("x", n)
		for _, e := range []domain.Event{
			{ID: s, Type: "T", Data: []byte(`{}`)},
			{ID: "id", Type: s, Actor: s, Correlation: s, Data: []byte(`{}`), Schema: 1},
			{ID: "id", Type: "T", Data: []byte(`"` + s + `"`), Schema: 300},
		} {
			for _, stream := range []string{"order-7", s} {
				size := recordSize(&e, stream)
				for _, v := range []struct{ version, time int64 }{{0, 0}, {1, 1700000000123}, {1 << 62, -1 << 62}} {
					e.Stream, e.Version, e.Time = stream, v.version, v.time
					got := len(appendRecord(nil, &e))
					if got > size || size-got > 2*binary.MaxVarintLen64 {
						t.Fatalf("field length %d, version %d, time %d: record of %d bytes, recordSize %d", n, v.version, v.time, got, size)
					}
				}
			}
		}
	}
}

// TestRecordArena: the arena's slices are empty, hold exactly what was
// asked for, and never overlap, across blocks and for a size larger than
// a block.
func TestRecordArena(t *testing.T) {
	var a recordArena
	var all [][]byte
	for i, n := range []int{10, recordArenaBlock - 20, 30, 2 * recordArenaBlock, 5} {
		b := a.take(n)
		if len(b) != 0 || cap(b) != n {
			t.Fatalf("take(%d) = len %d cap %d", n, len(b), cap(b))
		}
		b = append(b, bytes.Repeat([]byte{byte(i + 1)}, n)...)
		all = append(all, b)
	}
	for i, b := range all {
		for _, c := range b {
			if c != byte(i+1) {
				t.Fatalf("slice %d was overwritten by another", i)
			}
		}
	}
}
