package snap

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

func writeFile(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Section("a", 3, func(e *Encoder) { e.Text("alpha"); e.Decimal(decimal.MustDecimal("1.5")) }); err != nil {
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
	if got, dec := d.Text(), d.Decimal(); got != "alpha" || dec != decimal.MustDecimal("1.5") {
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
	_ = w.Section("a", 1, func(e *Encoder) { e.Len(2); e.Text("x"); e.Decimal(decimal.MustDecimal("2")) })
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

// TestSectionSums: a section whose bytes were changed and whose frames'
// CRC-32C were recomputed (what anyone can do) decodes, but its Done
// refuses it: its SHA-256 is not the one the index names.
func TestSectionSums(t *testing.T) {
	b := writeFile(t)
	h, err := ReadHeader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	s, _ := h.Section("a")
	if s.Sum == ([32]byte{}) {
		t.Fatal("section a has no SHA-256")
	}
	// "alpha" → "alphz", the frame's checksum made right again.
	forged := bytes.Clone(b)
	i := bytes.Index(forged, []byte("alpha"))
	forged[i+4] = 'z'
	frame := forged[s.Offset : s.Offset+s.Length]
	binary.LittleEndian.PutUint32(frame[4:], Checksum(frame[frameHeader:]))
	d := Open(bytes.NewReader(forged), s)
	if got := d.Text(); got != "alphz" {
		t.Fatalf("forged text %q (the frame's checksum should pass)", got)
	}
	d.Decimal()
	if err := d.Done(); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "SHA-256") {
		t.Fatalf("Done of a forged section: %v, want ErrCorrupt naming its SHA-256", err)
	}
	// The untouched file's sections pass.
	d = Open(bytes.NewReader(b), s)
	d.Text()
	d.Decimal()
	if err := d.Done(); err != nil {
		t.Fatal(err)
	}
}

// TestSignedText: the writer signs the header's SignedText, the signature
// is read back as written, and every field of the index changes the text.
func TestSignedText(t *testing.T) {
	var signed []byte
	var buf bytes.Buffer
	w, err := NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	w.Sign = func(text []byte) ([]byte, error) {
		signed = bytes.Clone(text)
		return append([]byte("sig:"), text[:8]...), nil
	}
	if err := w.Section("a", 3, func(e *Encoder) { e.Text("alpha") }); err != nil {
		t.Fatal(err)
	}
	if err := w.Finish(Header{Position: 99, Records: 98, Root: domain.Hash{1}, MaxTime: 5, MaxOwnTime: 4, Created: 6}); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	h, err := ReadHeader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(h.SignedText(), signed) || string(h.Signature) != "sig:"+string(signed[:8]) {
		t.Fatalf("signed %q, read back text %q and signature %q", signed, h.SignedText(), h.Signature)
	}
	if !strings.HasPrefix(string(signed), signedTextHead+"\n") || !strings.HasSuffix(string(signed), "\n") {
		t.Fatalf("signed text %q", signed)
	}
	edits := map[string]func(*Header){
		"position": func(h *Header) { h.Position++ },
		"records":  func(h *Header) { h.Records++ },
		"root":     func(h *Header) { h.Root[31] ^= 1 },
		"max time": func(h *Header) { h.MaxTime++ },
		"own time": func(h *Header) { h.MaxOwnTime++ },
		"created":  func(h *Header) { h.Created++ },
		"name":     func(h *Header) { h.Sections[0].Name = "b" },
		"version":  func(h *Header) { h.Sections[0].Version++ },
		"offset":   func(h *Header) { h.Sections[0].Offset++ },
		"length":   func(h *Header) { h.Sections[0].Length++ },
		"sum":      func(h *Header) { h.Sections[0].Sum[0] ^= 1 },
		"sections": func(h *Header) { h.Sections = append(h.Sections, h.Sections[0]) },
	}
	for name, edit := range edits {
		c := h
		c.Sections = append([]Section(nil), h.Sections...)
		edit(&c)
		if bytes.Equal(c.SignedText(), signed) {
			t.Errorf("a header with another %s has the same signed text", name)
		}
	}
}

// BenchmarkSectionDecode decodes a 64 MiB section of words through Open
// (its SHA-256 checked, on a goroutine of its own beside the decoding) and
// through a plain Decoder (no sum): with a core to spare the two take
// about the same time; "sum-cost" is Open's time ÷ the plain one's.
func BenchmarkSectionDecode(b *testing.B) {
	words := make([]uint64, 8<<20)
	for i := range words {
		words[i] = uint64(i) * 0x9e3779b97f4a7c15
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf)
	if err != nil {
		b.Fatal(err)
	}
	if err := w.Section("big", 1, func(e *Encoder) { e.Words(words) }); err != nil {
		b.Fatal(err)
	}
	if err := w.Finish(Header{Position: 1}); err != nil {
		b.Fatal(err)
	}
	file := buf.Bytes()
	h, err := ReadHeader(bytes.NewReader(file), int64(len(file)))
	if err != nil {
		b.Fatal(err)
	}
	s, _ := h.Section("big")
	out := make([]uint64, len(words))
	decode := func(d *Decoder) time.Duration {
		start := time.Now()
		d.Words(out)
		if err := d.Done(); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	var summed, plain time.Duration
	b.SetBytes(s.Length)
	b.ResetTimer()
	for range b.N {
		summed += decode(Open(bytes.NewReader(file), s))
		plain += decode(NewDecoder(io.NewSectionReader(bytes.NewReader(file), s.Offset, s.Length), s.Length))
	}
	b.ReportMetric(float64(summed)/float64(plain), "sum-cost")
}
