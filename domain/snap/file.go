package snap

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/tradeledger/tradeledger/domain"
)

// A snapshot file is
//
//	magic "TLSNAP" and the format version (2 bytes, big endian)
//	its sections, one per projection, each a run of frames (codec.go)
//	the index, a run of frames: the Header
//	the footer: the index's offset and length (8 bytes each), "TLSNAPIX"
//
// The footer is read first, then the index (its frames checked), then the
// sections wanted, each by its offset and length.

// FormatVersion is the version of the file layout and of the codec; a
// file of another version is not read (ErrVersion).
const FormatVersion = 1

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
}

// Section is one projection's state in a snapshot file.
type Section struct {
	Name    string // the projection's Name
	Version uint32 // the version of its state's encoding
	Offset  int64  // where its frames start in the file
	Length  int64  // their length in bytes
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
	e := NewEncoder(w.w)
	e.yield, e.nextYield = w.Yield, yieldEvery
	encode(e)
	if err := e.Close(); err != nil {
		return fmt.Errorf("snapshot section %s: %w", name, err)
	}
	w.sections = append(w.sections, Section{Name: name, Version: version, Offset: w.off, Length: e.Written()})
	w.off += e.Written()
	return nil
}

// Finish writes the index (h with the sections written) and the footer.
func (w *Writer) Finish(h Header) error {
	h.Sections = w.sections
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
	}
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
	n := d.Len(1 + 4 + 16)
	for range n {
		s := Section{Name: d.Text(), Version: d.Uint32(), Offset: d.Int64(), Length: d.Int64()}
		if d.Err() == nil && (s.Offset < headLen || s.Length < 0 || s.Offset+s.Length > off) {
			d.Failf("section %s lies outside the file", s.Name)
		}
		h.Sections = append(h.Sections, s)
	}
	if err := d.Done(); err != nil {
		return Header{}, fmt.Errorf("snapshot index: %w", err)
	}
	return h, nil
}

// Open returns a Decoder of section s of the file r.
func Open(r io.ReaderAt, s Section) *Decoder {
	return NewDecoder(io.NewSectionReader(r, s.Offset, s.Length), s.Length)
}
