package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/audit"
	"github.com/tradeledger/tradeledger/eventstore/esdb"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
	"github.com/tradeledger/tradeledger/eventstore/transparency"
	"github.com/tradeledger/tradeledger/projections"
)

// DataDir is an opened data directory: the event store and the secrets kept
// beside it. Every command that opens a data dir goes through OpenDataDir, so
// a fresh dir is initialized the same way whichever command comes first.
type DataDir struct {
	Path  string
	Store domain.EventStore
	// JWTSecret signs API tokens (file jwt.secret, mode 0600).
	JWTSecret []byte
	// MasterKey encrypts exchange secrets at rest (file master.key, mode
	// 0600, or TRADELEDGER_MASTER_KEY as 64 hex digits).
	MasterKey []byte
	// CheckpointKey signs the log's checkpoints (file checkpoint.key,
	// mode 0600, made at the first start and naming the log's origin, or
	// TRADELEDGER_CHECKPOINT_KEY, both in note's signer key format).
	CheckpointKey *transparency.Key
	// Tree is the Merkle tree over the log: the embedded store's own,
	// or, with EventStoreDB, one derived from the log and kept in the
	// data dir (transparency.FileTree in esdb-tree/).
	Tree audit.TreeStore
	// LogCut, when set, says how the log, its tree and the checkpoint
	// kept beside the tree disagree: the log was cut at its end
	// (logcut.go). Only a data dir opened to read has one.
	LogCut *audit.TreeVerdict
}

// OpenDataDir opens (creating if needed) the data directory at path and its
// embedded event store, unless eventstoreURL selects another store, for a
// command that appends: a log cut at its end is refused (logCutError).
func OpenDataDir(ctx context.Context, path, eventstoreURL string, logger *zap.Logger) (*DataDir, error) {
	d, err := openDataDirToRead(ctx, path, eventstoreURL, logger)
	if err != nil {
		return nil, err
	}
	if d.LogCut != nil {
		d.Close()
		return nil, &logCutError{data: path, v: *d.LogCut}
	}
	return d, nil
}

// openDataDirToRead is OpenDataDir for a command that only reads the log:
// a log cut at its end is opened as it is (DataDir.LogCut) and not
// initialized.
func openDataDirToRead(ctx context.Context, path, eventstoreURL string, logger *zap.Logger) (*DataDir, error) {
	if err := os.MkdirAll(path, 0o700); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	d := &DataDir{Path: path}
	var err error
	if d.JWTSecret, err = readOrCreateKey(filepath.Join(path, "jwt.secret")); err != nil {
		return nil, err
	}
	if d.MasterKey, err = masterKey(path); err != nil {
		return nil, err
	}
	if d.CheckpointKey, err = checkpointKey(path); err != nil {
		return nil, err
	}
	if d.Store, err = openEventStore(ctx, path, eventstoreURL, logger); err != nil {
		return nil, err
	}
	if d.Tree, err = openTree(ctx, path, d.Store); err != nil {
		d.Store.Close()
		return nil, err
	}
	if err := d.checkLogCut(ctx); err != nil {
		d.Close()
		return nil, err
	}
	if d.LogCut != nil {
		return d, nil
	}
	if err := d.initialize(ctx, logger); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// initialize brings a fresh log to its first state (initial configuration
// with the wallet, password from TRADELEDGER_PASSWORD). Every step is
// idempotent: on a log that has it already, it does nothing.
func (d *DataDir) initialize(ctx context.Context, logger *zap.Logger) error {
	steps := []func(context.Context, *DataDir, *zap.Logger) error{
		// initConfig (initial configuration) and initPassword
		// (TRADELEDGER_PASSWORD) are added here.
		initConfig,
		initPassword,
	}
	for _, step := range steps {
		if err := step(ctx, d, logger); err != nil {
			return fmt.Errorf("initialize data dir: %w", err)
		}
	}
	return nil
}

// openEventStore opens the store that url names: "" is the embedded SQLite
// file in the data dir; esdb://, esdb+discover://, kurrentdb:// and
// kurrentdb+discover:// select EventStoreDB / KurrentDB (TLS and credentials
// from the connection string).
func openEventStore(_ context.Context, dataPath, url string, logger *zap.Logger) (domain.EventStore, error) {
	if esdb.IsURL(url) {
		return openESDB(url, logger)
	}
	if url != "" && url != "sqlite" && url != "embedded" {
		return nil, fmt.Errorf("unsupported --eventstore %q", url)
	}
	s := sqlite.NewStore(filepath.Join(dataPath, "events.db"))
	if err := s.Open(); err != nil {
		return nil, fmt.Errorf("open event store: %w", err)
	}
	return s, nil
}

// Close closes the tree and the store.
func (d *DataDir) Close() error {
	var errs []error
	if c, ok := d.Tree.(*transparency.FileTree); ok {
		errs = append(errs, c.Close())
	}
	if d.Store != nil {
		errs = append(errs, d.Store.Close())
	}
	return errors.Join(errs...)
}

// esdbTreeDir is where the Merkle tree of an EventStoreDB log is kept.
const esdbTreeDir = "esdb-tree"

// openTree returns the Merkle tree over store's log: the store's own when
// it keeps one (the embedded store), else the one kept in the data dir.
func openTree(ctx context.Context, dataPath string, store domain.EventStore) (audit.TreeStore, error) {
	if t, ok := store.(audit.TreeStore); ok {
		return t, nil
	}
	t, err := transparency.OpenFileTree(ctx, filepath.Join(dataPath, esdbTreeDir), store)
	if err != nil {
		return nil, fmt.Errorf("open the Merkle tree: %w", err)
	}
	return t, nil
}

// checkpointKeyEnv holds the checkpoint signer key instead of the file.
const checkpointKeyEnv = "TRADELEDGER_CHECKPOINT_KEY"

// checkpointKey returns the key that signs the log's checkpoints: from
// TRADELEDGER_CHECKPOINT_KEY, or the file checkpoint.key, made (mode 0600)
// with a new origin the first time a data dir without one is opened. No
// error quotes the key.
func checkpointKey(dataPath string) (*transparency.Key, error) {
	if v := os.Getenv(checkpointKeyEnv); v != "" {
		k, err := transparency.ParseKey(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %s", checkpointKeyEnv, domain.ErrorMessage(err))
		}
		return k, nil
	}
	file := filepath.Join(dataPath, "checkpoint.key")
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		skey, gerr := transparency.GenerateKey(nil)
		if gerr != nil {
			return nil, gerr
		}
		if err = writeNewFile(file, []byte(skey+"\n")); err != nil && !errors.Is(err, os.ErrExist) {
			return nil, err
		}
		// Another process may have made it first: read what is there.
		b, err = os.ReadFile(file)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	if err := privateFile(file); err != nil {
		return nil, err
	}
	k, err := transparency.ParseKey(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %s", file, domain.ErrorMessage(err))
	}
	return k, nil
}

// privateFile refuses a key file that its group or others may read or
// write: whoever reads checkpoint.key can sign checkpoints and snapshots in
// the log's name. (Not on Windows, whose permissions are not mode bits.)
func privateFile(file string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	st, err := os.Stat(file)
	if err != nil {
		return err
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%s is open to its group or others (mode %04o): it signs the log's checkpoints and snapshots, so no one else may read it; run chmod 600 %s", file, perm, file)
	}
	return nil
}

// writeNewFile creates file (mode 0600; os.ErrExist if it exists) with b,
// synced.
func writeNewFile(file string, b []byte) error {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", file, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// readOrCreateKey returns the 32-byte key in file, creating it (mode 0600)
// with random bytes if missing.
func readOrCreateKey(file string) ([]byte, error) {
	b, err := os.ReadFile(file)
	if err == nil {
		if len(b) != 32 {
			return nil, fmt.Errorf("%s: want 32 bytes, found %d", file, len(b))
		}
		return b, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	b = make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", file, err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return nil, fmt.Errorf("write %s: %w", file, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, err
	}
	return b, f.Close()
}

func masterKey(dataPath string) ([]byte, error) {
	if v := os.Getenv("TRADELEDGER_MASTER_KEY"); v != "" {
		k, err := decodeHexKey(v)
		if err != nil {
			return nil, fmt.Errorf("TRADELEDGER_MASTER_KEY: %w", err)
		}
		return k, nil
	}
	return readOrCreateKey(filepath.Join(dataPath, "master.key"))
}

func decodeHexKey(s string) ([]byte, error) {
	var k [32]byte
	if len(s) != 64 {
		return nil, errors.New("want 64 hex digits (32 bytes)")
	}
	for i := 0; i < 32; i++ {
		var b byte
		if _, err := fmt.Sscanf(s[2*i:2*i+2], "%02x", &b); err != nil {
			return nil, errors.New("not hex")
		}
		k[i] = b
	}
	return k[:], nil
}

// catchUpWith returns the function that waits until runner has applied
// the log up to store's head. The embedded SQLite store reads that head
// from the file at once (sqlite.Store.Refresh), so that what another
// process appended a moment ago is included; otherwise it would be only at
// the store's next poll.
func catchUpWith(store domain.EventStore, runner *projections.Runner) func(context.Context) error {
	return func(ctx context.Context) error {
		var head uint64
		var err error
		if s, ok := store.(*sqlite.Store); ok {
			head, err = s.Refresh()
		} else {
			head, err = store.Head(ctx)
		}
		if err != nil {
			return err
		}
		return runner.WaitFor(ctx, head)
	}
}
