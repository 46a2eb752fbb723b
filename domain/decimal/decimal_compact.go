package decimal

import "math/bits"

// Compact is an 8-byte form of a Decimal, for read models that keep many
// (an order record holds ten): a 61-bit coefficient and a 3-bit decimal
// exponent, which holds exactly every value with at most 12 decimals up to
// about ±1.15×10^6, with at most 8 up to ±1.15×10^10, and so on to whole
// numbers up to ±1.15×10^18. A value it cannot hold (CompactOf reports
// false) is kept by the caller in a side table of Decimals, and the record
// holds CompactRef(index) instead; Ref tells the two apart. The zero value
// is 0.
type Compact int64

// The layout of a Compact: the low CompactTagBits bits are its tag (the
// decimal exponent, or CompactRefTag for a side-table index), the rest its
// coefficient. A Compact whose tag is 0 is a whole number of 10^-12 units:
// comparisons of such values (Lots' unit costs) may multiply the
// coefficients directly.
const (
	CompactTagBits = 3
	CompactRefTag  = 1<<CompactTagBits - 1 // tag of a side-table index
	compactMax     = 1 << (63 - CompactTagBits)
)

// CompactOf returns d's compact form, or false when it needs a side table.
func CompactOf(d Decimal) (Compact, bool) {
	if c, ok := d.small(); ok && c >= -compactMax && c < compactMax {
		return Compact(c << CompactTagBits), true
	}
	hi, lo, neg := d.mag()
	// Tag t holds a coefficient of 10^(2t-12): strip two zeros per tag.
	for tag := Compact(1); tag < CompactRefTag; tag++ {
		if hi == 0 { // a constant division, which the compiler multiplies
			if lo%100 != 0 {
				return 0, false
			}
			lo /= 100
		} else {
			qh, r := bits.Div64(0, hi, 100)
			ql, r := bits.Div64(r, lo, 100)
			if r != 0 {
				return 0, false
			}
			hi, lo = qh, ql
		}
		if hi == 0 && lo < compactMax {
			m := int64(lo)
			if neg {
				m = -m
			}
			return Compact(m<<CompactTagBits) | tag, true
		}
	}
	return 0, false
}

// CompactRef returns the compact form that stands for entry i (≥ 0) of the
// caller's side table.
func CompactRef(i int) Compact { return Compact(i)<<CompactTagBits | CompactRefTag }

// Ref returns the side-table index c stands for, and whether it is one.
func (c Compact) Ref() (int, bool) {
	if c&CompactRefTag != CompactRefTag {
		return 0, false
	}
	return int(c >> CompactTagBits), true
}

// Decimal returns the value of c, which must not be a Ref.
func (c Compact) Decimal() Decimal {
	tag := c & CompactRefTag
	m := int64(c) >> CompactTagBits
	if tag == 0 {
		return fromInt64(m)
	}
	hi, lo := bits.Mul64(abs64(m), pow10[2*tag])
	d, _ := fromMag(hi, lo, m < 0) // < 2^60 × 10^12 < 2^127
	return d
}

// CompactTable keeps the values of Compact amounts that change in place (a
// lot's quantity and cost as it is partly consumed) when a Compact cannot
// hold them: a slot per such amount, freed when the amount shrinks into a
// Compact or goes, and reused, so that the table holds no more than the
// wide amounts alive. The zero value is empty.
type CompactTable struct {
	Wide []Decimal // the slots; a slot's index is its CompactRef
	Free []int     // free slots of Wide
}

// Get returns the value of c.
func (t *CompactTable) Get(c Compact) Decimal {
	if i, ok := c.Ref(); ok {
		return t.Wide[i]
	}
	return c.Decimal()
}

// Put returns the compact form of a new amount d, in a slot of its own
// when it needs one.
func (t *CompactTable) Put(d Decimal) Compact {
	if c, ok := CompactOf(d); ok {
		return c
	}
	if n := len(t.Free); n > 0 {
		i := t.Free[n-1]
		t.Free = t.Free[:n-1]
		t.Wide[i] = d
		return CompactRef(i)
	}
	t.Wide = append(t.Wide, d)
	return CompactRef(len(t.Wide) - 1)
}

// Set changes the amount *c to d, in the slot *c has if it needs one.
func (t *CompactTable) Set(c *Compact, d Decimal) {
	i, ok := c.Ref()
	if !ok {
		*c = t.Put(d)
		return
	}
	if n, ok := CompactOf(d); ok {
		t.Drop(*c)
		*c = n
		return
	}
	t.Wide[i] = d
}

// Drop frees the slot of an amount that goes (nothing for one without).
func (t *CompactTable) Drop(c Compact) {
	i, ok := c.Ref()
	if !ok {
		return
	}
	t.Wide[i] = Zero
	t.Free = append(t.Free, i)
	if len(t.Free) == len(t.Wide) { // none left: the storage starts over
		if cap(t.Wide) > 64 {
			t.Wide, t.Free = nil, nil // a spike of wide amounts keeps no memory
		} else {
			t.Wide, t.Free = t.Wide[:0], t.Free[:0]
		}
	}
}
