package audit

import (
	"encoding/binary"
	"sort"
)

// idSet is the set of event ids (their idKeys) a verification has seen, for
// its duplicate check. A log's ids come in about increasing order — a
// UUIDv7 and an imported event's id start with their time (NewEventID,
// gunbot.TimeID) —, so the set keeps them in a sorted run: an id greater
// than the run's last is new without a look-up and is appended; one a few
// places out of order (ids of one millisecond, appends committed in
// another order than their ids were made) is looked up by bisection
// among the run's last idRunReach and inserted there; any other (legacy
// hash-only ids, the rare late one) is looked up in the whole run by
// bisection and kept in a map. Against a map of every id it takes a third
// of the memory, no hashing, and for most ids one comparison.
type idSet struct {
	run  [][16]byte            // sorted, each id once
	rest map[[16]byte]struct{} // ids not in run: each smaller than run's last when it came
}

// idRunReach is how far from its end the run takes an id in (the most
// entries an insertion moves).
const idRunReach = 64

// seen reports whether k was added before, and adds it.
//
// Why it is exact: run and rest are disjoint and together hold every id
// added. An id greater than the run's last is in neither: every id of rest
// was smaller than the run's last when it came, and the run's last only
// grows. Any other id is looked for in both.
func (s *idSet) seen(k [16]byte) bool {
	n := len(s.run)
	if n == 0 || keyLess(&s.run[n-1], &k) {
		s.run = append(s.run, k)
		return false
	}
	from := max(0, n-idRunReach)
	if !keyLess(&k, &s.run[from]) {
		i := from + sort.Search(n-from, func(i int) bool { return !keyLess(&s.run[from+i], &k) })
		if s.run[i] == k {
			return true
		}
		if _, ok := s.rest[k]; ok {
			return true
		}
		s.run = append(s.run, [16]byte{})
		copy(s.run[i+1:], s.run[i:n])
		s.run[i] = k
		return false
	}
	i := sort.Search(from, func(i int) bool { return !keyLess(&s.run[i], &k) })
	if s.run[i] == k {
		return true
	}
	if s.rest == nil {
		s.rest = map[[16]byte]struct{}{}
	}
	l := len(s.rest)
	s.rest[k] = struct{}{}
	return len(s.rest) == l
}

// keyLess orders ids' keys as their bytes (big-endian numbers).
func keyLess(a, b *[16]byte) bool {
	ah, bh := binary.BigEndian.Uint64(a[:8]), binary.BigEndian.Uint64(b[:8])
	if ah != bh {
		return ah < bh
	}
	return binary.BigEndian.Uint64(a[8:]) < binary.BigEndian.Uint64(b[8:])
}

// grow makes room for n more ids in the run.
func (s *idSet) grow(n int) {
	if cap(s.run)-len(s.run) < n {
		run := make([][16]byte, len(s.run), len(s.run)+n)
		copy(run, s.run)
		s.run = run
	}
}

// len returns how many ids the set holds.
func (s *idSet) len() int { return len(s.run) + len(s.rest) }
