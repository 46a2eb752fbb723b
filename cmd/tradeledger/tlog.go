package main

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore"
	"github.com/tradeledger/tradeledger/eventstore/transparency"
)

// newTlog makes the transparency log over the data dir's Merkle tree
// (DESIGN §13), a projection: the replay gives it the last checkpoint
// recorded.
func (m *Main) newTlog() {
	m.Tlog = transparency.NewLog(m.DataDir.Store, m.DataDir.Tree, m.DataDir.CheckpointKey, m.Clock)
	m.Tlog.Interval = m.Config.CheckpointInterval
	m.Tlog.Commands = eventstore.NewCommands(m.DataDir.Store, m.Runner)
}

// tlogProgressEvery is how often the first build of the tree logs how far
// it is.
const tlogProgressEvery = 5 * time.Second

// startTlog builds the tree in the background (a log written before the
// tree existed gets all of it; /readyz waits, progress logged), then
// follows the log (EventStoreDB: the tree kept in the data dir) and
// issues checkpoints every --checkpoint-interval while the log grows.
func (m *Main) startTlog() {
	log := m.Logger.Named("tlog")
	manual := m.ManualCheckpoints // as of the start: a test may clear it later, for Close's checkpoint
	m.tlogWork.start(func(ctx context.Context) {
		ctx = eventstore.WithActor(ctx, domain.ActorCore) // the checkpoints it issues
		start := time.Now()
		var last time.Time
		head, _ := m.DataDir.Store.Head(ctx)
		err := m.Tlog.Build(ctx, func(n int64) {
			// Called only while events the tree lacks are added: a log
			// written before it, at its first start.
			if time.Since(last) >= tlogProgressEvery {
				last = time.Now()
				log.Info("building the Merkle tree over the log", zap.Int64("records", n), zap.Uint64("head", head))
			}
		})
		if err != nil {
			if ctx.Err() == nil {
				log.Error("the Merkle tree could not be built: no checkpoints, proofs or readiness", zap.Error(err))
			}
			return
		}
		size, _ := m.DataDir.Tree.TreeSize(ctx)
		log.Info("Merkle tree ready", zap.Int64("records", size), zap.Duration("took", time.Since(start)),
			zap.String("origin", m.DataDir.CheckpointKey.Origin()), zap.String("key", m.DataDir.CheckpointKey.VerifierKey()))
		if ft, ok := m.DataDir.Tree.(*transparency.FileTree); ok {
			m.tlogWork.start(func(ctx context.Context) {
				if err := ft.Follow(ctx); err != nil && ctx.Err() == nil {
					log.Error("the Merkle tree stopped following the log", zap.Error(err))
				}
			})
		}
		if !manual {
			m.Tlog.Run(ctx, time.Second, func(err error) { log.Warn("checkpoint not issued", zap.Error(err)) })
		}
	})
}

// background runs goroutines until stop, which cancels their context and
// waits for them.
type background struct {
	mu     sync.Mutex
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// start runs f in a goroutine of its own with the group's context.
func (b *background) start(f func(ctx context.Context)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ctx == nil {
		b.ctx, b.cancel = context.WithCancel(context.Background())
	}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		f(b.ctx)
	}()
}

// stop cancels the goroutines and waits until they have returned.
func (b *background) stop() {
	b.mu.Lock()
	if b.cancel != nil {
		b.cancel()
	}
	b.mu.Unlock()
	b.wg.Wait()
}
