package snap

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
)

type deepRec struct {
	a, b int64
	c    domain.Compact
	d    domain.Decimal
}

type deepKey struct {
	ex, pair string
}

type deepInner struct {
	name  string
	recs  []deepRec
	tags  map[[2]string]uint32
	clamp map[int64]domain.Lot
	fees  []deepFee
}

type deepFee struct {
	asset string
	v     domain.Decimal
}

type deepState struct {
	mu     chan int `snap:"-"`
	keep   int      `snap:"-"`
	n      int
	ok     bool
	s      string
	chunks [][]deepRec `snap:"shallow"`
	inner  []*deepInner
	by     map[deepKey]uint32
	lists  map[string][]string
	ptr    *deepInner
	nilp   *deepInner
	nils   []int
	empty  []int
	when   time.Time
	zero   time.Time
	arr    [3]string
	sparse map[int64]uint8
}

func newDeepState() *deepState {
	return &deepState{
		mu: make(chan int), keep: 7, n: -42, ok: true, s: "héllo",
		chunks: [][]deepRec{{{1, 2, 3, domain.MustDecimal("1.5")}}, {{4, 5, 6, domain.MustDecimal("-2")}, {7, 8, 9, domain.Zero}}},
		inner: []*deepInner{{name: "x", recs: []deepRec{{a: 1}}, tags: map[[2]string]uint32{{"USDT", "BTC"}: 3, {"A", "B"}: 1},
			clamp: map[int64]domain.Lot{3: {Qty: domain.MustDecimal("0.1"), Time: 5}}, fees: []deepFee{{"BNB", domain.MustDecimal("0.001")}}}},
		by:     map[deepKey]uint32{{"binance", "USDT-BTC"}: 1, {"b", "a"}: 2},
		lists:  map[string][]string{"binance": {"BNB", "X"}, "e": nil},
		ptr:    &deepInner{name: "p"},
		empty:  []int{},
		when:   time.UnixMilli(1700000000123).UTC(),
		arr:    [3]string{"a", "", "c"},
		sparse: map[int64]uint8{-5: 1, 1 << 40: 2},
	}
}

// TestDeepRoundTrip: a state of every kind of field reads back equal, the
// fields left out keep the destination's values, and a clone is equal and
// shares nothing but what shallow says.
func TestDeepRoundTrip(t *testing.T) {
	src := newDeepState()
	var buf bytes.Buffer
	e := NewEncoder(&buf)
	e.Deep(src)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	dst := &deepState{keep: 9}
	d := NewDecoder(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	d.Deep(dst)
	if err := d.Done(); err != nil {
		t.Fatal(err)
	}
	if dst.keep != 9 || dst.mu != nil {
		t.Fatalf("fields left out changed: keep %d", dst.keep)
	}
	if dst.nilp != nil || dst.nils != nil || dst.empty == nil || !dst.zero.IsZero() {
		t.Fatal("a nil pointer, a nil slice, an empty slice or a zero time did not read back as such")
	}
	want := *src
	want.mu, want.keep = nil, 9
	if !reflect.DeepEqual(&want, dst) {
		t.Fatalf("read back\n%+v\nwant\n%+v", dst, &want)
	}

	c := Clone(src)
	want.keep = 0
	if !reflect.DeepEqual(&want, c) {
		t.Fatalf("clone\n%+v\nwant\n%+v", c, &want)
	}
	a := &deepState{keep: 3}
	Assign(a, c)
	if a.keep != 3 || a.n != c.n || a.ptr != c.ptr || &a.inner[0] != &c.inner[0] {
		t.Fatal("Assign: want every kept field set to the source's, shared, and the others kept")
	}
	src.inner[0].recs[0].a = 99
	src.by[deepKey{"new", "x"}] = 5
	src.lists["binance"][0] = "changed"
	if c.inner[0].recs[0].a == 99 || len(c.by) != 2 || c.lists["binance"][0] == "changed" {
		t.Fatal("the clone shares memory with its source")
	}
	src.chunks[0][0].a = 77 // shallow: the inner arrays are shared
	src.chunks[1] = nil     // but not the outer slice
	if c.chunks[0][0].a != 77 || c.chunks[1] == nil {
		t.Fatal("shallow clone: want the inner arrays shared and the outer slice copied")
	}
}

// TestDeepLayoutChanged: a value written with one layout is refused by a
// type of another (ErrVersion).
func TestDeepLayoutChanged(t *testing.T) {
	var buf bytes.Buffer
	e := NewEncoder(&buf)
	e.Deep(&deepRec{a: 1})
	e.Close()
	var other struct{ a, b, c int64 }
	d := NewDecoder(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	d.Deep(&other)
	if !errors.Is(d.Err(), ErrVersion) {
		t.Fatalf("err %v, want ErrVersion", d.Err())
	}
}

type aliasKey struct {
	p  *deepInner
	to string
}

type aliasState struct {
	items []*deepInner
	by    map[aliasKey]*deepInner
	same  *deepInner
}

// TestDeepAliases: two pointers to one value read back, and clone, as two
// pointers to one value, also as map keys.
func TestDeepAliases(t *testing.T) {
	a, b := &deepInner{name: "a"}, &deepInner{name: "b"}
	src := &aliasState{items: []*deepInner{a, b}, by: map[aliasKey]*deepInner{{b, "x"}: a, {a, "y"}: b}, same: b}
	check := func(what string, got *aliasState) {
		t.Helper()
		ga, gb := got.items[0], got.items[1]
		if ga == a || gb == b || ga.name != "a" || gb.name != "b" || got.same != gb ||
			got.by[aliasKey{gb, "x"}] != ga || got.by[aliasKey{ga, "y"}] != gb {
			t.Fatalf("%s: pointers to one value are not one pointer", what)
		}
	}
	var buf bytes.Buffer
	e := NewEncoder(&buf)
	e.Deep(src)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	got := &aliasState{}
	d := NewDecoder(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	d.Deep(got)
	if err := d.Done(); err != nil {
		t.Fatal(err)
	}
	check("read back", got)
	check("clone", Clone(src))
}
