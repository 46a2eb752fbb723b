//go:build ccxt

package ccxt

import (
	"testing"

	ccxtlib "github.com/ccxt/ccxt/go/v4"

	"github.com/tradeledger/tradeledger/domain"
)

// A ledger's entries (Kraken's Ledgers endpoint, as ccxt returns them:
// the exchange's own entry under info) become conversion legs when their
// type is a conversion's and their time in the window; the legs of one
// reference id become one conversion when both sides are there.
func TestConversionLegs(t *testing.T) {
	dec := domain.MustDecimal
	entry := func(typ, refid, asset, amount, fee string, ms int64) ccxtlib.LedgerEntry {
		id := "L" + refid + asset
		return ccxtlib.LedgerEntry{Id: &id, Timestamp: &ms, Currency: &asset, Info: map[string]interface{}{"info": map[string]interface{}{
			"refid": refid, "type": typ, "asset": asset, "amount": amount, "fee": fee}}}
	}
	q := domain.ActivityQuery{From: 1000, To: 2000}
	for _, e := range []ccxtlib.LedgerEntry{entry("trade", "R1", "XXBT", "-0.1", "0", 1500), entry("conversion", "R1", "XXBT", "-0.1", "0", 999),
		entry("conversion", "R1", "XXBT", "-0.1", "0", 2000)} {
		if _, _, ok := conversionLeg(e, q); ok {
			t.Errorf("%v at %d: read as a conversion's leg", e.Info, *e.Timestamp)
		}
	}
	spend := entry("spend", "R2", "USDT", "-30.0000", "0.0000", 1500)
	receive := entry("receive", "R2", "XXBT", "0.0010000000", "0.0000100000", 1600)
	var legs []ledgerLeg
	for _, e := range []ccxtlib.LedgerEntry{spend, receive} {
		ref, l, ok := conversionLeg(e, q)
		if !ok || ref != "R2" {
			t.Fatalf("%v: ok %v ref %q", e.Info, ok, ref)
		}
		legs = append(legs, l)
	}
	if _, ok := conversionOf("kraken", "R2", legs[:1]); ok {
		t.Error("a conversion with one leg read")
	}
	c, ok := conversionOf("kraken", "R2", legs)
	want := domain.Conversion{Exchange: "kraken", ID: "ledger:R2", Kind: domain.ConversionLedger, Time: 1600, FromAsset: "USDT", FromAmount: dec("30"),
		ToAsset: "XXBT", ToAmount: dec("0.00099"), Fee: dec("0.00001"), FeeAsset: "XXBT"}
	if !ok || c != want {
		t.Errorf("conversion %v:\n%+v\nwant\n%+v", ok, c, want)
	}
	legs[0].ledgerType = "dustsweeping"
	if c, _ := conversionOf("kraken", "R2", legs); c.Kind != domain.ConversionDust {
		t.Errorf("a dust sweep's kind: %q", c.Kind)
	}
}
