package snap

import (
	"fmt"
	"hash/fnv"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"time"
	"unsafe"
)

// Deep values: a projection's state written and read field by field
// through reflection, unexported fields included, so that a field added
// to the state is in the snapshot without anyone writing it down. Each
// value starts with the fingerprint of its type's layout (every field's
// name, type, offset and tag, the machine's architecture): a snapshot of a
// state whose layout changed since is refused (ErrVersion) and rebuilt
// from the log. Arrays of plain data (no pointer, string, slice or map
// anywhere in the element) are written as their memory, in runs across
// frames: a million order records load as one copy.
//
// Struct tags steer it: `snap:"-"` leaves a field out (a lock, a cache, an
// interner: Deep keeps the value the destination had, Clone leaves it
// zero); `snap:"shallow"` on a slice of slices makes Clone copy the outer
// slice only, sharing the inner arrays, whose owner copies them before it
// writes into one (copy-on-write). Pointers are followed (two pointers to
// one value become two values), maps are written in key order, time.Time
// as its instant and location (UTC or local only). Interfaces, functions
// and channels are refused unless left out.

const (
	tagSkip    = "-"
	tagShallow = "shallow"
)

// Deep writes the value v points to.
func (e *Encoder) Deep(v any) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		e.Fail(fmt.Errorf("snap.Deep of %T, not a pointer", v))
		return
	}
	t := rv.Elem().Type()
	e.Uint64(Fingerprint(t))
	w := &deepWriter{e: e, ids: map[unsafe.Pointer]uint64{}}
	if err := w.deep(rv.Elem()); err != nil {
		e.Fail(err)
	}
}

// deepWriter writes a Deep value, numbering the pointers met so that two
// pointers to one value are written once and read back as one.
type deepWriter struct {
	e   *Encoder
	ids map[unsafe.Pointer]uint64 // pointer → its number, from 1, in the order met
}

// deepReader reads a Deep value; ptrs[i] is pointer number i+1.
type deepReader struct {
	d    *Decoder
	ptrs []reflect.Value
}

// Deep reads into the value v points to a value Encoder.Deep wrote; the
// fields left out keep what they held.
func (d *Decoder) Deep(v any) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		d.Fail(fmt.Errorf("snap.Deep into %T, not a pointer", v))
		return
	}
	t := rv.Elem().Type()
	if fp := d.Uint64(); fp != Fingerprint(t) && d.err == nil {
		d.Fail(fmt.Errorf("%w: the layout of %s changed", ErrVersion, t))
		return
	}
	r := &deepReader{d: d}
	r.deep(settable(rv.Elem()))
}

// Clone returns a deep copy of *v (see Deep for the tags).
func Clone[T any](v *T) *T {
	out := new(T)
	c := cloner{copies: map[unsafe.Pointer]reflect.Value{}}
	c.clone(settable(reflect.ValueOf(out).Elem()), reflect.ValueOf(v).Elem())
	return out
}

// Assign sets every field of the struct *dst that Deep keeps to src's
// (sharing what they point to), leaving the fields left out (a lock, a
// cache) as they are: the install of a state Deep read.
func Assign[T any](dst, src *T) {
	d, s := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src).Elem()
	t := d.Type()
	for i := range t.NumField() {
		if t.Field(i).Tag.Get("snap") == tagSkip {
			continue
		}
		copyInto(settable(d.Field(i)), s.Field(i))
	}
}

// settable returns v, addressable, as a value whose unexported fields can
// be set (v must be addressable).
func settable(v reflect.Value) reflect.Value {
	return reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
}

var timeType = reflect.TypeFor[time.Time]()

// plain reports whether t's values are plain data: memory without
// pointers, copied and written as bytes.
func plain(t reflect.Type) bool {
	if t == timeType {
		return false
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return true
	case reflect.Array:
		return plain(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Tag.Get("snap") == tagSkip || !plain(f.Type) {
				return false
			}
		}
		return true
	}
	return false
}

// Fingerprint is a hash of t's layout as Deep writes it.
func Fingerprint(t reflect.Type) uint64 {
	h := fnv.New64a()
	var b strings.Builder
	b.WriteString(runtime.GOARCH)
	describe(&b, t, map[reflect.Type]bool{})
	h.Write([]byte(b.String()))
	return h.Sum64()
}

func describe(b *strings.Builder, t reflect.Type, seen map[reflect.Type]bool) {
	fmt.Fprintf(b, "(%s %s %d", t.String(), t.Kind(), t.Size())
	if seen[t] {
		b.WriteString(")")
		return
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Struct:
		if t == timeType {
			break
		}
		for i := range t.NumField() {
			f := t.Field(i)
			fmt.Fprintf(b, " %s@%d`%s`", f.Name, f.Offset, f.Tag.Get("snap"))
			if f.Tag.Get("snap") != tagSkip {
				describe(b, f.Type, seen)
			}
		}
	case reflect.Array, reflect.Slice, reflect.Pointer:
		describe(b, t.Elem(), seen)
	case reflect.Map:
		describe(b, t.Key(), seen)
		describe(b, t.Elem(), seen)
	}
	b.WriteString(")")
}

// bytesOf returns the memory of the n values of a plain type at p.
func bytesOf(p unsafe.Pointer, size uintptr, n int) []byte {
	if n == 0 || size == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(p), uintptr(n)*size)
}

func (w *deepWriter) deep(v reflect.Value) error {
	e := w.e
	t := v.Type()
	if t == timeType {
		tm := *(*time.Time)(addrOf(v))
		switch tm.Location() {
		case time.UTC:
			e.Byte(0)
		case time.Local:
			e.Byte(1)
		default:
			return fmt.Errorf("snap: a time in %s (only UTC and local are kept)", tm.Location())
		}
		e.Bool(tm.IsZero())
		if !tm.IsZero() {
			e.Int64(tm.UnixNano())
		}
		return nil
	}
	if plain(t) {
		e.Raw(bytesOf(addrOf(v), t.Size(), 1))
		return nil
	}
	switch t.Kind() {
	case reflect.String:
		e.Text(v.String())
	case reflect.Struct:
		for i := range t.NumField() {
			if t.Field(i).Tag.Get("snap") == tagSkip {
				continue
			}
			if err := w.deep(v.Field(i)); err != nil {
				return fmt.Errorf("%s.%s: %w", t, t.Field(i).Name, err)
			}
		}
	case reflect.Array:
		for i := range v.Len() {
			if err := w.deep(v.Index(i)); err != nil {
				return err
			}
		}
	case reflect.Slice:
		e.Bool(v.IsNil())
		e.Len(v.Len())
		if plain(t.Elem()) {
			if v.Len() > 0 {
				e.Raw(bytesOf(v.UnsafePointer(), t.Elem().Size(), v.Len()))
			}
			return nil
		}
		for i := range v.Len() {
			if err := w.deep(v.Index(i)); err != nil {
				return err
			}
		}
	case reflect.Pointer:
		// 0: nil; the pointer's number when met before; a new number,
		// then the value, when not.
		if v.IsNil() {
			e.Uvarint(0)
			return nil
		}
		if id, ok := w.ids[v.UnsafePointer()]; ok {
			e.Uvarint(id)
			return nil
		}
		id := uint64(len(w.ids) + 1)
		w.ids[v.UnsafePointer()] = id
		e.Uvarint(id)
		return w.deep(v.Elem())
	case reflect.Map:
		e.Bool(v.IsNil())
		e.Len(v.Len())
		keys := v.MapKeys()
		var err error
		slices.SortFunc(keys, func(a, b reflect.Value) int { return w.compare(a, b, &err) })
		if err != nil {
			return err
		}
		for _, k := range keys {
			if err := w.deep(k); err != nil {
				return err
			}
			if err := w.deep(v.MapIndex(k)); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("snap: cannot keep a value of kind %s (%s)", t.Kind(), t)
	}
	return nil
}

// addrOf returns the address of v's memory, copying v when it has none.
func addrOf(v reflect.Value) unsafe.Pointer {
	if v.CanAddr() {
		return unsafe.Pointer(v.UnsafeAddr())
	}
	c := reflect.New(v.Type())
	copyInto(c.Elem(), v)
	return c.UnsafePointer()
}

// copyInto sets dst (settable) to src's value without Interface.
func copyInto(dst, src reflect.Value) {
	if src.CanAddr() {
		dst.Set(reflect.NewAt(src.Type(), unsafe.Pointer(src.UnsafeAddr())).Elem())
		return
	}
	switch src.Kind() {
	case reflect.String:
		dst.SetString(src.String())
	case reflect.Bool:
		dst.SetBool(src.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		dst.SetInt(src.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		dst.SetUint(src.Uint())
	case reflect.Float32, reflect.Float64:
		dst.SetFloat(src.Float())
	case reflect.Struct:
		for i := range src.NumField() {
			copyInto(settable(dst.Field(i)), src.Field(i))
		}
	case reflect.Array:
		for i := range src.Len() {
			copyInto(settable(dst.Index(i)), src.Index(i))
		}
	case reflect.Pointer, reflect.Map: // one word: the pointer
		p := src.UnsafePointer()
		dst.Set(reflect.NewAt(src.Type(), unsafe.Pointer(&p)).Elem())
	default:
		panic(fmt.Sprintf("snap: copy of a %s", src.Kind()))
	}
}

// compare orders map keys: numbers by value, strings and bools as such,
// structs and arrays field by field, pointers by their numbers (a key
// pointing to a value not written before is an error).
func (w *deepWriter) compare(a, b reflect.Value, err *error) int {
	switch a.Kind() {
	case reflect.String:
		return strings.Compare(a.String(), b.String())
	case reflect.Bool:
		switch {
		case a.Bool() == b.Bool():
			return 0
		case !a.Bool():
			return -1
		}
		return 1
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return cmpOrdered(a.Int(), b.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return cmpOrdered(a.Uint(), b.Uint())
	case reflect.Float32, reflect.Float64:
		return cmpOrdered(a.Float(), b.Float())
	case reflect.Struct:
		for i := range a.NumField() {
			if c := w.compare(a.Field(i), b.Field(i), err); c != 0 {
				return c
			}
		}
		return 0
	case reflect.Array:
		for i := range a.Len() {
			if c := w.compare(a.Index(i), b.Index(i), err); c != 0 {
				return c
			}
		}
		return 0
	case reflect.Pointer:
		ia, oka := w.ids[a.UnsafePointer()]
		ib, okb := w.ids[b.UnsafePointer()]
		if (!oka && !a.IsNil() || !okb && !b.IsNil()) && *err == nil {
			*err = fmt.Errorf("snap: a map key of type %s points to a value not written before it", a.Type())
		}
		return cmpOrdered(ia, ib)
	}
	if *err == nil {
		*err = fmt.Errorf("snap: a map key of kind %s (%s)", a.Kind(), a.Type())
	}
	return 0
}

func cmpOrdered[T int64 | uint64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// deep reads into v (settable).
func (r *deepReader) deep(v reflect.Value) {
	d := r.d
	if d.err != nil {
		return
	}
	t := v.Type()
	if t == timeType {
		loc := time.UTC
		if d.Byte() == 1 {
			loc = time.Local
		}
		if zero := d.Bool(); !zero {
			v.Set(reflect.ValueOf(time.Unix(0, d.Int64()).In(loc)))
		} else {
			v.Set(reflect.Zero(t))
		}
		return
	}
	if plain(t) {
		d.Raw(bytesOf(unsafe.Pointer(v.UnsafeAddr()), t.Size(), 1))
		return
	}
	switch t.Kind() {
	case reflect.String:
		v.SetString(d.Text())
	case reflect.Struct:
		for i := range t.NumField() {
			if t.Field(i).Tag.Get("snap") == tagSkip {
				continue
			}
			r.deep(settable(v.Field(i)))
		}
	case reflect.Array:
		for i := range v.Len() {
			r.deep(settable(v.Index(i)))
		}
	case reflect.Slice:
		isNil := d.Bool()
		el := t.Elem()
		minSize := 1 // an element written in one byte or more
		if plain(el) {
			minSize = int(min(el.Size(), 1<<20))
		}
		n := d.Len(minSize)
		if isNil || d.err != nil {
			v.Set(reflect.Zero(t))
			return
		}
		s := reflect.MakeSlice(t, n, n)
		if plain(el) {
			if n > 0 {
				d.Raw(bytesOf(s.UnsafePointer(), el.Size(), n))
			}
		} else {
			for i := range n {
				r.deep(s.Index(i))
			}
		}
		v.Set(s)
	case reflect.Pointer:
		id := d.Uvarint()
		switch {
		case id == 0:
			v.Set(reflect.Zero(t))
		case id <= uint64(len(r.ptrs)):
			p := r.ptrs[id-1]
			if p.Type() != t {
				d.Failf("pointer %d is a %s, read as a %s", id, p.Type(), t)
				return
			}
			v.Set(p)
		case id == uint64(len(r.ptrs))+1:
			p := reflect.New(t.Elem())
			if !v.IsNil() {
				copyInto(p.Elem(), v.Elem()) // the fields left out keep their values
			}
			r.ptrs = append(r.ptrs, p)
			r.deep(p.Elem())
			v.Set(p)
		default:
			d.Failf("pointer %d after %d", id, len(r.ptrs))
		}
	case reflect.Map:
		isNil := d.Bool()
		n := d.Len(1)
		if isNil || d.err != nil {
			v.Set(reflect.Zero(t))
			return
		}
		m := reflect.MakeMapWithSize(t, n)
		for range n {
			k := reflect.New(t.Key()).Elem()
			r.deep(k)
			e := reflect.New(t.Elem()).Elem()
			r.deep(e)
			if d.err != nil {
				return
			}
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	default:
		d.Fail(fmt.Errorf("snap: cannot read a value of kind %s (%s)", t.Kind(), t))
	}
}

// cloner makes a deep copy, one copy of each value however many pointers
// point to it.
type cloner struct {
	copies map[unsafe.Pointer]reflect.Value
}

// clone sets dst (settable) to a deep copy of src.
func (c *cloner) clone(dst, src reflect.Value) {
	t := src.Type()
	if plain(t) || t == timeType {
		copyInto(dst, src)
		return
	}
	switch t.Kind() {
	case reflect.String:
		dst.SetString(src.String())
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			switch f.Tag.Get("snap") {
			case tagSkip:
				continue
			case tagShallow:
				if f.Type.Kind() == reflect.Slice && !src.Field(i).IsNil() {
					s := src.Field(i)
					out := reflect.MakeSlice(f.Type, s.Len(), s.Len())
					for k := range s.Len() {
						copyInto(out.Index(k), s.Index(k)) // the inner slices' headers: arrays shared
					}
					settable(dst.Field(i)).Set(out)
					continue
				}
			}
			c.clone(settable(dst.Field(i)), src.Field(i))
		}
	case reflect.Array:
		for i := range src.Len() {
			c.clone(settable(dst.Index(i)), src.Index(i))
		}
	case reflect.Slice:
		if src.IsNil() {
			dst.Set(reflect.Zero(t))
			return
		}
		out := reflect.MakeSlice(t, src.Len(), src.Len())
		if plain(t.Elem()) {
			size := t.Elem().Size()
			copy(bytesOf(out.UnsafePointer(), size, out.Len()), bytesOf(src.UnsafePointer(), size, src.Len()))
		} else {
			for i := range src.Len() {
				c.clone(out.Index(i), src.Index(i))
			}
		}
		dst.Set(out)
	case reflect.Pointer:
		if src.IsNil() {
			dst.Set(reflect.Zero(t))
			return
		}
		if p, ok := c.copies[src.UnsafePointer()]; ok {
			dst.Set(p)
			return
		}
		p := reflect.New(t.Elem())
		c.copies[src.UnsafePointer()] = p
		c.clone(p.Elem(), src.Elem())
		dst.Set(p)
	case reflect.Map:
		if src.IsNil() {
			dst.Set(reflect.Zero(t))
			return
		}
		m := reflect.MakeMapWithSize(t, src.Len())
		it := src.MapRange()
		for it.Next() {
			k := reflect.New(t.Key()).Elem()
			c.clone(k, it.Key())
			e := reflect.New(t.Elem()).Elem()
			c.clone(e, it.Value())
			m.SetMapIndex(k, e)
		}
		dst.Set(m)
	default:
		panic(fmt.Sprintf("snap: cannot clone a value of kind %s (%s)", t.Kind(), t))
	}
}
