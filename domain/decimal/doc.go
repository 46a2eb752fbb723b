// Package decimal is Tradeledger's number for money: Decimal, an exact
// signed 128-bit count of 10^-12 units. Sums are exact; products and
// quotients round once, half to even, to 12 decimals; the plain forms
// saturate at the range's bounds and the Checked forms report overflow
// instead. ParseDecimal and UnmarshalJSON refuse what does not fit, never
// rounding it, with a *ParseError (which domain reports as EINVALID). In
// JSON a Decimal is a string with at least 8 decimals, the form events keep.
// Compact is its 8-byte form for read models that hold many, with
// CompactTable keeping the values a Compact cannot hold. AmountText writes
// an amount as a person reads it (grouped, in its currency's places,
// rounded the way the message needs). Standard library only.
package decimal
