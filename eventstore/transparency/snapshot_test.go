package transparency

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/projections"
	"github.com/tradeledger/tradeledger/projections/snaptest"
)

// TestSnapshotLatestCheckpoint: the last checkpoint loaded from a snapshot
// at random positions of random logs, then fed the rest, is the last
// checkpoint of the whole log.
func TestSnapshotLatestCheckpoint(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		rng := rand.New(rand.NewPCG(seed, 19))
		events := snaptest.RandomLog(rng, snaptest.LogOptions{Events: 2000})
		newProjs := func() []projections.Snapshotter { return []projections.Snapshotter{&Log{}} }
		snaptest.Check(t, events, snaptest.Cuts(rng, len(events), 4), newProjs, func(t *testing.T, full, restored []projections.Snapshotter) {
			a, b := full[0].(*Log).latest, restored[0].(*Log).latest
			if a == nil || !reflect.DeepEqual(a, b) {
				t.Fatalf("latest checkpoint restored %+v, of the whole log %+v", b, a)
			}
		})
	}
}

// withWitnesses returns events with the witnesses' answers after each
// checkpoint: witness a's cosignature, and every third time witness b's
// refusal; positions and the checkpoints stream's versions follow.
func withWitnesses(events []domain.Event) []domain.Event {
	var out []domain.Event
	version := int64(-1)
	add := func(e domain.Event) {
		if e.Stream == domain.StreamCheckpoints {
			version++
			e.Version = version
		}
		e.Position = uint64(len(out) + 1)
		out = append(out, e)
	}
	n := 0
	for _, e := range events {
		add(e)
		if e.Type != domain.TypeCheckpointSigned {
			continue
		}
		var c domain.CheckpointSigned
		e.Decode(&c)
		n++
		clock := domain.NewManualClock(time.UnixMilli(e.Time))
		co := domain.NewEvent(clock, domain.TypeCheckpointCosigned, domain.CheckpointCosigned{Origin: c.Origin, Size: c.Size, Root: c.Root,
			Witness: "a.test/w", Key: "a.test/w+01020304+key", URL: "http://a", Time: e.Time / 1000, Signature: fmt.Sprintf("— a.test/w sig%d\n", n)})
		co.Stream = domain.StreamCheckpoints
		add(co)
		if n%3 == 0 {
			r := domain.NewEvent(clock, domain.TypeWitnessRefused, domain.WitnessRefused{Origin: c.Origin, Size: c.Size, Root: c.Root,
				Witness: "b.test/w", Key: "b.test/w+05060708+key", URL: "http://b", WitnessSize: c.Size - 1, Status: 422, Reason: "fork"})
			r.Stream = domain.StreamCheckpoints
			add(r)
		}
	}
	return out
}

// TestSnapshotWitnesses: the cosignatures of the last checkpoint and each
// witness's record, loaded from a snapshot and fed the rest, are the
// whole log's.
func TestSnapshotWitnesses(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		rng := rand.New(rand.NewPCG(seed, 23))
		events := withWitnesses(snaptest.RandomLog(rng, snaptest.LogOptions{Events: 2000}))
		newProjs := func() []projections.Snapshotter { return []projections.Snapshotter{&Log{}} }
		snaptest.Check(t, events, snaptest.Cuts(rng, len(events), 4), newProjs, func(t *testing.T, full, restored []projections.Snapshotter) {
			a, b := full[0].(*Log), restored[0].(*Log)
			if a.latest == nil || len(a.latest.cosigs) == 0 || !reflect.DeepEqual(a.latest, b.latest) {
				t.Fatalf("latest checkpoint restored %+v, of the whole log %+v", b.latest, a.latest)
			}
			if len(a.witnesses) < 2 || !reflect.DeepEqual(a.Witnesses(), b.Witnesses()) {
				t.Fatalf("witnesses restored %+v, of the whole log %+v", b.Witnesses(), a.Witnesses())
			}
		})
	}
}
