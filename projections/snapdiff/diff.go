// Package snapdiff names the first value in which two states of a read
// model differ, walking them field by field through reflection: the
// diagnosis of `tradeledger verify --snapshots` and serve's background
// check, which find a snapshot whose bytes differ from the state rebuilt
// from the log and must say which value differs. It is not how snapshots
// are written or read (each projection encodes its own fields).
package snapdiff

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/tradeledger/tradeledger/domain/decimal"
)

// Diff returns the first difference between the values a and b point to
// (both pointers to the same type), walked as Deep writes them: fields in
// their order (those tagged `snap:"-"` left out), slices and arrays element
// by element, maps in the order of their keys, pointers followed. path
// names the value from the root (`.pairs["binance/USDT-BTC"].total.pnl`),
// as and bs are the two values as text (a value with a String method as
// that method says, a missing map entry as "absent"); found is false when
// none is found. It reads unexported fields (snapshots hold a projection's
// whole state) and calls no method but String.
//
// What it is for: a snapshot whose bytes differ from the state rebuilt
// from the log is named by the first value that differs, not by a byte
// offset (`tradeledger verify --snapshots`).
func Diff(a, b any) (path, as, bs string, found bool) {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if va.Kind() != reflect.Pointer || vb.Kind() != reflect.Pointer || va.Type() != vb.Type() {
		return "", fmt.Sprintf("%T", a), fmt.Sprintf("%T", b), true
	}
	d := &differ{seen: map[[2]unsafe.Pointer]bool{}}
	return d.diff(va, vb, "")
}

type differ struct {
	seen map[[2]unsafe.Pointer]bool // pairs of pointers walked already
}

var (
	stringerType = reflect.TypeFor[fmt.Stringer]()
	compactType  = reflect.TypeFor[decimal.Compact]()
)

// maxValueText bounds the text of a value Diff shows.
const maxValueText = 200

// text shows v: through its String method when it has one, else as %+v,
// cut at maxValueText.
func text(v reflect.Value) string {
	c := addressable(v).Addr()
	var s string
	switch {
	case v.Type() == compactType:
		// An amount in a read model's 8-byte form: shown as its value
		// (or as the side-table entry it stands for).
		cv := *c.Interface().(*decimal.Compact)
		if i, ok := cv.Ref(); ok {
			s = fmt.Sprintf("side-table entry %d", i)
		} else {
			s = cv.Decimal().String()
		}
	case v.Type().Implements(stringerType) || c.Type().Implements(stringerType):
		s = c.Interface().(fmt.Stringer).String()
	default:
		s = fmt.Sprintf("%+v", c.Elem().Interface())
	}
	if len(s) > maxValueText {
		s = s[:maxValueText] + "…"
	}
	return s
}

func (d *differ) leaf(a, b reflect.Value, path string) (string, string, string, bool) {
	return path, text(a), text(b), true
}

// diff returns the first difference between a and b, two values of the
// same type found at path, as Diff names it; found (the last result) is
// false when they are equal. Times compare as instants in the same
// location, scalars by value, and the composite kinds through the walkers
// below (a pointer pair is followed once, so cycles end).
func (d *differ) diff(a, b reflect.Value, path string) (string, string, string, bool) {
	if a.Type() == timeType {
		if !sameTime(a, b) {
			return d.leaf(a, b, path)
		}
		return "", "", "", false
	}
	if equal, scalar := scalarsEqual(a, b); scalar {
		if !equal {
			return d.leaf(a, b, path)
		}
		return "", "", "", false
	}
	switch a.Kind() {
	case reflect.Struct:
		return d.diffStructs(a, b, path)
	case reflect.Array:
		return d.diffElements(a, b, a.Len(), path)
	case reflect.Slice:
		return d.diffSlices(a, b, path)
	case reflect.Pointer:
		return d.diffPointers(a, b, path)
	case reflect.Interface:
		return d.diffInterfaces(a, b, path)
	case reflect.Map:
		if a.IsNil() != b.IsNil() {
			return path, describeNil(a), describeNil(b), true
		}
		return d.diffMaps(a, b, path)
	}
	return "", "", "", false
}

// sameTime reports whether the times a and b hold are the same instant in
// the same location (a snapshot keeps the location, so it must agree too).
func sameTime(a, b reflect.Value) bool {
	ta := *(*time.Time)(addressable(a).Addr().UnsafePointer())
	tb := *(*time.Time)(addressable(b).Addr().UnsafePointer())
	return ta.Equal(tb) && ta.Location() == tb.Location()
}

// scalarsEqual compares a and b, of the same type, when that type is a
// scalar kind (bool, a number or a string): scalar is false for any other
// kind, and equal is then meaningless.
func scalarsEqual(a, b reflect.Value) (equal, scalar bool) {
	switch a.Kind() {
	case reflect.Bool:
		return a.Bool() == b.Bool(), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int(), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return a.Uint() == b.Uint(), true
	case reflect.Float32, reflect.Float64:
		return a.Float() == b.Float(), true
	case reflect.Complex64, reflect.Complex128:
		return a.Complex() == b.Complex(), true
	case reflect.String:
		return a.String() == b.String(), true
	}
	return false, false
}

// diffStructs walks two structs field by field in declaration order,
// leaving out fields tagged `snap:"-"`. A plain struct with a String
// method (a decimal) is one value, compared and shown by its text.
func (d *differ) diffStructs(a, b reflect.Value, path string) (string, string, string, bool) {
	t := a.Type()
	if plain(t) && (t.Implements(stringerType) || reflect.PointerTo(t).Implements(stringerType)) {
		if text(a) != text(b) {
			return d.leaf(a, b, path)
		}
		return "", "", "", false
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Tag.Get("snap") == tagSkip {
			continue
		}
		if p, as, bs, ok := d.diff(fieldOf(a, i), fieldOf(b, i), path+"."+f.Name); ok {
			return p, as, bs, true
		}
	}
	return "", "", "", false
}

// diffElements walks the first n elements of two arrays or slices (both
// at least n long), naming each by its index.
func (d *differ) diffElements(a, b reflect.Value, n int, path string) (string, string, string, bool) {
	for i := range n {
		if p, as, bs, ok := d.diff(a.Index(i), b.Index(i), path+"["+strconv.Itoa(i)+"]"); ok {
			return p, as, bs, true
		}
	}
	return "", "", "", false
}

// diffSlices walks two slices: a nil slice differs from a non-nil one
// (even an empty one), then the common elements are walked, and only then
// a difference in length is named at the slice itself.
func (d *differ) diffSlices(a, b reflect.Value, path string) (string, string, string, bool) {
	if a.IsNil() != b.IsNil() {
		return path, describeNil(a), describeNil(b), true
	}
	if p, as, bs, ok := d.diffElements(a, b, min(a.Len(), b.Len()), path); ok {
		return p, as, bs, true
	}
	if a.Len() != b.Len() {
		return path, fmt.Sprintf("%d elements", a.Len()), fmt.Sprintf("%d elements", b.Len()), true
	}
	return "", "", "", false
}

// diffPointers follows two pointers to what they point to, under the same
// path. Two nils are equal, one nil differs; a pair walked already is
// equal as far as this walk goes (it is being or has been compared), which
// ends cycles.
func (d *differ) diffPointers(a, b reflect.Value, path string) (string, string, string, bool) {
	if a.IsNil() || b.IsNil() {
		if a.IsNil() != b.IsNil() {
			return path, describeNil(a), describeNil(b), true
		}
		return "", "", "", false
	}
	k := [2]unsafe.Pointer{a.UnsafePointer(), b.UnsafePointer()}
	if d.seen[k] {
		return "", "", "", false
	}
	d.seen[k] = true
	return d.diff(a.Elem(), b.Elem(), path)
}

// diffInterfaces compares two interface values: both nil are equal; one
// nil, or dynamic types that differ, are named with their types; else
// the dynamic values are walked under the same path.
func (d *differ) diffInterfaces(a, b reflect.Value, path string) (string, string, string, bool) {
	if a.IsNil() && b.IsNil() {
		return "", "", "", false
	}
	if a.IsNil() || b.IsNil() || a.Elem().Type() != b.Elem().Type() {
		return path, describeDynamic(a), describeDynamic(b), true
	}
	return d.diff(a.Elem(), b.Elem(), path)
}

// diffMaps walks the entries of two maps by the text of their keys.
func (d *differ) diffMaps(a, b reflect.Value, path string) (string, string, string, bool) {
	keys := map[string][2]reflect.Value{}
	for i, m := range []reflect.Value{a, b} {
		for _, k := range m.MapKeys() {
			e := keys[text(k)]
			e[i] = k
			keys[text(k)] = e
		}
	}
	for _, n := range slices.Sorted(maps.Keys(keys)) {
		ks := keys[n]
		at := path + "[" + strconv.Quote(n) + "]"
		switch {
		case !ks[0].IsValid():
			return at, "absent", text(b.MapIndex(ks[1])), true
		case !ks[1].IsValid():
			return at, text(a.MapIndex(ks[0])), "absent", true
		}
		if p, as, bs, ok := d.diff(addressable(a.MapIndex(ks[0])), addressable(b.MapIndex(ks[1])), at); ok {
			return p, as, bs, true
		}
	}
	return "", "", "", false
}

// fieldOf returns field i of the struct v, readable whether exported or
// not.
func fieldOf(v reflect.Value, i int) reflect.Value {
	if !v.CanAddr() {
		v = addressable(v)
	}
	return settable(v.Field(i))
}

// addressable returns v, or a copy of it, with an address, readable
// whether it came through unexported fields or not.
func addressable(v reflect.Value) reflect.Value {
	if v.CanAddr() {
		return settable(v)
	}
	c := reflect.New(v.Type()).Elem()
	if v.CanInterface() {
		c.Set(v)
	} else {
		copyInto(c, v)
	}
	return c
}

func describeNil(v reflect.Value) string {
	if v.IsNil() {
		return "nil"
	}
	switch v.Kind() {
	case reflect.Slice, reflect.Map:
		return fmt.Sprintf("%d elements", v.Len())
	}
	return text(v.Elem())
}

func describeDynamic(v reflect.Value) string {
	if v.IsNil() {
		return "nil"
	}
	return strings.TrimSpace(v.Elem().Type().String() + " " + text(v.Elem()))
}

// tagSkip is the struct tag (`snap:"-"`) of a field a projection keeps
// out of its snapshot: a cache or a lock, rebuilt or zero after a load.
const tagSkip = "-"

var timeType = reflect.TypeFor[time.Time]()

// settable returns v, addressable, as a value whose unexported fields can
// be read and set (v must be addressable).
func settable(v reflect.Value) reflect.Value {
	return reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
}

// plain reports whether t's values are plain data: memory without
// pointers, compared as they are.
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
		panic(fmt.Sprintf("snapdiff: copy of a %s", src.Kind()))
	}
}
