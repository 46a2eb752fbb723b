package engine

import "maps"

// idSet is a set of ids as a bitset of 64 ids per word: the dense run of a
// log's order ids (from 0 on) in a slice, about one bit each and found
// without hashing (a replay asks for every event), and a scattered id (an
// imported order's, far past that run) in maps, one entry per word.
//
// The maps are shared copy-on-write with a snapshot's frozen copy
// (frozenSparse): an import's ids, one word each, make them large (4.6 MB
// at 200,000 imported orders), and they change only when an order with
// such an id finishes, which in a running service is rare (its imported
// orders are finished already). The words are spread over sparseShards
// maps by their low bits, so that a write after a freeze copies one of
// them, a sixty-fourth of the words.
type idSet struct {
	dense  []uint64
	sparse sparseWords // words at or past len(dense), or negative
	shared uint64      // bit k: sparse[k] is a frozen copy's too, copied before a write
}

// sparseShards is how many maps hold the sparse words.
const sparseShards = 64

// sparseWords are the sparse words, word w in the map w mod sparseShards.
type sparseWords [sparseShards]map[int64]uint64

func (m *sparseWords) get(w int64) uint64 { return m[w&(sparseShards-1)][w] }

// len returns how many words there are.
func (m *sparseWords) len() int {
	n := 0
	for _, shard := range m {
		n += len(shard)
	}
	return n
}

func (s *idSet) has(id int64) bool {
	w, bit := id>>6, uint64(1)<<(uint64(id)&63)
	if w >= 0 && w < int64(len(s.dense)) {
		return s.dense[w]&bit != 0
	}
	return s.sparse.get(w)&bit != 0
}

func (s *idSet) add(id int64) {
	w, bit := id>>6, uint64(1)<<(uint64(id)&63)
	if w >= 0 && w < int64(len(s.dense)) {
		s.dense[w] |= bit
		return
	}
	// The slice grows over words near its end (at most doubling it, so
	// that one far id does not make it large); farther ones go to the maps.
	if w >= 0 && w < 2*int64(len(s.dense))+1024 {
		old := len(s.dense)
		s.dense = append(s.dense, make([]uint64, int(w)+1-old)...)
		for k := int64(old); k < int64(len(s.dense)); k++ { // words the slice now covers move into it
			if v := s.sparse.get(k); v != 0 {
				s.dense[k] |= v
				delete(s.ownShard(k), k)
			}
		}
		s.dense[w] |= bit
		return
	}
	s.ownShard(w)[w] |= bit
}

// setSparse sets a sparse word as a snapshot's load does.
func (s *idSet) setSparse(w int64, v uint64) { s.ownShard(w)[w] = v }

// ownShard returns the map of word w, the set's own: made if there is
// none, copied if a frozen copy shares it.
func (s *idSet) ownShard(w int64) map[int64]uint64 {
	k := w & (sparseShards - 1)
	switch {
	case s.sparse[k] == nil:
		s.sparse[k] = make(map[int64]uint64)
	case s.shared&(1<<k) != 0:
		s.sparse[k] = maps.Clone(s.sparse[k])
		s.shared &^= 1 << k
	}
	return s.sparse[k]
}

// frozenSparse returns the sparse words for a frozen copy, which may read
// them for as long as it likes: the set copies a map before its next write
// into it.
func (s *idSet) frozenSparse() sparseWords {
	for k, shard := range s.sparse {
		if shard != nil {
			s.shared |= 1 << k
		}
	}
	return s.sparse
}

// addID adds id to k's set.
func addID[K comparable](m map[K]map[int64]struct{}, k K, id int64) {
	set := m[k]
	if set == nil {
		set = make(map[int64]struct{})
		m[k] = set
	}
	set[id] = struct{}{}
}

// removeID removes id from k's set. An emptied set stays (one per
// exchange or pair): dropping it made a replay allocate a new one for
// nearly every order, as orders open and finish one after the other. A
// set keeps the memory of its peak size (maps do not shrink), which the
// order state needed at that peak anyway.
func removeID[K comparable](m map[K]map[int64]struct{}, k K, id int64) {
	if set := m[k]; set != nil {
		delete(set, id)
	}
}
