// Package jsonscan is the one JSON lexer every scanner of this module is
// built on (JSONLexer: the replay's payload decoders, CheckJSON's key
// scanner, the Gunbot state-file reader), and the two checks built on it
// alone: ValidJSON, which reports exactly what json.Valid reports, faster,
// and FlatObject, which recognizes a compact object of scalars. A scanner
// reads only the grammar it needs and hands anything else to encoding/json.
// Standard library only.
package jsonscan
