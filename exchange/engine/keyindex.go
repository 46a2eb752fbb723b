package engine

import (
	"cmp"
	"slices"
)

// keyIndex is the set of Idempotency-Keys answered, built so that a
// snapshot's freeze costs the same at any size: the records are an
// append-only log (never written again once appended) in chunks, which a
// frozen copy shares up to the length it was frozen at, and a hash index
// of their positions finds a key, which only the live state reads (a
// frozen copy lists its records and needs no index).
//
// The index is split into keyShards open-addressing tables by the key's
// top bits, each growing on its own, so that a growth rehashes one shard's
// slots (a 1024th of the keys) rather than all of them on the placement
// path. A slot holds the position of a record plus 1 (0: empty) and 32
// bits of its key, so that probing passes over other keys without reading
// their records. A key costs its record (40 bytes) and 8 bytes a slot at a
// load of 3/8 to 3/4.
type keyIndex struct {
	log    keyLog
	shards []keyShard // keyShards of them; nil before the first key
}

// keyLog is the records in the order answered: chunks of keyChunk
// records, and the chunk being filled. A record's position is its index
// in that order.
type keyLog struct {
	full [][]keyAnswer // append-only; each chunk full, never written again
	tail []keyAnswer   // appended to, up to keyChunk
}

// keyAnswer is a key and what it answered.
type keyAnswer struct {
	id  keyID
	rec keyRecord
}

// keyShard is one open-addressing table of the index (linear probing).
type keyShard struct {
	slots []uint64 // a power of two long, or empty
	used  int
}

const (
	keyChunk      = 1024 // records a chunk
	keyShardShift = 54   // the top 10 bits of keyID.a pick the shard
	keyShards     = 1 << (64 - keyShardShift)
)

// get returns what key k answered.
func (x *keyIndex) get(k keyID) (keyRecord, bool) {
	if x.shards == nil {
		return keyRecord{}, false
	}
	sh := &x.shards[k.a>>keyShardShift]
	if len(sh.slots) == 0 {
		return keyRecord{}, false
	}
	mask, tag := uint32(len(sh.slots)-1), uint32(k.a)
	for i := tag & mask; ; i = (i + 1) & mask {
		s := sh.slots[i]
		if s == 0 {
			return keyRecord{}, false
		}
		if uint32(s>>32) == tag {
			if e := x.log.at(uint32(s) - 1); e.id == k {
				return e.rec, true
			}
		}
	}
}

// add records what key k answered unless k already answered something:
// the first answer stands, as a replay of the log keeps the first
// request's.
func (x *keyIndex) add(k keyID, rec keyRecord) {
	if x.shards == nil {
		x.shards = make([]keyShard, keyShards)
	}
	sh := &x.shards[k.a>>keyShardShift]
	if (sh.used+1)*4 > len(sh.slots)*3 {
		x.grow(sh, max(8, 2*len(sh.slots)))
	}
	mask, tag := uint32(len(sh.slots)-1), uint32(k.a)
	i := tag & mask
	for ; sh.slots[i] != 0; i = (i + 1) & mask {
		if s := sh.slots[i]; uint32(s>>32) == tag && x.log.at(uint32(s)-1).id == k {
			return
		}
	}
	n := x.log.len()
	if n >= 1<<32-1 {
		panic("engine: more than 4G Idempotency-Keys")
	}
	l := &x.log
	// Appended past every frozen copy's length: none of them sees it.
	l.tail = append(l.tail, keyAnswer{id: k, rec: rec})
	if len(l.tail) == keyChunk {
		l.full = append(l.full, l.tail)
		l.tail = make([]keyAnswer, 0, keyChunk)
	}
	sh.slots[i] = uint64(tag)<<32 | uint64(n+1)
	sh.used++
}

// grow rehashes a shard into size slots (a power of two) from the slots'
// own bits, without reading the records.
func (x *keyIndex) grow(sh *keyShard, size int) {
	slots := make([]uint64, size)
	mask := uint32(size - 1)
	for _, s := range sh.slots {
		if s == 0 {
			continue
		}
		i := uint32(s>>32) & mask
		for slots[i] != 0 {
			i = (i + 1) & mask
		}
		slots[i] = s
	}
	sh.slots = slots
}

// reserve sizes the shards for n keys in all (a snapshot's load).
func (x *keyIndex) reserve(n int) {
	if n == 0 {
		return
	}
	if x.shards == nil {
		x.shards = make([]keyShard, keyShards)
	}
	// 5/4 of the expected keys a shard, at a load of at most 3/4.
	per := (n/keyShards + 1) * 5 / 4 * 4 / 3
	size := 8
	for size < per {
		size *= 2
	}
	for i := range x.shards {
		if len(x.shards[i].slots) < size {
			x.grow(&x.shards[i], size)
		}
	}
}

// freeze returns the records as they are now, in O(1): the chunks shared
// with the live index, cut to their lengths now, which later keys
// (appended past them) do not change. No record is copied.
func (x *keyIndex) freeze() keyLog {
	l := &x.log
	return keyLog{full: l.full[:len(l.full):len(l.full)], tail: l.tail[:len(l.tail):len(l.tail)]}
}

// len returns how many keys there are.
func (f keyLog) len() int { return len(f.full)*keyChunk + len(f.tail) }

// sorted calls fn with each key and its record in the order of the keys'
// bits (a, then b): the snapshot's, the same whatever order they were
// answered in. It buckets the positions by the keys' top bits, then sorts
// one bucket's records at a time, so that it needs 4 bytes a key and one
// bucket's records beside the keys.
func (f keyLog) sorted(fn func(*keyAnswer)) {
	const shift = keyShardShift
	var count [keyShards + 1]int
	f.each(func(_ uint32, e *keyAnswer) { count[e.id.a>>shift+1]++ })
	biggest := 0
	for i := 1; i <= keyShards; i++ {
		biggest = max(biggest, count[i])
		count[i] += count[i-1]
	}
	pos := make([]uint32, f.len())
	next := count
	f.each(func(p uint32, e *keyAnswer) {
		b := e.id.a >> shift
		pos[next[b]] = p
		next[b]++
	})
	bucket := make([]keyAnswer, 0, biggest)
	for b := range keyShards {
		bucket = bucket[:0]
		for _, p := range pos[count[b]:count[b+1]] {
			bucket = append(bucket, *f.at(p))
		}
		slices.SortFunc(bucket, func(x, y keyAnswer) int {
			return cmp.Or(cmp.Compare(x.id.a, y.id.a), cmp.Compare(x.id.b, y.id.b))
		})
		for i := range bucket {
			fn(&bucket[i])
		}
	}
}

// each calls fn with each record and its position, in the order answered.
func (f keyLog) each(fn func(pos uint32, e *keyAnswer)) {
	var p uint32
	for _, c := range f.full {
		for i := range c {
			fn(p, &c[i])
			p++
		}
	}
	for i := range f.tail {
		fn(p, &f.tail[i])
		p++
	}
}

// at returns the record at position pos.
func (f keyLog) at(pos uint32) *keyAnswer {
	if c := int(pos / keyChunk); c < len(f.full) {
		return &f.full[c][pos%keyChunk]
	}
	return &f.tail[pos%keyChunk]
}
