package domain

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"strings"
)

// Mask is what responses show in place of a secret value.
const Mask = "********"

// secretFields are the exchange settings that hold credentials (compared
// case-insensitively, ignoring "_" and "-").
var secretFields = map[string]bool{
	"key": true, "secret": true, "masterkey": true, "mastersecret": true,
	"apikey": true, "apisecret": true, "secretkey": true, "privatekey": true,
	"passphrase": true, "password": true, "token": true,
}

// IsSecretField reports whether an exchange setting named name holds a
// credential, which is encrypted at rest and masked in responses.
func IsSecretField(name string) bool {
	n := strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(name))
	return secretFields[n]
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
		return nil, Errorf(EINVALID, "master key must be 32 bytes, got %d", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, Errorf(EINVALID, "master key: %v", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, Errorf(EINVALID, "master key: %v", err)
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
		return "", Errorf(EINVALID, "secret is not base64 ciphertext")
	}
	ns := b.aead.NonceSize()
	if len(raw) < ns+b.aead.Overhead() {
		return "", Errorf(EINVALID, "secret ciphertext is too short")
	}
	plain, err := b.aead.Open(nil, raw[:ns], raw[ns:], nil)
	if err != nil {
		return "", Errorf(EINVALID, "secret does not decrypt under the master key")
	}
	return string(plain), nil
}

// MaskExchange returns a copy of an exchange entry with every non-empty
// secret field replaced by Mask.
func MaskExchange(entry map[string]any) map[string]any {
	out := deepCopy(entry).(map[string]any)
	for k, v := range out {
		if IsSecretField(k) {
			if s, ok := v.(string); ok && s == "" {
				continue
			}
			out[k] = Mask
		}
	}
	return out
}

// StripSecrets returns a copy of an exchange entry without its secret
// fields.
func StripSecrets(entry map[string]any) map[string]any {
	out := deepCopy(entry).(map[string]any)
	for k := range out {
		if IsSecretField(k) {
			delete(out, k)
		}
	}
	return out
}

// WithoutSecrets returns c with every secret field removed from
// config.exchanges (what a ConfigReplaced event carries).
func (c Config) WithoutSecrets() Config {
	if c.doc == nil {
		return c
	}
	doc := c.Map()
	ex := doc["exchanges"].(map[string]any)
	for name, v := range ex {
		if m, ok := v.(map[string]any); ok {
			ex[name] = StripSecrets(m)
		}
	}
	return Config{doc: doc}
}

// Masked returns c with every non-empty secret field of config.exchanges and
// bot.service_wallet shown as Mask (what responses show).
func (c Config) Masked() Config {
	if c.doc == nil {
		return c
	}
	doc := c.Map()
	ex := doc["exchanges"].(map[string]any)
	for name, v := range ex {
		if m, ok := v.(map[string]any); ok {
			ex[name] = MaskExchange(m)
		}
	}
	if bot, ok := doc["bot"].(map[string]any); ok {
		if w, ok := bot["service_wallet"].(string); ok && w != "" {
			bot["service_wallet"] = Mask
		}
	}
	return Config{doc: doc}
}
