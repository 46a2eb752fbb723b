package snap

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// writeValues writes one of every kind of value, n times over, with
// values drawn from rng; readValues reads them back and checks them.
func writeValues(e *Encoder, rng *rand.Rand, n int) {
	for i := range n {
		e.Uint64(rng.Uint64())
		e.Int64(-rng.Int64())
		e.Uint32(rng.Uint32())
		e.Uvarint(rng.Uint64() >> (rng.IntN(64)))
		e.Varint(rng.Int64() >> (rng.IntN(64)) * int64(1-2*(i&1)))
		e.Int(i)
		e.Len(i)
		e.Byte(byte(i))
		e.Bool(i%3 == 0)
		e.Bytes(bytes.Repeat([]byte{byte(i)}, i%7))
		e.Text(string(rune('a' + i%26)))
		e.Decimal(decimalOf(rng))
		e.Compact(decimal.Compact(rng.Int64()))
		var h domain.Hash
		h[i%32] = byte(i)
		e.Hash(h)
		e.Words([]uint64{uint64(i), rng.Uint64()})
	}
}

func decimalOf(rng *rand.Rand) decimal.Decimal {
	switch rng.IntN(4) {
	case 0:
		return decimal.Zero
	case 1:
		return decimal.DecimalFromInt(rng.Int64N(1000) - 500)
	case 2:
		return decimal.MaxDecimal
	default:
		return decimal.MaxDecimal.Neg()
	}
}

// TestCodecRoundTrip writes every kind of value over several frames and
// reads it back.
func TestCodecRoundTrip(t *testing.T) {
	const n = 40_000 // about 5 frames
	var buf bytes.Buffer
	e := NewEncoder(&buf)
	writeValues(e, rand.New(rand.NewPCG(1, 2)), n)
	big := make([]uint64, 300_000) // a run of words over frames
	for i := range big {
		big[i] = uint64(i) * 0x9E3779B97F4A7C15
	}
	e.Words(big)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if e.Written() != int64(buf.Len()) || buf.Len() < 4*FrameSize {
		t.Fatalf("written %d, buffer %d (want several frames)", e.Written(), buf.Len())
	}
	d := NewDecoder(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	readValues(t, d, rand.New(rand.NewPCG(1, 2)), n)
	got := make([]uint64, len(big))
	d.Words(got)
	for i := range big {
		if got[i] != big[i] {
			t.Fatalf("word %d = %x, want %x", i, got[i], big[i])
		}
	}
	if err := d.Done(); err != nil {
		t.Fatal(err)
	}
}

// readValues reads what writeValues wrote with the same rng.
func readValues(t *testing.T, d *Decoder, rng *rand.Rand, n int) {
	t.Helper()
	for i := range n {
		if got, want := d.Uint64(), rng.Uint64(); got != want {
			t.Fatalf("value %d: Uint64 = %d, want %d", i, got, want)
		}
		if got, want := d.Int64(), -rng.Int64(); got != want {
			t.Fatalf("value %d: Int64 = %d, want %d", i, got, want)
		}
		if got, want := d.Uint32(), rng.Uint32(); got != want {
			t.Fatalf("value %d: Uint32", i)
		}
		if got, want := d.Uvarint(), rng.Uint64()>>(rng.IntN(64)); got != want {
			t.Fatalf("value %d: Uvarint = %d, want %d", i, got, want)
		}
		if got, want := d.Varint(), rng.Int64()>>(rng.IntN(64))*int64(1-2*(i&1)); got != want {
			t.Fatalf("value %d: Varint = %d, want %d", i, got, want)
		}
		if got := d.Int(); got != i {
			t.Fatalf("value %d: Int = %d", i, got)
		}
		if got := d.Len(0); got != i {
			t.Fatalf("value %d: Len = %d", i, got)
		}
		if got := d.Byte(); got != byte(i) {
			t.Fatalf("value %d: Byte = %d", i, got)
		}
		if got := d.Bool(); got != (i%3 == 0) {
			t.Fatalf("value %d: Bool = %v", i, got)
		}
		if got, want := string(d.Bytes()), string(bytes.Repeat([]byte{byte(i)}, i%7)); got != want {
			t.Fatalf("value %d: Bytes = %q, want %q", i, got, want)
		}
		if got, want := d.Text(), string(rune('a'+i%26)); got != want {
			t.Fatalf("value %d: String = %q, want %q", i, got, want)
		}
		if got, want := d.Decimal(), decimalOf(rng); got != want {
			t.Fatalf("value %d: Decimal = %s, want %s", i, got, want)
		}
		if got, want := d.Compact(), decimal.Compact(rng.Int64()); got != want {
			t.Fatalf("value %d: Compact = %d, want %d", i, got, want)
		}
		var h domain.Hash
		h[i%32] = byte(i)
		if got := d.Hash(); got != h {
			t.Fatalf("value %d: Hash = %x", i, got)
		}
		ws := make([]uint64, 2)
		d.Words(ws)
		if ws[0] != uint64(i) || ws[1] != rng.Uint64() {
			t.Fatalf("value %d: Words = %v", i, ws)
		}
		if d.Err() != nil {
			t.Fatalf("value %d: %v", i, d.Err())
		}
	}
}

// TestDecoderRefusesCorruption flips each byte of a small section in turn,
// and cuts it short: every change is an ErrCorrupt, never a wrong value.
func TestDecoderRefusesCorruption(t *testing.T) {
	var buf bytes.Buffer
	e := NewEncoder(&buf)
	writeValues(e, rand.New(rand.NewPCG(3, 4)), 20)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	for i := range good {
		bad := bytes.Clone(good)
		bad[i] ^= 0x40
		d := NewDecoder(bytes.NewReader(bad), int64(len(bad)))
		readQuietly(d, 20)
		if err := d.Done(); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("byte %d flipped: %v, want ErrCorrupt", i, err)
		}
	}
	for _, n := range []int{0, 5, len(good) / 2, len(good) - 1} {
		d := NewDecoder(bytes.NewReader(good[:n]), int64(n))
		readQuietly(d, 20)
		if err := d.Done(); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("cut to %d bytes: %v, want ErrCorrupt", n, err)
		}
	}
}

// readQuietly reads what writeValues wrote without checking it.
func readQuietly(d *Decoder, n int) {
	for range n {
		d.Uint64()
		d.Int64()
		d.Uint32()
		d.Uvarint()
		d.Varint()
		d.Int()
		d.Len(0)
		d.Byte()
		d.Bool()
		d.Bytes()
		d.Text()
		d.Decimal()
		d.Compact()
		d.Hash()
		d.Words(make([]uint64, 2))
	}
}

// TestLenBoundsAllocations: a count larger than the bytes left is refused
// before anything is allocated for it.
func TestLenBoundsAllocations(t *testing.T) {
	var buf bytes.Buffer
	e := NewEncoder(&buf)
	e.Len(math.MaxInt32)
	e.Uint64(1)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	d := NewDecoder(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if n := d.Len(8); n != 0 || !errors.Is(d.Err(), ErrCorrupt) {
		t.Fatalf("Len = %d, %v; want 0 and ErrCorrupt", n, d.Err())
	}
}

// TestDoneRefusesLeftovers: a state read short of what was written (two
// versions mixed up) is an error, not a silent success.
func TestDoneRefusesLeftovers(t *testing.T) {
	var buf bytes.Buffer
	e := NewEncoder(&buf)
	e.Uint64(1)
	e.Uint64(2)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	d := NewDecoder(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	d.Uint64()
	if err := d.Done(); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Done = %v, want ErrCorrupt", err)
	}
}
