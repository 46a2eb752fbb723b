package snap

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// fill sets every field of v (a pointer to a struct) to a value that is not
// its zero value, so that a codec that leaves a field out is caught.
func fill(t *testing.T, v reflect.Value, n *int) {
	t.Helper()
	*n++
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(decimal.Decimal{}) {
			v.Set(reflect.ValueOf(decimal.DecimalFromInt(int64(*n))))
			return
		}
		for i := range v.NumField() {
			if !v.Type().Field(i).IsExported() {
				t.Fatalf("%s has an unexported field %s: the codec cannot see it", v.Type(), v.Type().Field(i).Name)
			}
			fill(t, v.Field(i), n)
		}
	case reflect.String:
		v.SetString("s" + string(rune('a'+*n%26)))
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(int64(*n))
	case reflect.Uint64:
		v.SetUint(uint64(*n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			fill(t, s.Index(i), n)
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(t, k, n)
		fill(t, e, n)
		m.SetMapIndex(k, e)
		v.Set(m)
	default:
		t.Fatalf("fill: a field of kind %s", v.Kind())
	}
}

// TestAggregatesRoundTrip fills every field of an Order and an Oco and
// reads them back equal (a field the codec leaves out fails here).
func TestAggregatesRoundTrip(t *testing.T) {
	var o, o2 domain.Order
	var c, c2 domain.Oco
	n := 0
	fill(t, reflect.ValueOf(&o).Elem(), &n)
	fill(t, reflect.ValueOf(&c).Elem(), &n)
	var buf bytes.Buffer
	e := NewEncoder(&buf)
	e.Order(&o)
	e.Oco(&c)
	empty := domain.NewOrder()
	e.Order(&empty)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	d := NewDecoder(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	d.Order(&o2)
	d.Oco(&c2)
	var empty2 domain.Order
	d.Order(&empty2)
	if err := d.Done(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(o, o2) {
		t.Fatalf("order\n%+v\nread back as\n%+v", o, o2)
	}
	if !reflect.DeepEqual(c, c2) {
		t.Fatalf("oco\n%+v\nread back as\n%+v", c, c2)
	}
	if !reflect.DeepEqual(empty, empty2) {
		t.Fatalf("empty order read back as %+v", empty2)
	}
}
