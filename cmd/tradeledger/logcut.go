package main

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore"
	"github.com/tradeledger/tradeledger/eventstore/transparency"
)

// A log cut at its end (rows removed from its store, with or without its
// Merkle tree's) is refused by every command that appends: serve, import,
// passwd, token, checkpoint, proof, attention, snapshot; and by migrate,
// which would copy it into another store as if it were whole. Writing on
// would put new events at positions the signed tree holds with other
// hashes.
// The commands that only read the log (verify, replay, restore, export,
// reports, wallet) open it as it is, so that an operator can see what is
// there. `serve --accept-truncated-log` goes on, recording the decision.

// checkLogCut sets d.LogCut when the log, its tree and the checkpoint kept
// beside the tree disagree (transparency.CheckAgreement).
func (d *DataDir) checkLogCut(ctx context.Context) error {
	v, err := transparency.CheckAgreement(ctx, d.Store, d.Tree, d.CheckpointKey.VerifierKey())
	if err != nil {
		return fmt.Errorf("check the log against its Merkle tree: %w", err)
	}
	if v.Problem != "" {
		d.LogCut = &v
	}
	return nil
}

// logCutError is a command's refusal of a data dir whose log was cut at
// its end: what was found, and what the operator can do.
type logCutError struct {
	data string
	v    domain.TreeVerdict
	verb string // what is refused: "start" when empty, "migrate"
}

func (e *logCutError) Error() string {
	verb := e.verb
	if verb == "" {
		verb = "start"
	}
	return fmt.Sprintf(`refusing to %s: %s.
Writing on would put new events at positions the signed Merkle tree already holds with other hashes, a history that
contradicts the checkpoints given out. Nothing was written. What you can do:
  - see what the log holds:   tradeledger verify --heads --data %s
  - restore the data directory from a copy that holds the whole log, then start again
  - go on without the lost events:   tradeledger serve --accept-truncated-log --data %s
    (records the decision as an event naming the lost positions, and signs a checkpoint that says so)`,
		verb, e.v.Problem, e.data, e.data)
}

// acceptLogCut is serve --accept-truncated-log on a data dir whose log was
// cut at its end (d.LogCut): the tree is cut back to what the log holds,
// the decision is recorded and a checkpoint saying so is signed
// (transparency.Log.AcceptCut). It logs what was lost.
func acceptLogCut(ctx context.Context, d *DataDir, logger *zap.Logger) error {
	v := *d.LogCut
	ctx = eventstore.WithActor(ctx, domain.ActorCLI)
	l := transparency.NewLog(d.Store, d.Tree, d.CheckpointKey, domain.SystemClock{})
	c, err := l.AcceptCut(ctx, v)
	if err != nil {
		return fmt.Errorf("--accept-truncated-log: %w", err)
	}
	logger.Warn("going on with a log cut at its end, as --accept-truncated-log asked: the decision is recorded (log-cuts stream) and the new checkpoint says so",
		zap.String("found", v.Problem), zap.Int64("kept", v.Agreed), zap.Int64("tree", v.Records), zap.Int64("checkpoint", v.Checkpoint),
		zap.Uint64("lostFrom", v.LostFrom), zap.Uint64("lostTo", v.LostTo), zap.Int64("newCheckpoint", c.Size))
	d.LogCut = nil
	return nil
}

// openToWrite is open for a command that appends: a log cut at its end is
// refused (logCutError).
func (f *storeFlags) openToWrite(ctx context.Context) (*DataDir, error) {
	d, err := f.open(ctx)
	if err != nil {
		return nil, err
	}
	if d.LogCut != nil {
		d.Close()
		return nil, &logCutError{data: f.data, v: *d.LogCut}
	}
	return d, nil
}

// openDataDir opens serve's data dir: a log cut at its end is refused,
// unless --accept-truncated-log, which goes on with it (acceptLogCut).
func (m *Main) openDataDir(ctx context.Context) (*DataDir, error) {
	if !m.AcceptTruncatedLog {
		return OpenDataDir(ctx, m.Config.Data, m.Config.EventStore, m.Logger)
	}
	d, err := openDataDirToRead(ctx, m.Config.Data, m.Config.EventStore, m.Logger)
	if err != nil || d.LogCut == nil {
		if err == nil {
			m.Logger.Info("--accept-truncated-log: the log, its Merkle tree and the last checkpoint agree; nothing to accept")
		}
		return d, err
	}
	if err := acceptLogCut(ctx, d, m.Logger); err != nil {
		d.Close()
		return nil, err
	}
	if err := d.initialize(ctx, m.Logger); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// finalCheckpointTimeout bounds the checkpoint serve signs as it stops.
const finalCheckpointTimeout = 10 * time.Second

// signFinalCheckpoint signs a checkpoint of the whole log as serve stops,
// when it grew since the last one (not with ManualCheckpoints): every
// event the service acknowledged is then covered by a checkpoint kept
// beside the tree, so that a log cut while the service is down, with its
// tree or without, is refused at the next start.
func (m *Main) signFinalCheckpoint() {
	if m.Tlog == nil || m.ManualCheckpoints || m.Tlog.Ready() != nil {
		return
	}
	ctx, cancel := context.WithTimeout(eventstore.WithActor(context.Background(), domain.ActorCore), finalCheckpointTimeout)
	defer cancel()
	_, _, err := m.Tlog.Issue(ctx, false)
	if err == nil {
		// The tree adds the checkpoint's own event, and keeps it: the
		// embedded store's did already, a FileTree no longer follows.
		err = m.DataDir.Tree.BuildTree(ctx, nil)
	}
	if err != nil && domain.ErrorCode(err) != domain.ENOTFOUND && m.Logger != nil {
		m.Logger.Warn("no checkpoint signed at shutdown", zap.Error(err))
	}
}
