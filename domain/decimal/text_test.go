package decimal

import "testing"

func TestAmountText(t *testing.T) {
	for _, c := range []struct {
		d      string
		places int
		r      TextRounding
		unit   string
		want   string
	}{
		{"59059", 2, TextUp, "USDT", "59,059.00 USDT"},
		{"2902900", 2, TextUp, "USDT", "2,902,900.00 USDT"},
		{"8435.588411724933", 2, TextDown, "USDT", "8,435.58 USDT"},
		{"8435.588411724933", 2, TextUp, "USDT", "8,435.59 USDT"},
		{"1327303.890989499391", 2, TextUp, "USDT", "1,327,303.90 USDT"},
		{"0.001", 2, TextUp, "USDT", "0.01 USDT"},
		{"0.009", 2, TextDown, "USDT", "0.00 USDT"},
		{"22.39339", 5, TextExact, "BTC", "22.39339 BTC"},
		{"22.393394759", 5, TextExact, "BTC", "22.393394759 BTC"},
		{"100", 5, TextExact, "BTC", "100.00000 BTC"},
		{"999", 0, TextExact, "", "999"},
		{"1000", 0, TextExact, "", "1,000"},
		{"123456.7", 1, TextExact, "", "123,456.7"},
		{"-1234.567", 2, TextDown, "EUR", "-1,234.57 EUR"},
		{"-1234.567", 2, TextUp, "EUR", "-1,234.56 EUR"},
		{"0.5", 8, TextExact, "BTC", "0.50000000 BTC"},
	} {
		if got := AmountText(MustDecimal(c.d), c.places, c.r, c.unit); got != c.want {
			t.Errorf("AmountText(%s, %d, %d, %q) = %q, want %q", c.d, c.places, c.r, c.unit, got, c.want)
		}
	}
}
