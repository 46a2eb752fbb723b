package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/strategy"
	"github.com/tradeledger/tradeledger/eventstore"
	"github.com/tradeledger/tradeledger/projections"
)

// initialConfig returns the first configuration of a fresh data dir
// (docs/api.md, "Configuration"): the simulator on, one paper exchange
// ("binance", no keys) with its simulated fee and starting balances, no
// pairs, the built-in strategies with their default parameters, and GUI
// defaults.
func initialConfig(wallet string) map[string]any {
	return map[string]any{
		"bot": map[string]any{
			"service_wallet": wallet,
			"SIMULATOR":      true,
			"TIMEZONE":       "UTC",
		},
		"exchanges": map[string]any{
			"binance": map[string]any{
				"isEncrypted": false,
				"key":         "",
				"secret":      "",
				"delay":       10,
				"simulator": map[string]any{
					"fee":      "0.001",
					"balances": map[string]any{"USDT": "10000", "USDC": "10000", "BTC": "0.5", "ETH": "5"},
				},
			},
		},
		"pairs": map[string]any{},
		"strategies": map[string]any{
			strategy.StrategyGain: map[string]any{
				"STRATEGY":           strategy.StrategyGain,
				"TRADING_LIMIT":      100,
				"BUYLVL":             0.6,
				"GAIN":               1,
				"EMA_PERIOD":         16,
				"MIN_VOLUME_TO_SELL": 10,
				"BUY_ENABLED":        true,
				"SELL_ENABLED":       true,
			},
			strategy.StrategyStepGrid: map[string]any{
				"STRATEGY":           strategy.StrategyStepGrid,
				"TRADING_LIMIT":      100,
				"STEP":               1,
				"MIN_VOLUME_TO_SELL": 10,
				"BUY_ENABLED":        true,
				"SELL_ENABLED":       true,
			},
			strategy.StrategyManual: map[string]any{
				"STRATEGY": strategy.StrategyManual,
			},
		},
		"GUI": map[string]any{
			"start": true,
			"theme": "dark",
		},
	}
}

// newWallet returns a random wallet-like value (0x and 40 hex digits), long
// enough for the 16 bytes the login encryption takes from it.
func newWallet() (string, error) {
	var b [20]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return "0x" + hex.EncodeToString(b[:]), nil
}

// initConfig appends the initial configuration when the config stream does
// not exist yet. The wallet is TRADELEDGER_WALLET, or a random one; it is
// the login password's encryption key, so it is never logged:
// `tradeledger wallet` prints it to the operator who asks.
// The command expects no stream, so a concurrent or repeated run is
// harmless: the loser finds the stream on its retry and writes nothing.
func initConfig(ctx context.Context, d *DataDir, logger *zap.Logger) error {
	exists, _, err := configExists(d.Store)(ctx)
	if err != nil || exists {
		return err
	}
	wallet := os.Getenv("TRADELEDGER_WALLET")
	generated := wallet == ""
	if generated {
		if wallet, err = newWallet(); err != nil {
			return err
		}
	} else if len(wallet) < 16 {
		return fmt.Errorf("TRADELEDGER_WALLET must be at least 16 characters (its first 16 bytes are the login encryption key)")
	}
	doc := initialConfig(wallet)
	res, err := eventstore.Run(eventstore.WithActor(ctx, domain.ActorCLI), eventstore.NewCommands(d.Store, nil), eventstore.Command[bool]{
		Stream: domain.StreamConfig,
		Load:   configExists(d.Store),
		Decide: func(exists bool) ([]domain.Event, error) {
			return domain.DecideConfigInit(exists, doc, domain.SystemClock{})
		},
	})
	if err != nil {
		return fmt.Errorf("append initial configuration: %w", err)
	}
	if !res.Appended() {
		return nil // another process initialized it first
	}
	if generated {
		logger.Warn("generated the service wallet (bot.service_wallet, the login encryption key); `tradeledger wallet --data " + d.Path + "` prints it")
	}
	logger.Info("initial configuration written")
	return nil
}

// configExists loads whether the config stream has an event, reading at
// most one: the expected version is domain.NoStream when it has none (and
// Any otherwise, where DecideConfigInit writes nothing).
func configExists(store domain.EventStore) func(context.Context) (bool, domain.ExpectedVersion, error) {
	return func(ctx context.Context) (bool, domain.ExpectedVersion, error) {
		it := store.ReadStream(ctx, domain.StreamConfig, 0, 1)
		exists := it.Next()
		err := it.Err()
		it.Close()
		if err != nil {
			return false, 0, fmt.Errorf("read config stream: %w", err)
		}
		if exists {
			return true, domain.Any, nil
		}
		return false, domain.NoStream, nil
	}
}

// currentConfig replays the config stream into a config projection.
func currentConfig(ctx context.Context, store domain.EventStore) (*projections.Config, error) {
	p := projections.NewConfig()
	for _, stream := range []string{domain.StreamConfig, domain.StreamCredentials} {
		it := store.ReadStream(ctx, stream, 0, 0)
		for it.Next() {
			e := it.Event()
			if err := p.Apply(&e); err != nil {
				it.Close()
				return nil, err
			}
		}
		err := it.Err()
		it.Close()
		if err != nil {
			return nil, fmt.Errorf("read %s stream: %w", stream, err)
		}
	}
	return p, nil
}

// runWallet prints bot.service_wallet of the data dir.
func runWallet(ctx context.Context, args []string, env *Env) error {
	fs := newFlagSet("wallet", env.Stderr)
	data := fs.String("data", "./data", "data directory")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	d, err := openDataDirToRead(ctx, *data, "", zap.NewNop())
	if err != nil {
		return err
	}
	defer d.Close()
	p, err := currentConfig(ctx, d.Store)
	if err != nil {
		return err
	}
	if p.Wallet() == "" {
		return fmt.Errorf("no service wallet in the configuration")
	}
	fmt.Fprintln(env.Stdout, p.Wallet())
	return nil
}
