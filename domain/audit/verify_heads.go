package audit

import "sort"

// headRun holds the heads of a verifier shard's order streams by id, for
// the chain check. Order ids grow with time (the engine's next id, the
// import's time-ordered ids), so a log opens its order streams in about
// increasing id order, and the run keeps them sorted: a new stream with an
// id greater than the last is appended, one a few places out of order is
// inserted among the last headRunReach, any other goes into a map. An
// order's next event finds its stream at the run's end when it follows at
// once (an import's, an append of several events), else by bisection.
// Against a map of every stream it hashes nothing, and Summary walks the
// heads in order instead of sorting a map's.
type headRun struct {
	ids   []int64          // sorted, each once
	heads []verifiedStream // heads[i] is the head of stream ids[i]
	rest  map[int64]verifiedStream
}

// headRunReach is how far from its end the run takes a new stream in.
const headRunReach = 64

// headRef says where lookup found a stream (or where it goes).
type headRef struct {
	i     int  // its index in the run, or its place there when new (-1: rest)
	found bool // in the run (at i) or in rest (i = -1)
}

// lookup returns id's head and where it is. Exact for the same reason as
// idSet.seen: run and rest are disjoint, every id of rest was smaller than
// the run's last when it came, and the run's last only grows.
func (h *headRun) lookup(id int64) (verifiedStream, headRef) {
	n := len(h.ids)
	switch {
	case n > 0 && h.ids[n-1] == id:
		return h.heads[n-1], headRef{i: n - 1, found: true}
	case n == 0 || h.ids[n-1] < id:
		return verifiedStream{}, headRef{i: n}
	}
	from, i := max(0, n-headRunReach), 0
	if h.ids[from] <= id {
		i = from + sort.Search(n-from, func(j int) bool { return h.ids[from+j] >= id })
	} else {
		i = sort.Search(from, func(j int) bool { return h.ids[j] >= id })
	}
	if h.ids[i] == id {
		return h.heads[i], headRef{i: i, found: true}
	}
	if v, ok := h.rest[id]; ok {
		return v, headRef{i: -1, found: true}
	}
	if i < from {
		i = -1 // too far back: into rest
	}
	return verifiedStream{}, headRef{i: i}
}

// set sets id's head, where lookup said it is or goes (no other change to
// h in between).
func (h *headRun) set(id int64, ref headRef, v verifiedStream) {
	switch n := len(h.ids); {
	case ref.i < 0:
		if h.rest == nil {
			h.rest = map[int64]verifiedStream{}
		}
		h.rest[id] = v
	case ref.found:
		h.heads[ref.i] = v
	case ref.i == n:
		h.ids, h.heads = append(h.ids, id), append(h.heads, v)
	default:
		h.ids, h.heads = append(h.ids, 0), append(h.heads, verifiedStream{})
		copy(h.ids[ref.i+1:], h.ids[ref.i:n])
		copy(h.heads[ref.i+1:], h.heads[ref.i:n])
		h.ids[ref.i], h.heads[ref.i] = id, v
	}
}

// put sets id's head.
func (h *headRun) put(id int64, v verifiedStream) {
	_, ref := h.lookup(id)
	h.set(id, ref, v)
}

// len returns how many streams have a head.
func (h *headRun) len() int { return len(h.ids) + len(h.rest) }

// each calls f with every stream's head: the run's in increasing id
// order, then the rest's in no particular order.
func (h *headRun) each(f func(id int64, v verifiedStream)) {
	for i, id := range h.ids {
		f(id, h.heads[i])
	}
	for id, v := range h.rest {
		f(id, v)
	}
}
