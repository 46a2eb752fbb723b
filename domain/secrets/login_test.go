package secrets_test

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/secrets"
)

const loginWallet = "0x7f3a9c2b4e5d6f708192a3b4c5d6e7f8"

// Vectors produced by the README's login example:
//
//	K=$(printf '%s' "$WALLET" | head -c 16 | od -An -tx1 | tr -d ' \n')
//	printf '%s' "$PW" | openssl enc -aes-128-cbc -K $K -iv $K -nosalt -base64 -A
var opensslVectors = []struct{ password, enc string }{
	{"correct horse battery", "ENC:icHAI5zpNEE6bmIrh461M2x92v4eprvnqnI3pqtRd1Q="},
	{"exactly16bytes!!", "ENC:hxAnj9QWPWeP+L9RFWSYWR6LLdscCtKzVq/iupUvOwI="}, // a whole block of padding
	{"pässwörd", "ENC:xzFi0A21+orE8uI2v2LhDw=="},
}

func TestLoginPasswordMatchesOpenSSL(t *testing.T) {
	for _, v := range opensslVectors {
		got, err := secrets.DecryptLoginPassword(v.enc, loginWallet)
		if err != nil || got != v.password {
			t.Fatalf("Decrypt(%s) = %q, %v; want %q", v.enc, got, err, v.password)
		}
		enc, err := secrets.EncryptLoginPassword(v.password, loginWallet)
		if err != nil || enc != v.enc {
			t.Fatalf("Encrypt(%q) = %s, %v; want %s", v.password, enc, err, v.enc)
		}
	}
}

// rawEncrypt encrypts pt (already padded or not) with the login key, for
// crafting bad paddings.
func rawEncrypt(t *testing.T, pt []byte) string {
	t.Helper()
	key := []byte(loginWallet[:16])
	b, _ := aes.NewCipher(key)
	ct := make([]byte, len(pt))
	cipher.NewCBCEncrypter(b, key).CryptBlocks(ct, pt)
	return secrets.LoginPrefix + base64.StdEncoding.EncodeToString(ct)
}

func TestDecryptLoginPasswordFailures(t *testing.T) {
	good := opensslVectors[0].enc
	tests := []struct {
		name, enc, wallet, reason string
	}{
		{"no prefix", strings.TrimPrefix(good, "ENC:"), loginWallet, secrets.LoginReasonFormat},
		{"lower-case prefix", "enc:" + strings.TrimPrefix(good, "ENC:"), loginWallet, secrets.LoginReasonFormat},
		{"clear password", "correct horse battery", loginWallet, secrets.LoginReasonFormat},
		{"bad base64", "ENC:not base64!!", loginWallet, secrets.LoginReasonFormat},
		{"empty ciphertext", "ENC:", loginWallet, secrets.LoginReasonFormat},
		{"not whole blocks", "ENC:" + base64.StdEncoding.EncodeToString(make([]byte, 15)), loginWallet, secrets.LoginReasonFormat},
		{"too long", "ENC:" + base64.StdEncoding.EncodeToString(make([]byte, 4096)), loginWallet, secrets.LoginReasonFormat},
		{"padding byte zero", rawEncrypt(t, []byte("0123456789abcde\x00")), loginWallet, secrets.LoginReasonPadding},
		{"padding byte too big", rawEncrypt(t, []byte("0123456789abcde\x11")), loginWallet, secrets.LoginReasonPadding},
		{"inconsistent padding", rawEncrypt(t, []byte("0123456789abc\x01\x03\x03")), loginWallet, secrets.LoginReasonPadding},
		{"wrong wallet", good, "0xffffffffffffffffffffffff", secrets.LoginReasonPadding},
		{"short wallet", good, "0x7f3a9c2b4e5d6", secrets.LoginReasonWallet},
		{"empty wallet", good, "", secrets.LoginReasonWallet},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := secrets.DecryptLoginPassword(tc.enc, tc.wallet)
			if err == nil {
				t.Fatalf("Decrypt = %q, nil; want an error", got)
			}
			if code := domain.ErrorCode(err); code != domain.EUNAUTHORIZED {
				t.Fatalf("code = %s, want %s", code, domain.EUNAUTHORIZED)
			}
			if msg := domain.ErrorMessage(err); msg != tc.reason {
				t.Fatalf("reason = %q, want %q", msg, tc.reason)
			}
		})
	}
}

func TestEncryptLoginPasswordShortWallet(t *testing.T) {
	if _, err := secrets.EncryptLoginPassword("pw", "short"); domain.ErrorCode(err) != domain.EINVALID {
		t.Fatalf("err = %v, want EINVALID", err)
	}
}

func FuzzDecryptLoginPassword(f *testing.F) {
	for _, v := range opensslVectors {
		f.Add(v.enc)
	}
	f.Add("ENC:")
	f.Add("ENC:AAAAAAAAAAAAAAAAAAAAAA==")
	f.Fuzz(func(t *testing.T, enc string) {
		pw, err := secrets.DecryptLoginPassword(enc, loginWallet)
		if err != nil {
			if domain.ErrorCode(err) != domain.EUNAUTHORIZED {
				t.Fatalf("code %s", domain.ErrorCode(err))
			}
			return
		}
		again, err := secrets.EncryptLoginPassword(pw, loginWallet)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := secrets.DecryptLoginPassword(again, loginWallet); err != nil || back != pw {
			t.Fatalf("round trip of %q: %q, %v", pw, back, err)
		}
	})
}
