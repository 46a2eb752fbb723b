package engine

import "maps"

// idSet is a set of ids as a bitset of 64 ids per word: the dense run of a
// log's order ids (from 0 on) in a slice, about one bit each and found
// without hashing (a replay asks for every event), and a scattered id (an
// imported order's, far past that run) in a map, one entry per word.
//
// The map is shared copy-on-write with a snapshot's frozen copy
// (frozenSparse): an import's ids, one word each, make it large (4.6 MB at
// 200,000 imported orders), and it changes only when an order with such an
// id finishes, which in a running service is rare (its imported orders are
// finished already), so the freeze shares it and a write after it copies
// it first.
type idSet struct {
	dense        []uint64
	sparse       map[int64]uint64 // words at or past len(dense), or negative
	sparseShared bool             // sparse is a frozen copy's too: copied before a write
}

func (s *idSet) has(id int64) bool {
	w, bit := id>>6, uint64(1)<<(uint64(id)&63)
	if w >= 0 && w < int64(len(s.dense)) {
		return s.dense[w]&bit != 0
	}
	return s.sparse[w]&bit != 0
}

func (s *idSet) add(id int64) {
	w, bit := id>>6, uint64(1)<<(uint64(id)&63)
	if w >= 0 && w < int64(len(s.dense)) {
		s.dense[w] |= bit
		return
	}
	// The slice grows over words near its end (at most doubling it, so
	// that one far id does not make it large); farther ones go to the map.
	if w >= 0 && w < 2*int64(len(s.dense))+1024 {
		old := len(s.dense)
		s.dense = append(s.dense, make([]uint64, int(w)+1-old)...)
		if len(s.sparse) > 0 { // words the slice now covers move into it
			for k := int64(old); k < int64(len(s.dense)); k++ {
				if v, ok := s.sparse[k]; ok {
					s.dense[k] |= v
					s.ownSparse()
					delete(s.sparse, k)
				}
			}
		}
		s.dense[w] |= bit
		return
	}
	if s.sparse == nil {
		s.sparse = make(map[int64]uint64)
	}
	s.ownSparse()
	s.sparse[w] |= bit
}

// frozenSparse returns the sparse words for a frozen copy, which may read
// them for as long as it likes: the set copies them before its next write.
func (s *idSet) frozenSparse() map[int64]uint64 {
	if s.sparse != nil {
		s.sparseShared = true
	}
	return s.sparse
}

// ownSparse makes the sparse words the set's own, copying them if a frozen
// copy shares them.
func (s *idSet) ownSparse() {
	if s.sparseShared {
		s.sparse = maps.Clone(s.sparse)
		s.sparseShared = false
	}
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
