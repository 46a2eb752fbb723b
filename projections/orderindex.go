package projections

// idIndex maps an order id to a small value V. Order ids are the Trader's:
// dense and increasing from 1, so a slice indexed by id holds them in the
// size of V each and without hashing, which on a replay of a million
// orders is most of what a map would cost. The slice grows only while at
// least a quarter of it is used; other ids (an imported history with
// sparse ids) go to a map, so memory stays proportional to the orders held
// whatever the ids.
type idIndex[V uint8 | uint32] struct {
	dense  []V // dense[id] = value+1; 0 is no order
	used   int // non-zero entries of dense
	sparse map[int64]V
}

// orderIndex is the Ledger's: order id → pair index | sideSell bit.
type orderIndex = idIndex[uint32]

// denseSlack is how long the slice may be regardless of its use.
const denseSlack = 1024

func (x *idIndex[V]) get(id int64) (V, bool) {
	if id >= 0 && id < int64(len(x.dense)) {
		v := x.dense[id]
		return v - 1, v != 0
	}
	v, ok := x.sparse[id]
	return v, ok
}

// set records id's value; v must be below V's largest value.
func (x *idIndex[V]) set(id int64, v V) {
	n := int64(len(x.dense))
	if id >= n && id < 4*int64(x.used+len(x.sparse)+1)+denseSlack {
		// Grow, at least doubling (amortized), within the density bound.
		size := min(max(id+1, 2*n), 4*int64(x.used+len(x.sparse)+1)+denseSlack)
		x.dense = append(x.dense, make([]V, size-n)...)
		n = size
		// Ids now inside the slice move into it: one home per id.
		for k, sv := range x.sparse {
			if k >= 0 && k < n {
				x.dense[k] = sv + 1
				x.used++
				delete(x.sparse, k)
			}
		}
	}
	if id >= 0 && id < n {
		if x.dense[id] == 0 {
			x.used++
		}
		x.dense[id] = v + 1
		return
	}
	if x.sparse == nil {
		x.sparse = map[int64]V{}
	}
	x.sparse[id] = v
}
