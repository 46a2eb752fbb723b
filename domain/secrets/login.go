package secrets

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/subtle"
	"encoding/base64"
	"strings"
	"unicode/utf8"
)

// LoginPrefix starts every encrypted login password.
const LoginPrefix = "ENC:"

// MaxLoginPasswordBytes bounds a clear login password, so that a client
// cannot make the server hash megabytes.
const MaxLoginPasswordBytes = 1024

// Reasons a login is refused. They are recorded in LoginFailed events (so an
// operator can tell a misconfigured client from a guessing attacker) but
// never shown to the client, which always sees one generic message.
const (
	LoginReasonFormat       = "format"       // no ENC: prefix, bad Base64, wrong length, not UTF-8
	LoginReasonPadding      = "padding"      // decrypted, but the PKCS#7 padding is wrong
	LoginReasonWallet       = "wallet"       // the configured wallet is shorter than 16 bytes
	LoginReasonPassword     = "password"     // decrypted fine, but not the password
	LoginReasonUnregistered = "unregistered" // no password has been set
)

// loginKey returns the AES-128 key (also the IV) of the login scheme: the
// first 16 bytes of the wallet's UTF-8 encoding.
func loginKey(wallet string) ([]byte, error) {
	if len(wallet) < aes.BlockSize {
		return nil, unauthorized(LoginReasonWallet)
	}
	return []byte(wallet[:aes.BlockSize]), nil
}

// DecryptLoginPassword returns the clear password of an encrypted login
// password: "ENC:" + Base64(AES-128-CBC(password)) with key = IV = the first
// 16 bytes of wallet and PKCS#7 padding (the control API's scheme). Every
// failure is an EUNAUTHORIZED error whose message is one of the LoginReason
// constants, never any part of the input.
func DecryptLoginPassword(enc, wallet string) (string, error) {
	key, err := loginKey(wallet)
	if err != nil {
		return "", err
	}
	b64, ok := strings.CutPrefix(enc, LoginPrefix)
	if !ok {
		return "", unauthorized(LoginReasonFormat)
	}
	if base64.StdEncoding.DecodedLen(len(b64)) > MaxLoginPasswordBytes+aes.BlockSize+3 {
		return "", unauthorized(LoginReasonFormat)
	}
	ct, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return "", unauthorized(LoginReasonFormat)
	}
	if len(ct) == 0 || len(ct)%aes.BlockSize != 0 {
		return "", unauthorized(LoginReasonFormat)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return "", unauthorized(LoginReasonWallet)
	}
	pt := make([]byte, len(ct))
	cipher.NewCBCDecrypter(block, key).CryptBlocks(pt, ct)
	pt, ok = unpadPKCS7(pt)
	if !ok {
		return "", unauthorized(LoginReasonPadding)
	}
	if !utf8.Valid(pt) || len(pt) > MaxLoginPasswordBytes {
		return "", unauthorized(LoginReasonFormat)
	}
	return string(pt), nil
}

// EncryptLoginPassword returns the encrypted login password that
// DecryptLoginPassword accepts for password and wallet, as a client builds
// it (equivalent to `openssl enc -aes-128-cbc -K <hex key> -iv <hex key>
// -nosalt -base64 -A`). The error is EINVALID for a wallet shorter than 16
// bytes.
func EncryptLoginPassword(password, wallet string) (string, error) {
	key, err := loginKey(wallet)
	if err != nil {
		return "", invalidf("wallet must be at least %d bytes", aes.BlockSize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return "", invalidf("wallet must be at least %d bytes", aes.BlockSize)
	}
	n := aes.BlockSize - len(password)%aes.BlockSize
	pt := append([]byte(password), bytes.Repeat([]byte{byte(n)}, n)...)
	ct := make([]byte, len(pt))
	cipher.NewCBCEncrypter(block, key).CryptBlocks(ct, pt)
	return LoginPrefix + base64.StdEncoding.EncodeToString(ct), nil
}

// unpadPKCS7 strips PKCS#7 padding, checking every padding byte without
// branching on where the first bad one is.
func unpadPKCS7(b []byte) ([]byte, bool) {
	if len(b) == 0 {
		return nil, false
	}
	n := int(b[len(b)-1])
	if n == 0 || n > aes.BlockSize || n > len(b) {
		return nil, false
	}
	want := bytes.Repeat([]byte{byte(n)}, n)
	if subtle.ConstantTimeCompare(b[len(b)-n:], want) != 1 {
		return nil, false
	}
	return b[:len(b)-n], true
}
