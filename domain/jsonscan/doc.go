// Package jsonscan is the one JSON lexer every scanner of this module is
// built on (JSONLexer: the replay's payload decoders, CheckJSON's key
// scanner, the Gunbot state-file reader), and the checks built on it:
// CheckJSON, which refuses what encoding/json would accept silently (bad
// UTF-8, duplicate keys, lone surrogates) with a *JSONError naming the
// field, ValidJSON, which reports exactly what json.Valid reports, faster,
// and FlatObject, which recognizes a compact object of scalars. Scanner
// reads a flat object's expected keys in order for the replay's payload
// decoders, with Interner and Recent sharing their strings. A scanner
// reads only the grammar it needs and hands anything else to encoding/json
// (DecodeJSONValue keeps numbers exact). A *JSONError is what domain
// reports as EINVALID. Standard library only.
package jsonscan
