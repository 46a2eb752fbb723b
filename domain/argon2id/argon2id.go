// Package argon2id hashes and checks login passwords with argon2id
// (golang.org/x/crypto/argon2), as PHC strings. It is the one home of
// password hashing, used by the HTTP logins and by the command-line tools
// that set the password (passwd, init), so neither imports the other; the
// rules a new password must pass are domain.CheckNewPassword's.
package argon2id

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"

	"github.com/tradeledger/tradeledger/domain"
)

// Params are the argon2id cost settings of a password hash. They are
// stored in the hash itself (PHC string), so changing the defaults affects
// new hashes only and old ones keep verifying.
type Params struct {
	Time    uint32 // passes over memory
	Memory  uint32 // KiB
	Threads uint8
	SaltLen uint32 // bytes
	KeyLen  uint32 // bytes
}

// DefaultParams are OWASP's recommended argon2id settings
// (m=46 MiB, t=1, p=1), with a 16-byte salt and a 32-byte hash: about 0.1 s
// per login on a small machine. Logins also hash at most a few at a time
// (see LoginLimiter), so a flood cannot exhaust memory.
var DefaultParams = Params{Time: 1, Memory: 46 * 1024, Threads: 1, SaltLen: 16, KeyLen: 32}

// Bounds on parameters read back from a stored hash, so that a corrupt or
// hostile hash cannot make a login allocate gigabytes.
const (
	maxArgon2Memory = 1 << 20 // 1 GiB in KiB
	maxArgon2Time   = 64
	maxArgon2KeyLen = 128
)

// Hash returns the argon2id hash of password as a PHC string
// ($argon2id$v=19$m=…,t=…,p=…$salt$hash, unpadded Base64) with
// DefaultParams and a random salt. A password that
// domain.CheckNewPassword refuses is EINVALID.
func Hash(password string) (string, error) {
	return DefaultParams.Hash(password)
}

// Hash is the package's Hash with the receiver's cost settings.
func (p Params) Hash(password string) (string, error) {
	if err := domain.CheckNewPassword(password); err != nil {
		return "", err
	}
	salt := make([]byte, p.SaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("password salt: %w", err)
	}
	key := argon2.IDKey([]byte(password), salt, p.Time, p.Memory, p.Threads, p.KeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.Memory, p.Time, p.Threads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key)), nil
}

// Check reports whether password matches the PHC string hash made by
// Hash. The comparison is constant-time. A hash that is not a
// well-formed argon2id PHC string is an EINTERNAL error (the log holds only
// hashes this package wrote).
func Check(password, hash string) (bool, error) {
	p, salt, want, err := parsePHC(hash)
	if err != nil {
		return false, err
	}
	got := argon2.IDKey([]byte(password), salt, p.Time, p.Memory, p.Threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

func parsePHC(hash string) (p Params, salt, key []byte, err error) {
	bad := func(why string) (Params, []byte, []byte, error) {
		return p, nil, nil, domain.Errorf(domain.EINTERNAL, "stored password hash is not a valid argon2id PHC string: %s", why)
	}
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return bad("want $argon2id$v=…$m=…,t=…,p=…$salt$hash")
	}
	var v int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &v); err != nil || v != argon2.Version {
		return bad("unsupported version")
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.Memory, &p.Time, &p.Threads); err != nil {
		return bad("bad parameters")
	}
	if p.Memory == 0 || p.Memory > maxArgon2Memory || p.Time == 0 || p.Time > maxArgon2Time || p.Threads == 0 {
		return bad("parameters out of range")
	}
	if salt, err = base64.RawStdEncoding.DecodeString(parts[4]); err != nil || len(salt) < 8 {
		return bad("bad salt")
	}
	if key, err = base64.RawStdEncoding.DecodeString(parts[5]); err != nil || len(key) < 16 || len(key) > maxArgon2KeyLen {
		return bad("bad hash")
	}
	p.SaltLen, p.KeyLen = uint32(len(salt)), uint32(len(key))
	return p, salt, key, nil
}
