package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore"
)

// runAttention clears an order's OrderNeedsAttention (an exchange sent a
// number of it the ledger cannot hold; its pair paused): `attention clear
// --order ID --note TEXT` appends OrderAttentionCleared to the order's
// stream. A server running on the same data dir sees it within half a
// second (its projections apply it) and trades on the pair again once no
// other order of it needs attention. `attention show --order ID` prints
// what the order needs attention for.
func runAttention(ctx context.Context, args []string, env *Env) error {
	verb := ""
	if len(args) > 0 && !isHelpFlag(args[0]) {
		verb, args = args[0], args[1:]
		if verb != "clear" && verb != "show" {
			return errors.New("usage: tradeledger attention clear|show --order ID [--note TEXT]")
		}
	}
	fs := newFlagSet("attention", env.Stderr)
	data, storeURL := dataDirFlags(fs)
	order := fs.Int64("order", 0, "order id")
	note := fs.String("note", "", "what was done about it (recorded in the event)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if verb == "" {
		return errors.New("usage: tradeledger attention clear|show --order ID [--note TEXT]")
	}
	if *order <= 0 {
		return errors.New("--order ID is required")
	}
	logger := zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig()),
		zapcore.AddSync(env.Stderr), zap.InfoLevel))
	d, err := OpenDataDir(ctx, *data, *storeURL, logger)
	if err != nil {
		return err
	}
	defer d.Close()
	stream := domain.OrderStream(*order)
	load := eventstore.LoadStream(d.Store, stream, domain.NewOrder, func(o domain.Order, e *domain.Event) (domain.Order, error) {
		err := o.Apply(e)
		return o, err
	})
	if verb == "show" {
		o, _, err := load(ctx)
		if err != nil {
			return err
		}
		if o.Attention == "" {
			fmt.Fprintf(env.Stdout, "order %d needs no attention\n", *order)
			return nil
		}
		fmt.Fprintf(env.Stdout, "order %d (%s %s) needs attention: %s\n", *order, o.Exchange, o.Pair, o.Attention)
		return nil
	}
	ctx = eventstore.WithActor(ctx, domain.ActorCLI)
	_, err = eventstore.Run(ctx, eventstore.NewCommands(d.Store, nil), eventstore.Command[domain.Order]{
		Stream: stream,
		Load:   load,
		Decide: func(o domain.Order) ([]domain.Event, error) {
			return o.DecideClearAttention(domain.SystemClock{}, *note)
		},
		Conflict: "append OrderAttentionCleared: order " + strconv.FormatInt(*order, 10) + " keeps changing; try again",
	})
	if err != nil {
		return errors.New(domain.ErrorMessage(err))
	}
	fmt.Fprintf(env.Stdout, "order %d: attention cleared; its pair trades again once no other order of it needs attention\n", *order)
	return nil
}
