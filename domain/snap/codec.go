// Package snap is the binary form of read-model snapshots (DESIGN §16): an
// Encoder and a Decoder for the values a projection's state is made of,
// and the snapshot file that holds one section per projection (file.go).
// Standard library and domain only.
//
// Why a format of our own: a snapshot is read at every start, and the
// point of it is that reading it costs a small fraction of replaying the
// log (at 10M orders, well under a second for the order records alone).
// Fixed-width little-endian words (encoding/binary) decode in a load and a
// bounds check each, need no schema compiler and no reflection, allocate
// nothing but the state itself, and let a projection lay out its largest
// arrays (order records) as runs of words. encoding/gob and JSON decode
// through reflection at several times the cost, and the schema-based
// libraries (protobuf, flatbuffers, capnproto) add a generator for state
// that is never exchanged with anyone: a snapshot is read only by the
// release that wrote it, or refused by version and rebuilt from the log.
//
// A section is a run of frames: [payload length u32][CRC-32C of the
// payload u32][payload]. The Encoder ends a frame only between two values,
// so a value never spans frames, and the Decoder checks each frame's
// checksum before it decodes a byte of it: a corrupt snapshot is refused
// before any of it is believed, and memory is bounded by a frame.
package snap

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// FrameSize is the payload size at which the Encoder ends a frame (a frame
// may exceed it by the last value written).
const FrameSize = 1 << 20

// castagnoli is CRC-32C, computed with the CPU's instruction where there is
// one (SSE 4.2, ARMv8): at tens of GB/s it adds little to a read.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Checksum returns the CRC-32C of b.
func Checksum(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// ErrCorrupt is wrapped by every error that says a snapshot's bytes are not
// what was written: a checksum that does not match, a value that runs past
// its frame or section, a count larger than the bytes left.
var ErrCorrupt = errors.New("snapshot corrupt")

// Encoder writes values into frames on an io.Writer. Its errors are sticky:
// once a write failed, the rest are skipped and Close returns the error.
type Encoder struct {
	w   io.Writer
	buf []byte // frame header space, then the payload so far
	n   int64  // bytes written to w
	err error
	// yield, when set, is called whenever yieldEvery more bytes were
	// encoded (at the end of a value), at nextYield bytes.
	yield     func()
	nextYield int64
}

// yieldEvery is how many bytes an Encoder encodes between two calls of its
// yield (Writer.Yield).
const yieldEvery = 64 << 10

const frameHeader = 8

// NewEncoder returns an Encoder writing to w.
func NewEncoder(w io.Writer) *Encoder {
	e := &Encoder{w: w, buf: make([]byte, frameHeader, frameHeader+FrameSize+64)}
	return e
}

// Err returns the first error of a write, if any.
func (e *Encoder) Err() error { return e.err }

// SetYield makes the Encoder call yield whenever about 64 KiB more were
// encoded, at the end of a value (Writer.Yield, for an Encoder of one's
// own: an encoding beside other work gives way there).
func (e *Encoder) SetYield(yield func()) {
	e.yield, e.nextYield = yield, e.n+int64(len(e.buf))+yieldEvery
}

// Fail records err as the encoding's error (a projection that cannot
// encode its state), unless one is recorded already.
func (e *Encoder) Fail(err error) {
	if e.err == nil {
		e.err = err
	}
}

// Written returns the bytes written to the underlying writer so far.
func (e *Encoder) Written() int64 { return e.n }

// Close ends the last frame and returns the first error.
func (e *Encoder) Close() error {
	e.flush()
	return e.err
}

// flush writes the frame being filled, if it holds anything.
func (e *Encoder) flush() {
	if len(e.buf) == frameHeader || e.err != nil {
		e.buf = e.buf[:frameHeader]
		return
	}
	payload := e.buf[frameHeader:]
	if len(payload) > math.MaxUint32 {
		e.err = fmt.Errorf("snapshot frame of %d bytes", len(payload))
		return
	}
	binary.LittleEndian.PutUint32(e.buf[0:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(e.buf[4:], Checksum(payload))
	n, err := e.w.Write(e.buf)
	e.n += int64(n)
	if err != nil {
		e.err = err
	}
	if cap(e.buf) > 4*FrameSize { // a large value grew it: do not keep that
		e.buf = make([]byte, frameHeader, frameHeader+FrameSize+64)
	}
	e.buf = e.buf[:frameHeader]
}

// end is called after each value: a frame ends once it is full.
func (e *Encoder) end() {
	if len(e.buf) >= frameHeader+FrameSize {
		e.flush()
	}
	if e.yield != nil && e.n+int64(len(e.buf)) >= e.nextYield {
		e.nextYield = e.n + int64(len(e.buf)) + yieldEvery
		e.yield()
	}
}

// Uint64 writes v as 8 bytes.
func (e *Encoder) Uint64(v uint64) {
	e.buf = binary.LittleEndian.AppendUint64(e.buf, v)
	e.end()
}

// Int64 writes v as 8 bytes.
func (e *Encoder) Int64(v int64) { e.Uint64(uint64(v)) }

// Uint32 writes v as 4 bytes.
func (e *Encoder) Uint32(v uint32) {
	e.buf = binary.LittleEndian.AppendUint32(e.buf, v)
	e.end()
}

// Uvarint writes v in 1 to 10 bytes (small values small).
func (e *Encoder) Uvarint(v uint64) {
	e.buf = binary.AppendUvarint(e.buf, v)
	e.end()
}

// Varint writes v zigzag-encoded in 1 to 10 bytes.
func (e *Encoder) Varint(v int64) {
	e.buf = binary.AppendVarint(e.buf, v)
	e.end()
}

// Int writes v as a Varint.
func (e *Encoder) Int(v int) { e.Varint(int64(v)) }

// Len writes a length or count (a Uvarint).
func (e *Encoder) Len(n int) { e.Uvarint(uint64(n)) }

// Byte writes one byte.
func (e *Encoder) Byte(b byte) {
	e.buf = append(e.buf, b)
	e.end()
}

// Bool writes b as one byte.
func (e *Encoder) Bool(b bool) {
	if b {
		e.Byte(1)
	} else {
		e.Byte(0)
	}
}

// Bytes writes b's length, then b.
func (e *Encoder) Bytes(b []byte) {
	e.buf = binary.AppendUvarint(e.buf, uint64(len(b)))
	e.buf = append(e.buf, b...)
	e.end()
}

// Text writes s's length, then s.
func (e *Encoder) Text(s string) {
	e.buf = binary.AppendUvarint(e.buf, uint64(len(s)))
	e.buf = append(e.buf, s...)
	e.end()
}

// Decimal kinds in the encoding: most values are 0 or fit one word.
const (
	decZero   = 0
	decNarrow = 1
	decWide   = 2
)

// Decimal writes d exactly: 1 byte when it is 0, 9 when its coefficient
// fits 64 bits, else 17.
func (e *Encoder) Decimal(d decimal.Decimal) {
	hi, lo := d.Words()
	switch {
	case hi == 0 && lo == 0:
		e.buf = append(e.buf, decZero)
	case hi == int64(lo)>>63:
		e.buf = append(e.buf, decNarrow)
		e.buf = binary.LittleEndian.AppendUint64(e.buf, lo)
	default:
		e.buf = append(e.buf, decWide)
		e.buf = binary.LittleEndian.AppendUint64(e.buf, uint64(hi))
		e.buf = binary.LittleEndian.AppendUint64(e.buf, lo)
	}
	e.end()
}

// Compact writes c as 8 bytes.
func (e *Encoder) Compact(c decimal.Compact) { e.Int64(int64(c)) }

// Hash writes h's 32 bytes.
func (e *Encoder) Hash(h domain.Hash) {
	e.buf = append(e.buf, h[:]...)
	e.end()
}

// Words writes the words of ws (a run of fixed-size records laid out as
// words) as 8 bytes each, without a length: the reader knows how many.
func (e *Encoder) Words(ws []uint64) {
	for len(ws) > 0 {
		room := max((frameHeader+FrameSize-len(e.buf))/8, 1)
		n := min(room, len(ws))
		for _, w := range ws[:n] {
			e.buf = binary.LittleEndian.AppendUint64(e.buf, w)
		}
		ws = ws[n:]
		e.end()
	}
}

// Decoder reads values from frames on an io.Reader, checking each frame's
// checksum before it is decoded. Its errors are sticky: once a read failed
// every later value is zero and Err returns the first error.
type Decoder struct {
	r    io.Reader
	left int64  // bytes of the section not read from r yet
	buf  []byte // the current frame's payload
	i    int    // next byte of buf
	err  error
	hold []byte // frame buffer, reused
	// hasher, set by Open, hashes the section's frames as they are
	// read; Done compares the sum with the index's.
	hasher *sectionHasher
}

// NewDecoder returns a Decoder reading a section of length bytes from r.
func NewDecoder(r io.Reader, length int64) *Decoder {
	return &Decoder{r: r, left: length}
}

// Err returns the first error, if any.
func (d *Decoder) Err() error { return d.err }

// Fail records err (a value the projection cannot take), unless an error
// is recorded already.
func (d *Decoder) Fail(err error) {
	if d.err == nil {
		d.err = err
		d.buf, d.i = nil, 0
		if d.hasher != nil {
			d.hasher.close()
		}
	}
}

// Failf records a formatted ErrCorrupt error.
func (d *Decoder) Failf(format string, args ...any) {
	d.Fail(fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...))
}

// Done returns Err, or an ErrCorrupt error when bytes of the section were
// left unread (a state shorter than what was written: versions mixed up).
func (d *Decoder) Done() error {
	if d.err == nil && (d.i < len(d.buf) || d.left > 0) {
		d.Failf("%d bytes left after the state", int64(len(d.buf)-d.i)+d.left)
	}
	d.checkSum()
	return d.err
}

// next reads the next frame; false at the section's end or on an error.
func (d *Decoder) next() bool {
	if d.err != nil {
		return false
	}
	if d.left == 0 {
		d.Failf("read past the end of the section")
		return false
	}
	var h [frameHeader]byte
	if d.left < frameHeader {
		d.Failf("a frame header cut short")
		return false
	}
	if _, err := io.ReadFull(d.r, h[:]); err != nil {
		d.Fail(fmt.Errorf("%w: %v", ErrCorrupt, err))
		return false
	}
	size := int64(binary.LittleEndian.Uint32(h[0:]))
	if size == 0 || size > d.left-frameHeader {
		d.Failf("a frame of %d bytes in %d left", size, d.left-frameHeader)
		return false
	}
	var frame, buf []byte
	if d.hasher != nil {
		frame = d.hasher.buffer(frameHeader + int(size))
		copy(frame, h[:])
		buf = frame[frameHeader:]
	} else {
		if int64(cap(d.hold)) < size {
			d.hold = make([]byte, size)
		}
		buf = d.hold[:size]
	}
	if _, err := io.ReadFull(d.r, buf); err != nil {
		d.Fail(fmt.Errorf("%w: %v", ErrCorrupt, err))
		return false
	}
	if Checksum(buf) != binary.LittleEndian.Uint32(h[4:]) {
		d.Failf("checksum mismatch")
		return false
	}
	d.left -= frameHeader + size
	if d.hasher != nil {
		d.hasher.add(frame)
		if d.left == 0 {
			d.hasher.close()
		}
	}
	d.buf, d.i = buf, 0
	return true
}

// take returns the next n bytes of the current frame (moving to the next
// frame when the current one is used up), or nil on an error.
func (d *Decoder) take(n int) []byte {
	if d.i == len(d.buf) && !d.next() {
		return nil
	}
	if len(d.buf)-d.i < n {
		d.Failf("a value runs past its frame")
		return nil
	}
	b := d.buf[d.i : d.i+n]
	d.i += n
	return b
}

// Uint64 reads 8 bytes.
func (d *Decoder) Uint64() uint64 {
	if len(d.buf)-d.i >= 8 {
		v := binary.LittleEndian.Uint64(d.buf[d.i:])
		d.i += 8
		return v
	}
	if b := d.take(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

// Int64 reads 8 bytes.
func (d *Decoder) Int64() int64 { return int64(d.Uint64()) }

// Uint32 reads 4 bytes.
func (d *Decoder) Uint32() uint32 {
	if b := d.take(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

// Uvarint reads a Uvarint.
func (d *Decoder) Uvarint() uint64 {
	if d.i == len(d.buf) && !d.next() {
		return 0
	}
	v, n := binary.Uvarint(d.buf[d.i:])
	if n <= 0 {
		d.Failf("a bad varint")
		return 0
	}
	d.i += n
	return v
}

// Varint reads a Varint.
func (d *Decoder) Varint() int64 {
	if d.i == len(d.buf) && !d.next() {
		return 0
	}
	v, n := binary.Varint(d.buf[d.i:])
	if n <= 0 {
		d.Failf("a bad varint")
		return 0
	}
	d.i += n
	return v
}

// Int reads a Varint that must fit an int.
func (d *Decoder) Int() int {
	v := d.Varint()
	if v != int64(int(v)) {
		d.Failf("%d does not fit an int", v)
		return 0
	}
	return int(v)
}

// Len reads a length or count of elements written in at least minSize
// bytes each: a count that the bytes left cannot hold is ErrCorrupt, so
// that no corrupt count makes a large allocation.
func (d *Decoder) Len(minSize int) int {
	v := d.Uvarint()
	if minSize < 1 {
		minSize = 1
	}
	if v > uint64(d.left+int64(len(d.buf)-d.i))/uint64(minSize) {
		if d.err == nil {
			d.Failf("a count of %d in %d bytes", v, d.left+int64(len(d.buf)-d.i))
		}
		return 0
	}
	return int(v)
}

// Byte reads one byte.
func (d *Decoder) Byte() byte {
	if b := d.take(1); b != nil {
		return b[0]
	}
	return 0
}

// Bool reads a byte written by Bool.
func (d *Decoder) Bool() bool {
	switch d.Byte() {
	case 0:
		return false
	case 1:
		return true
	}
	d.Failf("a bad bool")
	return false
}

// Bytes reads a Bytes value into a new slice (nil when empty).
func (d *Decoder) Bytes() []byte {
	n := d.Len(1)
	if n == 0 || d.err != nil {
		return nil
	}
	b := d.take(n)
	if b == nil {
		return nil
	}
	return append([]byte(nil), b...)
}

// Text reads a Text value.
func (d *Decoder) Text() string {
	n := d.Len(1)
	if n == 0 || d.err != nil {
		return ""
	}
	return string(d.take(n))
}

// Decimal reads a Decimal.
func (d *Decoder) Decimal() decimal.Decimal {
	var hi int64
	var lo uint64
	switch d.Byte() {
	case decZero:
		return decimal.Zero
	case decNarrow:
		lo = d.Uint64()
		hi = int64(lo) >> 63
	case decWide:
		hi, lo = d.Int64(), d.Uint64()
	default:
		d.Failf("a bad decimal")
		return decimal.Zero
	}
	v, ok := decimal.DecimalFromWords(hi, lo)
	if !ok {
		d.Failf("a decimal out of range")
	}
	return v
}

// Compact reads a Compact.
func (d *Decoder) Compact() decimal.Compact { return decimal.Compact(d.Int64()) }

// Hash reads 32 bytes.
func (d *Decoder) Hash() domain.Hash {
	var h domain.Hash
	if b := d.take(len(h)); b != nil {
		copy(h[:], b)
	}
	return h
}

// Words fills ws with words written by Encoder.Words.
func (d *Decoder) Words(ws []uint64) {
	for len(ws) > 0 {
		if d.i == len(d.buf) && !d.next() {
			return
		}
		n := min((len(d.buf)-d.i)/8, len(ws))
		if n == 0 {
			d.Failf("a word runs past its frame")
			return
		}
		b := d.buf[d.i : d.i+8*n]
		for k := range ws[:n] {
			ws[k] = binary.LittleEndian.Uint64(b[8*k:])
		}
		d.i += 8 * n
		ws = ws[n:]
	}
}

// Raw writes b's bytes without a length, across as many frames as they
// need: the reader knows how many.
func (e *Encoder) Raw(b []byte) {
	for len(b) > 0 {
		room := max(frameHeader+FrameSize-len(e.buf), 1)
		n := min(room, len(b))
		e.buf = append(e.buf, b[:n]...)
		b = b[n:]
		e.end()
	}
}

// Raw fills b with bytes written by Encoder.Raw.
func (d *Decoder) Raw(b []byte) {
	for len(b) > 0 {
		if d.i == len(d.buf) && !d.next() {
			return
		}
		n := copy(b, d.buf[d.i:])
		d.i += n
		b = b[n:]
	}
}
