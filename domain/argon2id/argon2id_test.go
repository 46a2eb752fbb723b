package argon2id

import (
	"strings"
	"testing"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/secrets"
)

// cheapArgon2 keeps tests fast; the format and checks are the same.
var cheapArgon2 = Params{Time: 1, Memory: 64, Threads: 1, SaltLen: 16, KeyLen: 32}

func TestHashPassword(t *testing.T) {
	h, err := Hash("correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=47104,t=1,p=1$") {
		t.Fatalf("hash %q is not a default argon2id PHC string", h)
	}
	if strings.Contains(h, "correct horse") {
		t.Fatalf("hash contains the password")
	}
	for _, tc := range []struct {
		pw   string
		want bool
	}{{"correct horse battery", true}, {"correct horse batterY", false}, {"", false}, {"correct horse battery ", false}} {
		got, err := Check(tc.pw, h)
		if err != nil || got != tc.want {
			t.Fatalf("Check(%q) = %v, %v; want %v", tc.pw, got, err, tc.want)
		}
	}
	h2, _ := Hash("correct horse battery")
	if h2 == h {
		t.Fatalf("two hashes of one password are equal: salt not random")
	}
}

func TestHashPasswordRefusesBadPasswords(t *testing.T) {
	for _, pw := range []string{"", "short", strings.Repeat("x", secrets.MaxLoginPasswordBytes+1)} {
		if _, err := cheapArgon2.Hash(pw); domain.ErrorCode(err) != domain.EINVALID {
			t.Fatalf("Hash(%d bytes) err = %v, want EINVALID", len(pw), err)
		}
	}
}

func TestCheckPasswordBadHash(t *testing.T) {
	good, _ := cheapArgon2.Hash("password1")
	parts := strings.Split(good, "$")
	for _, h := range []string{
		"",
		"plain",
		"$argon2i$v=19$m=64,t=1,p=1$" + parts[4] + "$" + parts[5],
		"$argon2id$v=16$m=64,t=1,p=1$" + parts[4] + "$" + parts[5],
		"$argon2id$v=19$m=4194304,t=1,p=1$" + parts[4] + "$" + parts[5], // 4 GiB
		"$argon2id$v=19$m=64,t=0,p=1$" + parts[4] + "$" + parts[5],
		"$argon2id$v=19$m=64,t=1,p=1$!!$" + parts[5],
		"$argon2id$v=19$m=64,t=1,p=1$" + parts[4] + "$",
	} {
		if ok, err := Check("password1", h); ok || domain.ErrorCode(err) != domain.EINTERNAL {
			t.Fatalf("Check(hash %q) = %v, %v; want false, EINTERNAL", h, ok, err)
		}
	}
	if ok, err := Check("password1", good); !ok || err != nil {
		t.Fatalf("good hash: %v, %v", ok, err)
	}
}

func BenchmarkHashPassword(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := Hash("correct horse battery"); err != nil {
			b.Fatal(err)
		}
	}
}
