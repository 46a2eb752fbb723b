// Package witness is a transparency-log witness (c2sp.org/tlog-witness)
// an auditor runs beside nothing else: it keeps, per log it is told of,
// the latest checkpoint it cosigned, cosigns a newer one only with a
// consistency proof from it (cosignature/v1, c2sp.org/tlog-cosignature),
// and refuses everything else with the protocol's status codes. Its state
// is one SQLite file and an Ed25519 key made at its first start, both
// mode 0600, in its directory.
package witness

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	_ "github.com/mattn/go-sqlite3" // the module's SQLite driver
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/tradeledger/tradeledger/eventstore/transparency/cosign"
)

// Files of a witness's directory.
const (
	// DBFile holds the logs, their keys and the latest checkpoint
	// cosigned of each.
	DBFile = "witness.db"
	// KeyFile holds the Ed25519 private key (its 32-byte seed, base64).
	KeyFile = "witness.key"
)

// Witness is one witness: its name and key, and the logs it follows.
// Open it, serve it (ServeHTTP), Close it. It is safe for concurrent use;
// add-checkpoint requests are checked and recorded one at a time.
type Witness struct {
	db     *sql.DB
	signer *cosign.Signer
	// Now is the clock of the cosignatures' timestamps (default
	// time.Now).
	Now func() time.Time

	mu sync.Mutex // one add-checkpoint at a time: check and record are one step
}

// Open opens (creating on first use) the witness in dir. name is the
// witness's name (a schema-less URL such as auditor.example/witness),
// fixed at its first start: it is part of its key ID. "" uses the name
// recorded; a different name than the recorded one is refused.
func Open(dir, name string) (*Witness, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, DBFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	f.Close()
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_synchronous=FULL&_busy_timeout=10000&_foreign_keys=1")
	if err != nil {
		return nil, err
	}
	w := &Witness{db: db, Now: time.Now}
	if err := w.init(dir, name); err != nil {
		db.Close()
		return nil, err
	}
	return w, nil
}

const schema = `
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS logs (
	origin  TEXT PRIMARY KEY,
	size    INTEGER NOT NULL,       -- the latest size cosigned (0: none)
	root    TEXT NOT NULL,          -- its root hash, base64
	note    TEXT NOT NULL DEFAULT '', -- that checkpoint with the log's signatures and ours
	updated INTEGER NOT NULL DEFAULT 0 -- when, Unix seconds
);
CREATE TABLE IF NOT EXISTS keys (
	origin TEXT NOT NULL REFERENCES logs(origin),
	vkey   TEXT NOT NULL,           -- the log's verifier key (signed-note vkey)
	PRIMARY KEY (origin, vkey)
);
-- Requests with a valid signature that failed a consistency check:
-- evidence of a log's misbehaviour (c2sp.org/tlog-witness allows keeping
-- them).
CREATE TABLE IF NOT EXISTS refusals (
	origin  TEXT NOT NULL,
	time    INTEGER NOT NULL,
	status  INTEGER NOT NULL,
	reason  TEXT NOT NULL,
	request TEXT NOT NULL
);`

func (w *Witness) init(dir, name string) error {
	if _, err := w.db.Exec(schema); err != nil {
		return fmt.Errorf("witness database: %w", err)
	}
	var have string
	err := w.db.QueryRow(`SELECT v FROM meta WHERE k = 'name'`).Scan(&have)
	switch {
	case errors.Is(err, sql.ErrNoRows) && name == "":
		return errors.New("this witness has no name yet: give --name NAME (a schema-less URL such as auditor.example/witness) at its first start")
	case errors.Is(err, sql.ErrNoRows):
		if !cosign.ValidName(name) {
			return fmt.Errorf("--name %q: a witness name is non-empty, without spaces or '+'", name)
		}
		if _, err := w.db.Exec(`INSERT INTO meta (k, v) VALUES ('name', ?)`, name); err != nil {
			return err
		}
		have = name
	case err != nil:
		return err
	case name != "" && name != have:
		return fmt.Errorf("this witness is named %s, not %s: its name is part of its key ID, which the logs and auditors rely on", have, name)
	}
	key, err := loadKey(filepath.Join(dir, KeyFile))
	if err != nil {
		return err
	}
	w.signer, err = cosign.NewSigner(have, key, func() time.Time { return w.Now() })
	return err
}

// loadKey reads the key file, making it (0600) on first use.
func loadKey(path string) (ed25519.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		seed := make([]byte, ed25519.SeedSize)
		if _, err := rand.Read(seed); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, err
		}
		_, err = f.WriteString(base64.StdEncoding.EncodeToString(seed) + "\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
		return ed25519.NewKeyFromSeed(seed), nil
	}
	if err != nil {
		return nil, err
	}
	seed, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("%s: not a base64 Ed25519 seed", path)
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

// Close closes the database.
func (w *Witness) Close() error { return w.db.Close() }

// Name returns the witness's name.
func (w *Witness) Name() string { return w.signer.Name() }

// VerifierKey returns the witness's verifier key (name+keyid+base64 of
// 0x04 and the Ed25519 public key): what a log's operator passes to
// serve --witness and an auditor to verify --witness-key.
func (w *Witness) VerifierKey() string { return w.signer.VerifierKey() }

// AddLog makes the witness follow the log whose checkpoints vkey (a
// signed-note verifier key) signs, under origin ("" : the key's name, as
// c2sp.org/tlog-checkpoint recommends). A log may have several keys;
// adding one again changes nothing. The log's state is kept.
func (w *Witness) AddLog(ctx context.Context, origin, vkey string) (string, error) {
	vkey = strings.TrimSpace(vkey)
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return "", fmt.Errorf("--key %q: not a signed-note verifier key: %v", vkey, err)
	}
	if origin == "" {
		origin = v.Name()
	}
	if origin == "" || strings.Contains(origin, "\n") {
		return "", errors.New("--origin: a log origin is one non-empty line")
	}
	tx, err := w.db.BeginTx(ctx, nil)
	if err != nil {
		return "", err
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`INSERT OR IGNORE INTO logs (origin, size, root) VALUES (?, 0, ?)`, origin, cosign.EmptyRoot.String()); err != nil {
		return "", err
	}
	if _, err := tx.Exec(`INSERT OR IGNORE INTO keys (origin, vkey) VALUES (?, ?)`, origin, vkey); err != nil {
		return "", err
	}
	return origin, tx.Commit()
}

// LogState is what the witness holds of one log.
type LogState struct {
	Origin string
	// Size and Root are the latest checkpoint cosigned (0 and the empty
	// tree's root before the first); Note is it as signed by the log and
	// cosigned (empty before the first), Updated when.
	Size    int64
	Root    tlog.Hash
	Note    string
	Updated time.Time
	Keys    []string
}

// Log returns what the witness holds of origin (ok false: not followed).
func (w *Witness) Log(ctx context.Context, origin string) (st LogState, ok bool, err error) {
	var root string
	var updated int64
	err = w.db.QueryRowContext(ctx, `SELECT size, root, note, updated FROM logs WHERE origin = ?`, origin).Scan(&st.Size, &root, &st.Note, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return st, false, nil
	}
	if err != nil {
		return st, false, err
	}
	st.Origin = origin
	if st.Root, err = tlog.ParseHash(root); err != nil {
		return st, false, fmt.Errorf("witness database: root of %s: %v", origin, err)
	}
	if updated > 0 {
		st.Updated = time.Unix(updated, 0).UTC()
	}
	rows, err := w.db.QueryContext(ctx, `SELECT vkey FROM keys WHERE origin = ? ORDER BY vkey`, origin)
	if err != nil {
		return st, false, err
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return st, false, err
		}
		st.Keys = append(st.Keys, k)
	}
	return st, true, rows.Err()
}

// OriginHash returns the monitoring path element of origin: SHA-256 of
// the origin, lowercase hex.
func OriginHash(origin string) string {
	h := sha256.Sum256([]byte(origin))
	return hex.EncodeToString(h[:])
}
