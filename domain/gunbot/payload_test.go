package gunbot

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// TestPayloadsAsJSONMarshal: the hand encoders give json.Marshal's bytes,
// for the orders an import makes and for fields it never sets, strings
// that need escaping included.
func TestPayloadsAsJSONMarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	strs := []string{"", "binance", "USDT-BTC", "buy", "import-4503599627370497", "a\"b", "a\\b", "<x>", "a&b", "é", "\x01", "\u2028", "~ !#$%'()*+,-./:;=?@[]^_`{|}"}
	str := func() string { return strs[r.IntN(len(strs))] }
	dec := func() decimal.Decimal {
		switch r.IntN(4) {
		case 0:
			return decimal.Zero
		case 1:
			return decimal.NewDecimal(-r.Int64N(1e12), -8)
		}
		return decimal.NewDecimal(r.Int64(), -8)
	}
	num := func() int64 {
		if r.IntN(3) == 0 {
			return 0
		}
		return r.Int64() - r.Int64()
	}
	check := func(v any, got []byte) {
		t.Helper()
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%#v:\n got %s\nwant %s", v, got, want)
		}
	}
	for i := 0; i < 20000; i++ {
		req := domain.OrderRequested{OrderID: num(), Exchange: str(), Pair: str(), Side: domain.Side(str()), Kind: domain.OrderKind(str()),
			Amount: dec(), Price: dec(), StopPrice: dec(), LimitPrice: dec(), ClientOrderID: str(), OcoID: num(),
			IdempotencyKey: str(), IdempotencyFingerprint: str()}
		check(&req, orderRequestedJSON(&req))
		acc := domain.OrderAccepted{ExchangeOrderID: str()}
		check(&acc, orderAcceptedJSON(&acc))
		fill := domain.OrderFilled{FillID: str(), Price: dec(), Quantity: dec(), Fee: dec(), FeeAsset: str(), Seq: uint64(num()), ExchangeTime: num()}
		check(&fill, orderFilledJSON(&fill))
	}
}

// TestOrderEventsUnchanged: an order's events are those the importer made
// with encoding/json and hash.Hash-built ids (the code before the hand
// encoders, kept here as the reference).
func TestOrderEventsUnchanged(t *testing.T) {
	oldIDHash := func(parts []string) [32]byte {
		h := sha256.New()
		h.Write([]byte("tradeledger-import"))
		for _, p := range parts {
			h.Write([]byte{0})
			h.Write([]byte(p))
		}
		var sum [32]byte
		h.Sum(sum[:0])
		return sum
	}
	oldUUID := func(u [16]byte) string {
		u[6] = 0x80 | (u[6] & 0x0f)
		u[8] = 0x80 | (u[8] & 0x3f)
		s := hex.EncodeToString(u[:])
		return s[0:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:32]
	}
	oldTimeID := func(ms int64, parts ...string) string {
		sum := oldIDHash(parts)
		var u [16]byte
		u[0], u[1] = byte(ms>>40), byte(ms>>32)
		u[2], u[3], u[4], u[5] = byte(ms>>24), byte(ms>>16), byte(ms>>8), byte(ms)
		copy(u[6:], sum[:10])
		return oldUUID(u)
	}
	oldID := func(parts ...string) string {
		sum := oldIDHash(parts)
		var u [16]byte
		copy(u[:], sum[:])
		return oldUUID(u)
	}
	long := string(bytes.Repeat([]byte("x"), 300)) // beyond idHash's buffer
	if got, want := ID("a", long, "b"), oldID("a", long, "b"); got != want {
		t.Fatalf("ID = %s, want %s", got, want)
	}
	im := &Importer{Clock: domain.SystemClock{}}
	for i := 0; i < 2000; i++ {
		o := Order{Exchange: "binance", Pair: "USDT-BTC", Side: domain.Buy, Time: 1_700_000_000_000 + int64(i)*60_000,
			Rate: decimal.MustDecimal("30123.45"), Amount: decimal.MustDecimal("0.002"), SourceID: fmt.Sprint(i), ID: orderIDBase + int64(i)*7919}
		if i%3 == 1 {
			o.Side, o.Exchange, o.Pair, o.SourceID = domain.Sell, "kucoin", "BTC-ETH", ""
		}
		idKey := fmt.Sprint(o.ID)
		quote, _, _ := domain.SplitPair(o.Pair)
		want := []domain.Event{
			im.event(domain.TypeOrderRequested, domain.OrderRequested{
				OrderID: o.ID, Exchange: o.Exchange, Pair: o.Pair, Side: o.Side, Kind: domain.KindLimit,
				Amount: o.Amount, Price: o.Rate, ClientOrderID: "import-" + idKey,
			}, o.Time, oldTimeID(o.Time, domain.TypeOrderRequested, idKey, "requested")),
			im.event(domain.TypeOrderAccepted, domain.OrderAccepted{ExchangeOrderID: o.SourceID}, o.Time, oldTimeID(o.Time, domain.TypeOrderAccepted, idKey, "accepted")),
			im.event(domain.TypeOrderFilled, domain.OrderFilled{
				FillID: "import-" + idKey, Price: o.Rate, Quantity: o.Amount, FeeAsset: quote,
			}, o.Time, oldTimeID(o.Time, domain.TypeOrderFilled, idKey, "filled")),
		}
		u := im.Order(o)
		if got, want := u.What, fmt.Sprintf("order %s %s %s", o.Exchange, o.Pair, o.SourceID); got != want {
			t.Fatalf("What = %q, want %q", got, want)
		}
		if u.Stream != domain.OrderStream(o.ID) || u.Expected != domain.NoStream || len(u.Events) != 3 {
			t.Fatalf("unit %+v", u.StreamAppend)
		}
		for j := range want {
			g, w := u.Events[j], want[j]
			if g.ID != w.ID || g.Type != w.Type || g.Schema != w.Schema || g.Time != w.Time || g.Actor != w.Actor || !bytes.Equal(g.Data, w.Data) {
				t.Fatalf("order %d event %d:\n got %+v %s\nwant %+v %s", i, j, g, g.Data, w, w.Data)
			}
		}
	}
}

// TestOrderIntoIsOrder: OrderInto gives the unit Order gives, its events
// written into the array it is handed (whatever that held), for orders
// with and without a legacy id and a source id.
func TestOrderIntoIsOrder(t *testing.T) {
	im := &Importer{Clock: domain.NewManualClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))}
	for _, o := range []Order{
		{Exchange: "binance", Pair: "USDT-BTC", Side: domain.Buy, Time: 1_700_000_000_000, Rate: decimal.MustDecimal("30000.5"),
			Amount: decimal.MustDecimal("0.002"), SourceID: "77", ID: 3_000_000_000_000_001, LegacyID: 5_000_000_000_000_001},
		{Exchange: "kraken", Pair: "EUR-ETH", Side: domain.Sell, Time: 1_600_000_000_000, Rate: decimal.MustDecimal("1800"),
			Amount: decimal.MustDecimal("1.5"), ID: 3_000_000_000_000_002},
	} {
		want := im.Order(o)
		buf := make([]domain.Event, OrderEvents)
		for i := range buf {
			buf[i] = domain.Event{ID: "stale", Type: "Stale", Data: []byte(`{"stale":true}`), Version: 9}
		}
		got := im.OrderInto(o, buf)
		if &got.Events[0] != &buf[0] || len(got.Events) != OrderEvents || cap(got.Events) != OrderEvents {
			t.Fatalf("order %d: the events are not the array handed in", o.ID)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("order %d: OrderInto = %+v, want Order's %+v", o.ID, got, want)
		}
	}
}
