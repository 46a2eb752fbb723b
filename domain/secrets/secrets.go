package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/tradeledger/tradeledger/domain/jsonscan"
)

// Mask is what responses show in place of a secret value.
const Mask = "********"

// secretWords are what a key's name contains, ignoring case, when its value
// is a credential (IsSecretPath).
var secretWords = [...]string{"secret", "key", "pass", "token", "private", "auth"}

// IsSecretPath is the one rule that decides which configuration values are
// credentials: encrypted at rest, never stored in clear in the log, masked
// in every output. path is the value's place in the configuration document,
// one element per object key, array indices written "[n]". A value is a
// credential when it sits under exchanges.<exchange>, at any depth, and the
// nearest key above it names a secret: the key contains, ignoring case,
// secret, key, pass, token, private or auth (key, apiSecretKey, clientSecret,
// accessKey, secret2, passphrase, subaccount.secret, privateKeyPem, authToken).
// A credential is a string: a number, a boolean, an object or an array at
// such a path is refused when a document is written (CheckCredentialTypes),
// and a number or a boolean a log holds from before is masked in outputs
// (MaskExchange), never stored or shown as a credential in clear.
//
// bot.service_wallet is not a credential by this rule (it is the login
// key, kept in the configuration) but is masked in every output as well:
// see Config.Masked and MaskSecretsIn.
func IsSecretPath(path ...string) bool {
	if len(path) < 3 || path[0] != "exchanges" {
		return false
	}
	for i := len(path) - 1; i >= 2; i-- {
		if isIndexElem(path[i]) {
			continue
		}
		name := strings.ToLower(path[i])
		for _, w := range secretWords {
			if strings.Contains(name, w) {
				return true
			}
		}
		return false
	}
	return false
}

// IsSecretField reports whether an exchange setting named name, directly in
// an exchange's entry, holds a credential (IsSecretPath).
func IsSecretField(name string) bool { return IsSecretPath("exchanges", "exchange", name) }

func isIndexElem(e string) bool {
	if len(e) < 3 || e[0] != '[' || e[len(e)-1] != ']' {
		return false
	}
	for _, c := range e[1 : len(e)-1] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// SecretFieldName names a credential of an exchange entry by its path below
// the entry, as ExchangeKeysSet's fields do: the elements joined with ".",
// a "." or a backslash inside a key escaped with a backslash. A top-level setting keeps its
// plain name ("secret"), a nested one reads "subaccount.secret", one in an
// array "accounts.[0].key".
func SecretFieldName(path []string) string {
	var b strings.Builder
	for i, e := range path {
		if i > 0 {
			b.WriteByte('.')
		}
		for _, c := range e {
			if c == '.' || c == '\\' {
				b.WriteByte('\\')
			}
			b.WriteRune(c)
		}
	}
	return b.String()
}

// secretFieldPath parses a SecretFieldName.
func secretFieldPath(name string) []string {
	var path []string
	var cur strings.Builder
	escaped := false
	for _, c := range name {
		switch {
		case escaped:
			cur.WriteRune(c)
			escaped = false
		case c == '\\':
			escaped = true
		case c == '.':
			path = append(path, cur.String())
			cur.Reset()
		default:
			cur.WriteRune(c)
		}
	}
	return append(path, cur.String())
}

// walkSecrets calls fn for every credential string below an exchange entry
// v (path: the elements below the entry so far), with the container that
// holds it and its key or index.
func walkSecrets(v any, path []string, fn func(path []string, container any, key string, index int, value string)) {
	walkCredentials(v, path, func(path []string, c any, key string, i int, value any) {
		if s, ok := value.(string); ok {
			fn(path, c, key, i, s)
		}
	})
}

// walkCredentials calls fn for every value below an exchange entry v that
// is neither an object nor an array and sits at a credential's path
// (IsSecretPath), whatever its type, nulls left out, in the order of the
// sorted keys.
func walkCredentials(v any, path []string, fn func(path []string, container any, key string, index int, value any)) {
	visit := func(p []string, c any, key string, i int, x any) {
		switch x.(type) {
		case map[string]any, []any:
			walkCredentials(x, p, fn)
		case nil:
		default:
			if IsSecretPath(append([]string{"exchanges", "exchange"}, p...)...) {
				fn(p, c, key, i, x)
			}
		}
	}
	switch t := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(t)) {
			visit(append(path[:len(path):len(path)], k), t, k, -1, t[k])
		}
	case []any:
		for i, x := range t {
			visit(append(path[:len(path):len(path)], "["+strconv.Itoa(i)+"]"), t, "", i, x)
		}
	}
}

// CheckCredentialTypes returns EINVALID naming the first value of an
// exchange entry that sits at a credential's path (IsSecretPath) and is not
// a string — a number, a boolean, an object or an array: such a value
// could be neither encrypted nor recognised as a secret (the strings inside
// an object under "secret" would sit at paths no rule calls credentials,
// and be stored, served and logged in clear). where is the entry's place
// in messages ("config.exchanges.binance"); the value's path follows it
// ("config.exchanges.binance.secret", "….accounts[0].authToken"). A null
// is no credential and passes.
func CheckCredentialTypes(where string, entry map[string]any) error {
	return checkCredentialTypes(where, entry, nil)
}

func checkCredentialTypes(where string, v any, path []string) error {
	check := func(p []string, x any) error {
		kind := ""
		switch x.(type) {
		case nil, string:
			return nil
		case map[string]any:
			kind = "an object"
		case []any:
			kind = "an array"
		case bool:
			kind = "a boolean"
		default:
			kind = "a number"
		}
		if !IsSecretPath(append([]string{"exchanges", "exchange"}, p...)...) {
			return checkCredentialTypes(where, x, p) // not a credential's place: look inside
		}
		var at strings.Builder
		at.WriteString(where)
		for _, e := range p {
			if !isIndexElem(e) {
				at.WriteByte('.')
			}
			at.WriteString(e)
		}
		return invalidf("%s must be a string, not %s: its name makes it a credential, kept encrypted, and only a string can be", at.String(), kind)
	}
	switch t := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(t)) {
			if err := check(append(path[:len(path):len(path)], k), t[k]); err != nil {
				return err
			}
		}
	case []any:
		for i, x := range t {
			if err := check(append(path[:len(path):len(path)], "["+strconv.Itoa(i)+"]"), x); err != nil {
				return err
			}
		}
	}
	return nil
}

// ExtractSecrets splits an exchange entry into a copy without its
// credentials (IsSecretPath, at any depth) and the credentials themselves,
// by SecretFieldName (empty values included). A credential inside an array
// is replaced by "" in the copy, so that the other elements keep their
// places.
func ExtractSecrets(entry map[string]any) (stripped map[string]any, secrets map[string]string) {
	stripped = jsonscan.Clone(entry).(map[string]any)
	secrets = map[string]string{}
	walkSecrets(stripped, nil, func(path []string, c any, key string, i int, value string) {
		secrets[SecretFieldName(path)] = value
		if m, ok := c.(map[string]any); ok {
			delete(m, key)
		} else {
			c.([]any)[i] = ""
		}
	})
	return stripped, secrets
}

// PutSecret sets the credential named field (a SecretFieldName) in entry
// to value, creating the objects on its way that are missing; it reports
// false when the path runs through something else (an array too short, a
// string).
func PutSecret(entry map[string]any, field, value string) bool {
	path := secretFieldPath(field)
	var cur any = entry
	for i, e := range path {
		last := i == len(path)-1
		switch c := cur.(type) {
		case map[string]any:
			if last {
				c[e] = value
				return true
			}
			next, ok := c[e]
			if !ok || next == nil {
				next = map[string]any{}
				c[e] = next
			}
			cur = next
		case []any:
			n, err := strconv.Atoi(strings.Trim(e, "[]"))
			if !isIndexElem(e) || err != nil || n >= len(c) {
				return false
			}
			if last {
				c[n] = value
				return true
			}
			cur = c[n]
		default:
			return false
		}
	}
	return false
}

// SecretBox encrypts exchange secrets with AES-256-GCM under a 32-byte master
// key. Ciphertext is base64 (standard, padded) of nonce||sealed. A SecretBox
// is safe for concurrent use.
type SecretBox struct {
	aead cipher.AEAD
}

// NewSecretBox returns a SecretBox for key, which must be 32 bytes
// (EINVALID otherwise).
func NewSecretBox(key []byte) (*SecretBox, error) {
	if len(key) != 32 {
		return nil, invalidf("master key must be 32 bytes, got %d", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, invalidf("master key: %v", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, invalidf("master key: %v", err)
	}
	return &SecretBox{aead: aead}, nil
}

// Seal encrypts plain with a fresh random nonce. The same plain text seals
// to a different ciphertext every time.
func (b *SecretBox) Seal(plain string) string {
	nonce := make([]byte, b.aead.NonceSize(), b.aead.NonceSize()+len(plain)+b.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		panic("crypto/rand: " + err.Error())
	}
	return base64.StdEncoding.EncodeToString(b.aead.Seal(nonce, nonce, []byte(plain), nil))
}

// Open decrypts a Seal output: EINVALID when it is not base64, too short, or
// does not authenticate under this key.
func (b *SecretBox) Open(ciphertext string) (string, error) {
	raw, err := base64.StdEncoding.DecodeString(ciphertext)
	if err != nil {
		return "", invalidf("secret is not base64 ciphertext")
	}
	ns := b.aead.NonceSize()
	if len(raw) < ns+b.aead.Overhead() {
		return "", invalidf("secret ciphertext is too short")
	}
	plain, err := b.aead.Open(nil, raw[:ns], raw[ns:], nil)
	if err != nil {
		return "", invalidf("secret does not decrypt under the master key")
	}
	return string(plain), nil
}

// MaskExchange returns a copy of an exchange entry with every non-empty
// credential (IsSecretPath, at any depth) replaced by Mask, and every
// number or boolean at a credential's path too (a log written before
// CheckCredentialTypes may hold one).
func MaskExchange(entry map[string]any) map[string]any {
	out := jsonscan.Clone(entry).(map[string]any)
	walkCredentials(out, nil, func(_ []string, c any, key string, i int, value any) {
		if value == "" {
			return
		}
		if m, ok := c.(map[string]any); ok {
			m[key] = Mask
		} else {
			c.([]any)[i] = Mask
		}
	})
	return out
}

// StripSecrets returns a copy of an exchange entry without its credentials
// (ExtractSecrets).
func StripSecrets(entry map[string]any) map[string]any {
	out, _ := ExtractSecrets(entry)
	return out
}

// MaskSecretsIn masks, in place, what no output may show in any JSON value
// v (decoded with encoding/json): the credentials of every exchange entry
// of an "exchanges" object found at any depth (a configuration document
// inside an event), and the string value of every "service_wallet" key. It
// reports whether it changed anything.
func MaskSecretsIn(v any) bool {
	changed := false
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			switch {
			case k == "service_wallet":
				if s, ok := x.(string); ok && s != "" && s != Mask {
					t[k], changed = Mask, true
				}
				continue
			case k == "exchanges":
				if ex, ok := x.(map[string]any); ok {
					for name, e := range ex {
						entry, ok := e.(map[string]any)
						if !ok {
							continue
						}
						masked := MaskExchange(entry)
						walkCredentials(entry, nil, func(_ []string, _ any, _ string, _ int, value any) {
							if value != "" && value != Mask {
								changed = true
							}
						})
						ex[name] = masked
					}
				}
			}
			if MaskSecretsIn(x) {
				changed = true
			}
		}
	case []any:
		for _, x := range t {
			if MaskSecretsIn(x) {
				changed = true
			}
		}
	}
	return changed
}
