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
	if err := e.deep(rv.Elem()); err != nil {
		e.Fail(err)
	}
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
	d.deep(settable(rv.Elem()))
}

// Clone returns a deep copy of *v (see Deep for the tags).
func Clone[T any](v *T) T {
	var out T
	cloneValue(settable(reflect.ValueOf(&out).Elem()), reflect.ValueOf(v).Elem())
	return out
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

func (e *Encoder) deep(v reflect.Value) error {
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
			if err := e.deep(v.Field(i)); err != nil {
				return fmt.Errorf("%s.%s: %w", t, t.Field(i).Name, err)
			}
		}
	case reflect.Array:
		for i := range v.Len() {
			if err := e.deep(v.Index(i)); err != nil {
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
			if err := e.deep(v.Index(i)); err != nil {
				return err
			}
		}
	case reflect.Pointer:
		e.Bool(v.IsNil())
		if !v.IsNil() {
			return e.deep(v.Elem())
		}
	case reflect.Map:
		e.Bool(v.IsNil())
		e.Len(v.Len())
		keys := v.MapKeys()
		slices.SortFunc(keys, compareValues)
		for _, k := range keys {
			if err := e.deep(k); err != nil {
				return err
			}
			if err := e.deep(v.MapIndex(k)); err != nil {
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

// compareValues orders map keys: numbers by value, strings and bools as
// such, structs and arrays field by field.
func compareValues(a, b reflect.Value) int {
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
			if c := compareValues(a.Field(i), b.Field(i)); c != 0 {
				return c
			}
		}
		return 0
	case reflect.Array:
		for i := range a.Len() {
			if c := compareValues(a.Index(i), b.Index(i)); c != 0 {
				return c
			}
		}
		return 0
	}
	panic(fmt.Sprintf("snap: a map key of kind %s", a.Kind()))
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
func (d *Decoder) deep(v reflect.Value) {
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
			d.deep(settable(v.Field(i)))
		}
	case reflect.Array:
		for i := range v.Len() {
			d.deep(settable(v.Index(i)))
		}
	case reflect.Slice:
		isNil := d.Bool()
		el := t.Elem()
		n := d.Len(max(int(min(el.Size(), 1<<20)), 1))
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
				d.deep(s.Index(i))
			}
		}
		v.Set(s)
	case reflect.Pointer:
		if d.Bool() {
			v.Set(reflect.Zero(t))
			return
		}
		p := reflect.New(t.Elem())
		if !v.IsNil() {
			p.Elem().Set(v.Elem()) // the fields left out keep their values
		}
		d.deep(p.Elem())
		v.Set(p)
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
			d.deep(k)
			e := reflect.New(t.Elem()).Elem()
			d.deep(e)
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

// cloneValue sets dst (settable) to a deep copy of src.
func cloneValue(dst, src reflect.Value) {
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
					c := reflect.MakeSlice(f.Type, s.Len(), s.Len())
					for k := range s.Len() {
						copyInto(c.Index(k), s.Index(k)) // the inner slices' headers: arrays shared
					}
					settable(dst.Field(i)).Set(c)
					continue
				}
			}
			cloneValue(settable(dst.Field(i)), src.Field(i))
		}
	case reflect.Array:
		for i := range src.Len() {
			cloneValue(settable(dst.Index(i)), src.Index(i))
		}
	case reflect.Slice:
		if src.IsNil() {
			dst.Set(reflect.Zero(t))
			return
		}
		c := reflect.MakeSlice(t, src.Len(), src.Len())
		if plain(t.Elem()) {
			size := t.Elem().Size()
			copy(bytesOf(c.UnsafePointer(), size, c.Len()), bytesOf(src.UnsafePointer(), size, src.Len()))
		} else {
			for i := range src.Len() {
				cloneValue(c.Index(i), src.Index(i))
			}
		}
		dst.Set(c)
	case reflect.Pointer:
		if src.IsNil() {
			dst.Set(reflect.Zero(t))
			return
		}
		p := reflect.New(t.Elem())
		cloneValue(p.Elem(), src.Elem())
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
			cloneValue(k, it.Key())
			e := reflect.New(t.Elem()).Elem()
			cloneValue(e, it.Value())
			m.SetMapIndex(k, e)
		}
		dst.Set(m)
	default:
		panic(fmt.Sprintf("snap: cannot clone a value of kind %s (%s)", t.Kind(), t))
	}
}
