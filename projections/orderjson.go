package projections

import "sync"

// Encoded pages. A record's JSON never changes once its order is closed
// (every field is "after this fill"; only toCancel follows the order), so
// order pages copy the JSON of closed orders' records from a cache instead
// of encoding it per request. The cache holds blocks of encBlock records at
// fixed indexes of a pair's list, only full blocks whose orders are all
// closed, and at most PageCacheBytes of JSON, the oldest blocks leaving
// first. A block is void once its pair's generation moves on: a late fill
// inserted before the end (indexes shift) or an order requested again under
// a known id (toCancel may come back).

// DefaultPageCacheBytes is Ledger.PageCacheBytes after NewLedger: room for
// the JSON of some 180,000 records.
const DefaultPageCacheBytes = 64 << 20

const encBlock = 64 // records per cached block

type encodedBlock struct {
	gen uint64 // the pair's generation when encoded
	buf []byte
	off [encBlock + 1]uint32 // record i is buf[off[i]:off[i+1]]
}

type encodedRef struct {
	b   *pairBook
	k   int
	blk *encodedBlock
}

// pageCache holds the encoded blocks of every pair (pairBook.enc) and the
// order they were added in, for eviction.
type pageCache struct {
	mu   sync.Mutex
	size int // bytes of JSON held
	fifo []encodedRef
	head int
}

// encoded returns block k of b, encoding and caching it if it may be
// cached, or nil if it may not (not full, or an order in it is open).
// Called with l.mu held for reading.
func (l *Ledger) encoded(b *pairBook, k int) *encodedBlock {
	c := &l.pages
	c.mu.Lock()
	if k < len(b.enc) && b.enc[k] != nil && b.enc[k].gen == b.gen {
		blk := b.enc[k]
		c.mu.Unlock()
		return blk
	}
	c.mu.Unlock()
	if l.PageCacheBytes <= 0 || (k+1)*encBlock > b.recs.len() {
		return nil
	}
	for i := k * encBlock; i < (k+1)*encBlock; i++ {
		if _, open := l.open[b.recs.at(i).id]; open {
			return nil
		}
	}
	blk := &encodedBlock{gen: b.gen, buf: make([]byte, 0, encBlock*400)}
	for i := 0; i < encBlock; i++ {
		o := l.view(b, b.recs.at(k*encBlock+i))
		blk.buf = o.AppendJSON(blk.buf)
		blk.off[i+1] = uint32(len(blk.buf))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if k >= len(b.enc) {
		b.enc = append(b.enc, make([]*encodedBlock, k+1-len(b.enc))...)
	}
	if old := b.enc[k]; old != nil && old.gen == b.gen {
		return old // encoded meanwhile by another reader
	}
	b.enc[k] = blk
	c.size += len(blk.buf)
	c.fifo = append(c.fifo, encodedRef{b, k, blk})
	for c.size > l.PageCacheBytes && c.head < len(c.fifo) {
		r := c.fifo[c.head]
		c.fifo[c.head] = encodedRef{}
		c.head++
		if r.b.enc[r.k] == r.blk {
			r.b.enc[r.k] = nil
		}
		c.size -= len(r.blk.buf)
	}
	if c.head > len(c.fifo)/2 {
		c.fifo = append(c.fifo[:0], c.fifo[c.head:]...)
		c.head = 0
	}
	return blk
}

// recordJSON appends record j of b as JSON (OrderRecord.AppendJSON's form),
// from the cache when it may; last remembers the block of the previous call
// so that consecutive records of a block take the cache's lock once.
// Called with l.mu held for reading.
func (l *Ledger) recordJSON(dst []byte, b *pairBook, j int, last *encodedRef) []byte {
	k := j / encBlock
	if last.b != b || last.k != k {
		*last = encodedRef{b, k, l.encoded(b, k)}
	}
	if blk := last.blk; blk != nil {
		i := j - k*encBlock
		return append(dst, blk.buf[blk.off[i]:blk.off[i+1]]...)
	}
	o := l.view(b, b.recs.at(j))
	return o.AppendJSON(dst)
}
