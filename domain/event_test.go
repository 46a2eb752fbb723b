package domain_test

import (
	"fmt"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
)

// PrepareAppend finds a repeated id whether the append is small (pairs
// compared) or large (a map), at any place, and PrepareAppendTo fills the
// caller's array when it is large enough, leaving the caller's events as
// they were.
func TestPrepareAppendRepeatedIDs(t *testing.T) {
	for _, n := range []int{2, 3, 8, 9, 40} {
		for _, pair := range [][2]int{{0, 1}, {0, n - 1}, {n - 2, n - 1}} {
			evs := make([]domain.Event, n)
			for i := range evs {
				evs[i] = domain.Event{ID: fmt.Sprintf("id-%d", i), Type: "Tested", Data: []byte(`{ "n": 1 }`)}
			}
			if _, err := domain.PrepareAppend("s", domain.Any, evs); err != nil {
				t.Fatalf("%d distinct ids: %v", n, err)
			}
			evs[pair[1]].ID = evs[pair[0]].ID
			out, err := domain.PrepareAppend("s", domain.Any, evs)
			if got, want := domain.ErrorCode(err), domain.EINVALID; got != want || out != nil {
				t.Fatalf("%d events, id of %d repeated at %d: code %q, %d events, want %q and none", n, pair[0], pair[1], got, len(out), want)
			}
		}
	}
}

func TestPrepareAppendTo(t *testing.T) {
	evs := []domain.Event{{ID: "a", Type: "Tested", Data: []byte(`{ "n": 1 }`)}}
	var one [1]domain.Event
	out, err := domain.PrepareAppendTo(one[:0], "s", domain.NoStream, evs)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || &out[0] != &one[0] {
		t.Fatalf("%d events, in the caller's array %v: want 1 in it", len(out), len(out) > 0 && &out[0] == &one[0])
	}
	if got, want := string(out[0].Data), `{"n":1}`; got != want {
		t.Fatalf("data %s, want %s", got, want)
	}
	if got, want := string(evs[0].Data), `{ "n": 1 }`; got != want {
		t.Fatalf("caller's data %s, want it untouched (%s)", got, want)
	}
	// Too small an array: a new one.
	two := append(evs, domain.Event{ID: "b", Type: "Tested"})
	if out, err = domain.PrepareAppendTo(one[:0], "s", domain.Any, two); err != nil || len(out) != 2 || &out[0] == &one[0] {
		t.Fatalf("two events into an array of one: %d events, %v", len(out), err)
	}
	if got, want := string(out[1].Data), `{}`; got != want {
		t.Fatalf("empty data became %s, want %s", got, want)
	}
	if out, err = domain.PrepareAppendTo(one[:0], "", domain.Any, evs); domain.ErrorCode(err) != domain.EINVALID || len(out) != 0 {
		t.Fatalf("empty stream: %d events, %v; want none and EINVALID", len(out), err)
	}
}

// FormatUUID sets the version nibble and RFC 9562's variant and writes the
// 8-4-4-4-12 form; the ids made with it are those made before it (the
// DerivedEventID below computed apart, with Python's hashlib).
func TestFormatUUID(t *testing.T) {
	var ones [16]byte
	for i := range ones {
		ones[i] = 0xff
	}
	for _, c := range []struct {
		u       [16]byte
		version byte
		want    string
	}{
		{[16]byte{}, 7, "00000000-0000-7000-8000-000000000000"},
		{ones, 7, "ffffffff-ffff-7fff-bfff-ffffffffffff"},
		{ones, 8, "ffffffff-ffff-8fff-bfff-ffffffffffff"},
		{[16]byte{0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef}, 4, "01234567-89ab-4def-8123-456789abcdef"},
	} {
		if got := domain.FormatUUID(c.u, c.version); got != c.want {
			t.Errorf("FormatUUID(%x, %d) = %s, want %s", c.u, c.version, got, c.want)
		}
	}
	if got, want := domain.DerivedEventID("binance", "fill", "123"), "83f7d540-2fdc-83b3-b318-ecd445d9c086"; got != want {
		t.Errorf("DerivedEventID = %s, want %s", got, want)
	}
}
