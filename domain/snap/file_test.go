package snap

import (
	"bytes"
	"errors"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
)

func writeFile(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Section("a", 3, func(e *Encoder) { e.Text("alpha"); e.Decimal(domain.MustDecimal("1.5")) }); err != nil {
		t.Fatal(err)
	}
	if err := w.Section("empty", 1, func(*Encoder) {}); err != nil {
		t.Fatal(err)
	}
	if err := w.Section("b", 7, func(e *Encoder) { e.Uvarint(42) }); err != nil {
		t.Fatal(err)
	}
	h := Header{Position: 99, Records: 98, Root: domain.Hash{1, 2, 3}, MaxTime: 5, MaxOwnTime: 4, Created: 6}
	if err := w.Finish(h); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestFileRoundTrip writes a file of three sections (one empty) and reads
// its header and each section back.
func TestFileRoundTrip(t *testing.T) {
	b := writeFile(t)
	h, err := ReadHeader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if h.Position != 99 || h.Records != 98 || h.Root != (domain.Hash{1, 2, 3}) || h.MaxTime != 5 || h.MaxOwnTime != 4 || h.Created != 6 {
		t.Fatalf("header %+v", h)
	}
	if len(h.Sections) != 3 || h.Sections[0].Name != "a" || h.Sections[0].Version != 3 || h.Sections[1].Length != 0 || h.Sections[2].Version != 7 {
		t.Fatalf("sections %+v", h.Sections)
	}
	s, _ := h.Section("a")
	d := Open(bytes.NewReader(b), s)
	if got, dec := d.Text(), d.Decimal(); got != "alpha" || dec != domain.MustDecimal("1.5") {
		t.Fatalf("section a: %q %s", got, dec)
	}
	if err := d.Done(); err != nil {
		t.Fatal(err)
	}
	s, _ = h.Section("empty")
	if err := Open(bytes.NewReader(b), s).Done(); err != nil {
		t.Fatal(err)
	}
	s, _ = h.Section("b")
	d = Open(bytes.NewReader(b), s)
	if d.Uvarint() != 42 || d.Done() != nil {
		t.Fatalf("section b: %v", d.Err())
	}
	if _, ok := h.Section("c"); ok {
		t.Fatal("a section that was not written is found")
	}
}

// TestReadHeaderRefuses: another format version is ErrVersion; a file cut
// short, a flipped byte in the index or a foreign file is ErrCorrupt.
func TestReadHeaderRefuses(t *testing.T) {
	b := writeFile(t)
	other := bytes.Clone(b)
	other[7]++
	if _, err := ReadHeader(bytes.NewReader(other), int64(len(other))); !errors.Is(err, ErrVersion) {
		t.Fatalf("another format version: %v", err)
	}
	cases := map[string][]byte{
		"cut short":   b[:len(b)-3],
		"not ours":    append([]byte("SQLite format 3\x00"), b[16:]...),
		"empty":       nil,
		"index byte":  flip(b, len(b)-footerLen-3),
		"footer byte": flip(b, len(b)-footerLen+2),
	}
	for name, c := range cases {
		if _, err := ReadHeader(bytes.NewReader(c), int64(len(c))); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
}

func flip(b []byte, i int) []byte {
	c := bytes.Clone(b)
	c[i] ^= 0x01
	return c
}

// FuzzReadHeader: no input makes ReadHeader or a section's decoding panic
// or allocate without bound.
func FuzzReadHeader(f *testing.F) {
	f.Add(writeFileF(f))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := ReadHeader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return
		}
		for _, s := range h.Sections {
			d := Open(bytes.NewReader(b), s)
			for d.Err() == nil && d.Len(1) >= 0 {
				d.Text()
				d.Decimal()
				if d.Done() != nil {
					break
				}
			}
		}
	})
}

func writeFileF(f *testing.F) []byte {
	var buf bytes.Buffer
	w, _ := NewWriter(&buf)
	_ = w.Section("a", 1, func(e *Encoder) { e.Len(2); e.Text("x"); e.Decimal(domain.MustDecimal("2")) })
	_ = w.Finish(Header{Position: 1})
	return buf.Bytes()
}

// TestWriterYields: a Writer with Yield calls it once per 64 KiB encoded,
// and writes the same bytes as one without.
func TestWriterYields(t *testing.T) {
	write := func(yield func()) []byte {
		var buf bytes.Buffer
		w, err := NewWriter(&buf)
		if err != nil {
			t.Fatal(err)
		}
		w.Yield = yield
		// 5 MiB of 8-byte values: frames end and yields come due
		// on value boundaries.
		if err := w.Section("big", 1, func(e *Encoder) {
			for i := range 5 << 17 {
				e.Uint64(uint64(i))
			}
		}); err != nil {
			t.Fatal(err)
		}
		if err := w.Finish(Header{Position: 1}); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	yields := 0
	paced := write(func() { yields++ })
	if want := (5 << 20) / yieldEvery; yields != want {
		t.Fatalf("%d yields, want %d (one per %d bytes)", yields, want, yieldEvery)
	}
	if !bytes.Equal(paced, write(nil)) {
		t.Fatal("the file written with Yield differs from the one without")
	}
}
