package eventstore_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tradeledger/tradeledger/domain"
)

// TestEventIDIsUUIDv7 checks domain.NewEventID against an independent
// reader, google/uuid: a version 7, RFC 9562 variant UUID in its canonical
// form, carrying the given time to the millisecond, and a fresh one each
// call.
func TestEventIDIsUUIDv7(t *testing.T) {
	seen := map[string]bool{}
	for _, at := range []time.Time{time.UnixMilli(0), time.Date(2026, 11, 27, 16, 0, 0, 123e6, time.UTC), time.UnixMilli(1<<48 - 1)} {
		for range 100 {
			id := domain.NewEventID(at)
			u, err := uuid.Parse(id)
			if err != nil {
				t.Fatalf("%s: %v", id, err)
			}
			if u.Version() != 7 || u.Variant() != uuid.RFC4122 || u.String() != id {
				t.Fatalf("%s: version %d, variant %v, canonical %s", id, u.Version(), u.Variant(), u)
			}
			if sec, nsec := u.Time().UnixTime(); time.Unix(sec, nsec).UnixMilli() != at.UnixMilli() {
				t.Fatalf("%s: time %v, want %v", id, time.Unix(sec, nsec).UTC(), at.UTC())
			}
			if seen[id] {
				t.Fatalf("%s given twice", id)
			}
			seen[id] = true
		}
	}
}

// BenchmarkEventID compares domain.NewEventID with google/uuid's NewV7,
// which the domain cannot call (standard library only) and which takes its
// time from time.Now rather than from the injected clock: what a switch
// would cost per event, serially and from parallel writers.
func BenchmarkEventID(b *testing.B) {
	at := time.Now()
	b.Run("domain", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				_ = domain.NewEventID(at)
			}
		})
	})
	b.Run("google-uuid-v7", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				_ = uuid.Must(uuid.NewV7()).String()
			}
		})
	})
}
