package snap

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/tradeledger/tradeledger/domain"
)

// A snapshot file is
//
//	magic "TLSNAP" and the format version (2 bytes, big endian)
//	its sections, one per projection, each a run of frames (codec.go)
//	the index, a run of frames: the Header, each section with the SHA-256
//	of its bytes, and last the Signature over all of it (SignedText)
//	the footer: the index's offset and length (8 bytes each), "TLSNAPIX"
//
// The footer is read first, then the index (its frames checked), then the
// sections wanted, each by its offset and length, each checked against its
// SHA-256 as it is decoded (Open, Decoder.Done).
//
// Frames' CRC-32C catch accidents (a torn write, a flipped bit); they
// prove nothing, since anyone can recompute them. What a reader relies on
// is the signature: the index names every section's SHA-256, and the
// signer (the log's checkpoint key, eventstore/transparency) signs the
// index's text, so that a file edited by someone without the key is
// refused before any of its state is believed.

// FormatVersion is the version of the file layout and of the codec; a
// file of another version is not read (ErrVersion). Version 2 added the
// sections' SHA-256 and the signature.
const FormatVersion = 2

var (
	magic       = []byte("TLSNAP")
	footerMagic = []byte("TLSNAPIX")
)

const (
	headLen   = 8
	footerLen = 24
)

// ErrVersion is wrapped by the error of a file of another FormatVersion.
var ErrVersion = errors.New("snapshot of another format version")

// Header is what a snapshot file says of itself.
type Header struct {
	// Position is the log position the state is at: every event up to it
	// was applied, none after it.
	Position uint64
	// Records is how many events the log holds up to Position: the size
	// of the Merkle tree over the log there (DESIGN §13).
	Records int64
	// Root is the Merkle tree's root at Records records: it names the log
	// up to Position, so that a snapshot of another log, or of a log
	// rewritten since, is told apart.
	Root domain.Hash
	// MaxTime is the latest time an event up to Position was recorded at
	// (ms); MaxOwnTime the latest time one speaks of (a fill's trade
	// time, projections.OwnTime). A cut at a time T starts from this
	// snapshot only when every event in it is within T.
	MaxTime, MaxOwnTime int64
	// Created is when the snapshot was written (ms).
	Created int64
	// Sections are the projections' states, in the order written.
	Sections []Section
	// Signature is what the writer's Sign returned for SignedText: a
	// signed note (golang.org/x/mod/sumdb/note) by the log's checkpoint
	// key; empty when the writer had no Sign.
	Signature []byte
}

// Section is one projection's state in a snapshot file.
type Section struct {
	Name    string   // the projection's Name
	Version uint32   // the version of its state's encoding
	Offset  int64    // where its frames start in the file
	Length  int64    // their length in bytes
	Sum     [32]byte // SHA-256 of those bytes (frame headers included)
}

// signedTextHead is the first line of SignedText. It is not the origin
// line of any log's checkpoint (C2SP tlog-checkpoint), so that the text a
// log's key signs for a snapshot can never be read as a checkpoint of
// that log.
const signedTextHead = "tradeledger read-model snapshot"

// SignedText is the text a snapshot's signature covers: every field of
// the header but the signature itself, one per line, each section with
// its SHA-256 (a signed note's text: UTF-8, one newline at each line's
// end). Two headers that differ in anything the index holds have
// different texts.
func (h *Header) SignedText() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\nformat %d\nposition %d\nrecords %d\nroot %s\ntimes %d %d\ncreated %d\n", signedTextHead, FormatVersion,
		h.Position, h.Records, base64.StdEncoding.EncodeToString(h.Root[:]), h.MaxTime, h.MaxOwnTime, h.Created)
	for _, s := range h.Sections {
		fmt.Fprintf(&b, "section %s %d %d %d %s\n", strconv.QuoteToASCII(s.Name), s.Version, s.Offset, s.Length,
			base64.StdEncoding.EncodeToString(s.Sum[:]))
	}
	return []byte(b.String())
}

// Section returns the section named name.
func (h *Header) Section(name string) (Section, bool) {
	for _, s := range h.Sections {
		if s.Name == name {
			return s, true
		}
	}
	return Section{}, false
}

// Writer writes a snapshot file: NewWriter, a Section per projection,
// then Finish.
type Writer struct {
	// Yield, when set, is called at the end of a value whenever about 64
	// KiB more of a section were encoded: a writer beside other work
	// gives way there (runtime.Gosched), so that a long encoding does not
	// keep a core from the goroutines waiting for it.
	Yield func()
	// Sign, when set, signs the header's SignedText at Finish; what it
	// returns is the file's Signature.
	Sign func(text []byte) ([]byte, error)

	w        io.Writer
	off      int64
	sections []Section
}

// NewWriter writes the file's magic to w and returns the Writer.
func NewWriter(w io.Writer) (*Writer, error) {
	head := binary.BigEndian.AppendUint16(append([]byte(nil), magic...), FormatVersion)
	if _, err := w.Write(head); err != nil {
		return nil, err
	}
	return &Writer{w: w, off: headLen}, nil
}

// Section writes one section: encode writes the state; the section is
// recorded under name and version. It returns encode's error (Encoder.Fail)
// or the write's.
func (w *Writer) Section(name string, version uint32, encode func(*Encoder)) error {
	sum := sha256.New()
	e := NewEncoder(io.MultiWriter(w.w, sum))
	e.yield, e.nextYield = w.Yield, yieldEvery
	encode(e)
	if err := e.Close(); err != nil {
		return fmt.Errorf("snapshot section %s: %w", name, err)
	}
	s := Section{Name: name, Version: version, Offset: w.off, Length: e.Written()}
	sum.Sum(s.Sum[:0])
	w.sections = append(w.sections, s)
	w.off += e.Written()
	return nil
}

// Finish writes the index (h with the sections written, signed by Sign
// when set) and the footer.
func (w *Writer) Finish(h Header) error {
	h.Sections, h.Signature = w.sections, nil
	if w.Sign != nil {
		sig, err := w.Sign(h.SignedText())
		if err != nil {
			return fmt.Errorf("sign the snapshot: %w", err)
		}
		h.Signature = sig
	}
	e := NewEncoder(w.w)
	e.Uint64(h.Position)
	e.Int64(h.Records)
	e.Hash(h.Root)
	e.Int64(h.MaxTime)
	e.Int64(h.MaxOwnTime)
	e.Int64(h.Created)
	e.Len(len(h.Sections))
	for _, s := range h.Sections {
		e.Text(s.Name)
		e.Uint32(s.Version)
		e.Int64(s.Offset)
		e.Int64(s.Length)
		e.Raw(s.Sum[:])
	}
	e.Bytes(h.Signature)
	if err := e.Close(); err != nil {
		return err
	}
	foot := binary.LittleEndian.AppendUint64(nil, uint64(w.off))
	foot = binary.LittleEndian.AppendUint64(foot, uint64(e.Written()))
	foot = append(foot, footerMagic...)
	_, err := w.w.Write(foot)
	return err
}

// ReadHeader reads the header of the snapshot file r of size bytes. A file
// of another format version is ErrVersion; one whose magic, footer or
// index do not check is ErrCorrupt.
func ReadHeader(r io.ReaderAt, size int64) (Header, error) {
	var h Header
	if size < headLen+footerLen {
		return h, fmt.Errorf("%w: %d bytes", ErrCorrupt, size)
	}
	var head [headLen]byte
	if _, err := r.ReadAt(head[:], 0); err != nil {
		return h, err
	}
	if !bytes.Equal(head[:len(magic)], magic) {
		return h, fmt.Errorf("%w: not a snapshot file", ErrCorrupt)
	}
	if v := binary.BigEndian.Uint16(head[len(magic):]); v != FormatVersion {
		return h, fmt.Errorf("%w: format version %d, this release reads %d", ErrVersion, v, FormatVersion)
	}
	var foot [footerLen]byte
	if _, err := r.ReadAt(foot[:], size-footerLen); err != nil {
		return h, err
	}
	if !bytes.Equal(foot[16:], footerMagic) {
		return h, fmt.Errorf("%w: no footer (a file cut short)", ErrCorrupt)
	}
	off, length := int64(binary.LittleEndian.Uint64(foot[0:])), int64(binary.LittleEndian.Uint64(foot[8:]))
	if off < headLen || length <= 0 || off > size-footerLen || length != size-footerLen-off {
		return h, fmt.Errorf("%w: the footer points outside the file", ErrCorrupt)
	}
	d := NewDecoder(io.NewSectionReader(r, off, length), length)
	h.Position = d.Uint64()
	h.Records = d.Int64()
	h.Root = d.Hash()
	h.MaxTime = d.Int64()
	h.MaxOwnTime = d.Int64()
	h.Created = d.Int64()
	n := d.Len(1 + 4 + 16 + 32)
	for range n {
		s := Section{Name: d.Text(), Version: d.Uint32(), Offset: d.Int64(), Length: d.Int64()}
		d.Raw(s.Sum[:])
		if d.Err() == nil && (s.Offset < headLen || s.Length < 0 || s.Offset+s.Length > off) {
			d.Failf("section %s lies outside the file", s.Name)
		}
		h.Sections = append(h.Sections, s)
	}
	h.Signature = d.Bytes()
	if err := d.Done(); err != nil {
		return Header{}, fmt.Errorf("snapshot index: %w", err)
	}
	return h, nil
}

// Open returns a Decoder of section s of the file r. Its Done also checks
// the SHA-256 of the section's bytes against s.Sum (ErrCorrupt when they
// differ): a state is believed only once every byte of it was read and
// found to be the bytes the index names. The bytes are hashed as they are
// decoded, frame by frame, on a goroutine of its own (a large section's
// hashing then costs its decoding no time on a machine with a core to
// spare); Done ends it — call Done whatever became of the decoding (a
// decoder dropped without it ends its goroutine when collected).
func Open(r io.ReaderAt, s Section) *Decoder {
	d := NewDecoder(io.NewSectionReader(r, s.Offset, s.Length), s.Length)
	d.hasher = newSectionHasher(s.Sum)
	runtime.AddCleanup(d, func(h *sectionHasher) { h.close() }, d.hasher)
	return d
}

// checkSum is Done's check of the section's SHA-256 (a Decoder of Open).
func (d *Decoder) checkSum() {
	if d.hasher == nil {
		return
	}
	if d.err != nil {
		d.hasher.close()
		return
	}
	if got := d.hasher.result(); got != d.hasher.want {
		d.Failf("the section's SHA-256 is %x, the index names %x: its bytes were changed after it was written", got[:8], d.hasher.want[:8])
	}
}

// sectionHasher hashes the frames of a section, whole (header and
// payload), in order, on a goroutine of its own, beside their decoding:
// the decoder reads each frame into a buffer of the hasher's (buffer),
// hands it over once its checksum passed (add), and goes on decoding
// from it; the goroutine returns each buffer hashed for a later frame.
// At most a few frames are in flight (add waits beyond).
type sectionHasher struct {
	want   [32]byte
	frames chan []byte   // frames to hash, in order; closed after the last
	free   chan []byte   // frames hashed, for reuse
	sum    chan [32]byte // the SHA-256 once frames is closed
	once   sync.Once
	got    sync.Once // result's
	res    [32]byte
}

func newSectionHasher(want [32]byte) *sectionHasher {
	h := &sectionHasher{want: want, frames: make(chan []byte, 2), free: make(chan []byte, 4), sum: make(chan [32]byte, 1)}
	go func() {
		s := sha256.New()
		for f := range h.frames {
			s.Write(f)
			select {
			case h.free <- f:
			default:
			}
		}
		var out [32]byte
		h.sum <- [32]byte(s.Sum(out[:0]))
	}()
	return h
}

// buffer returns a buffer of n bytes for the next frame.
func (h *sectionHasher) buffer(n int) []byte {
	select {
	case b := <-h.free:
		if cap(b) >= n {
			return b[:n]
		}
	default:
	}
	return make([]byte, n, max(n, frameHeader+FrameSize+64))
}

// add hands a whole frame over to be hashed; the caller only reads it
// from then on.
func (h *sectionHasher) add(frame []byte) { h.frames <- frame }

// close says no frame follows (safe to call more than once).
func (h *sectionHasher) close() { h.once.Do(func() { close(h.frames) }) }

// result returns the SHA-256 of the frames added (and again when asked
// again).
func (h *sectionHasher) result() [32]byte {
	h.got.Do(func() {
		h.close()
		h.res = <-h.sum
	})
	return h.res
}
