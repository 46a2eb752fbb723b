package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"go.uber.org/zap"
	"golang.org/x/term"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/gunbot"
	"github.com/tradeledger/tradeledger/domain/secrets"
	"github.com/tradeledger/tradeledger/domain/streams"
	"github.com/tradeledger/tradeledger/eventstore"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
)

// runImport is `tradeledger import [--data DIR] --from GUNBOT_DIR`.
func runImport(ctx context.Context, args []string, env *Env) error {
	fs := newFlagSet("import", env.Stderr)
	data := fs.String("data", "./data", "data directory")
	from := fs.String("from", "", "Gunbot-style folder to import (config.js or config.json, autoconfig.json, custom-editor.json, backups/, json/*-state.json, customStrategies/*.js, AutoConfig variable files)")
	takeWallet := fs.Bool("take-wallet", false, "use the folder's bot.service_wallet (the login encryption key) instead of keeping the data dir's")
	start := fs.Bool("start", false, "start the bot core after the import: without it an import never starts trading, whatever the folder's GUI.start says, and stops a started core whose configuration it changes")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *from == "" {
		return errors.New("--from is required: the Gunbot folder to import")
	}
	if st, err := os.Stat(*from); err != nil || !st.IsDir() {
		return fmt.Errorf("--from %s: not a readable directory", *from)
	}
	logger := cliLogger(env.Stderr, zap.WarnLevel)
	// A data dir this import creates is removed again if the import
	// fails: no half-initialised dir is left behind.
	_, statErr := os.Stat(*data)
	fresh := errors.Is(statErr, os.ErrNotExist)
	d, err := OpenDataDir(ctx, *data, "", logger)
	if err != nil {
		if fresh {
			os.RemoveAll(*data)
		}
		return err
	}
	box, err := secrets.NewSecretBox(d.MasterKey)
	if err != nil {
		d.Close()
		return fmt.Errorf("master key: %w", err)
	}
	im := &folderImport{Store: d.Store, Box: box, Progress: env.Stderr, Warn: env.Stderr, Terminal: isTerminal(env.Stderr), TakeWallet: *takeWallet, Start: *start}
	sum, err := im.Run(ctx, *from)
	d.Close()
	if err != nil {
		if fresh {
			if rmErr := os.RemoveAll(*data); rmErr == nil {
				return fmt.Errorf("%w (the new data dir %s was removed)", err, *data)
			}
		}
		return err
	}
	fmt.Fprintln(env.Stdout, sum.String())
	return nil
}

// isTerminal reports whether w is a terminal: progress lines, and the
// console log of --log-format auto, go only there.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// folderImport wires an import: the folder read from disk by the gunbot
// package, its units appended to the store in batches.
type folderImport struct {
	Store domain.EventStore
	Box   *secrets.SecretBox
	// Progress receives a progress line on a terminal (Terminal true).
	Progress io.Writer
	Terminal bool
	// Warn receives one line per skipped item.
	Warn       io.Writer
	TakeWallet bool
	// Start starts the bot core after the import (import --start); see
	// keepStartState.
	Start bool
}

// importChunk is how many orders one batch append carries (49,152
// events, about 30 MB): the SQLite store commits them in groups of its
// MaxBatchEvents, sealing the next group while it writes one. The next
// chunk is built while one is appended.
const importChunk = 16384

// Run reads the folder dir and appends its events: the configuration and
// the files first, then the orders in trade-time order. A malformed
// configuration is an error (nothing is appended); a malformed file or
// order is skipped with a warning.
func (im *folderImport) Run(ctx context.Context, dir string) (gunbot.Summary, error) {
	sum := gunbot.Summary{From: dir}
	folder, err := gunbot.Read(os.DirFS(dir))
	if err != nil {
		return sum, err
	}
	conv := &gunbot.Importer{Box: im.Box, Clock: domain.SystemClock{}, TakeWallet: im.TakeWallet}
	units, err := im.configAndFiles(ctx, dir, folder, conv, &sum)
	if err != nil {
		return sum, err
	}
	head, err := im.Store.Head(ctx)
	if err != nil {
		return sum, err
	}
	legacy, err := holdsLegacyImports(ctx, im.Store, head)
	if err != nil {
		return sum, err
	}
	if s, ok := im.Store.(*sqlite.Store); ok {
		// An import commits groups of thousands of events: a checkpoint
		// every few of them rather than after each (200,000 orders, 11
		// alternating pairs: about 5% faster, the median pair 1.04-1.06×;
		// the box's own swings are larger).
		s.SetCheckpointPages(importCheckpointPages)
		defer s.SetCheckpointPages(0)
	}
	if legacy {
		for i := range folder.Orders {
			folder.Orders[i].ID = folder.Orders[i].LegacyID
		}
		// Legacy ids sort at random places of the stream index, where
		// each commit rewrites a page per order: larger groups write
		// fewer pages (200,000 such orders: 14,700-15,500 orders/s in
		// groups of 8,192 events, about 20,000 in groups of 65,536).
		if s, ok := im.Store.(*sqlite.Store); ok {
			s.MaxBatchEvents = legacyBatchEvents
		}
	}
	// The events carry ActorImport (gunbot.Importer); the command path
	// stamps the context's actor, so it is the same.
	ctx = eventstore.WithActor(ctx, domain.ActorImport)
	a := &unitAppender{im: im, conv: conv, cmds: eventstore.NewCommands(im.Store, nil), legacy: legacy, head: head,
		sum: &sum, total: len(units) + len(folder.Orders)}
	if im.Start {
		a.total++
	}
	if err := a.append(ctx, units); err != nil {
		return sum, err
	}
	if err := a.keepStartState(ctx, folder.Config); err != nil {
		return sum, err
	}
	if err := im.appendOrders(ctx, conv, folder.Orders, func(units []gunbot.Unit) error { return a.append(ctx, units) }); err != nil {
		return sum, err
	}
	if im.Terminal && im.Progress != nil && a.total > 0 {
		fmt.Fprintln(im.Progress)
	}
	return sum, nil
}

// configAndFiles returns the units of the folder's configuration and
// stored files, and warns of (and counts in sum) what Read skipped.
func (im *folderImport) configAndFiles(ctx context.Context, dir string, folder *gunbot.Folder, conv *gunbot.Importer, sum *gunbot.Summary) ([]gunbot.Unit, error) {
	var units []gunbot.Unit
	if folder.Config != nil {
		cur, err := currentConfig(ctx, im.Store)
		if err != nil {
			return nil, err
		}
		conv.Wallet = cur.Wallet()
		u, notes, err := conv.Config(folder.Config)
		if err != nil {
			return nil, err
		}
		sum.SecretsDropped, sum.Wallet = notes.SecretsDropped, notes.Wallet
		units = append(units, u)
	}
	for _, s := range folder.Skipped {
		sum.Skipped++
		if im.Warn != nil {
			fmt.Fprintf(im.Warn, "import: skipped %s: %s\n", filepath.Join(dir, filepath.FromSlash(s.Path)), s.Reason)
		}
	}
	for _, f := range folder.Files {
		units = append(units, conv.File(f))
	}
	return units, nil
}

// unitAppender appends an import's units, batch by batch, and counts them
// in sum.
type unitAppender struct {
	im     *folderImport
	conv   *gunbot.Importer
	cmds   *eventstore.Commands
	legacy bool   // orders have their LegacyID (holdsLegacyImports)
	head   uint64 // the log's head before the import appended anything
	sum    *gunbot.Summary
	// done of total units are appended or found (the progress line).
	done, total int
	// configChanged: the folder's configuration was appended (not found
	// stored before).
	configChanged bool
}

// append appends units in one batch and counts each as added or stored
// before; a failed unit is settled (settleConflict) or ends the import.
func (a *unitAppender) append(ctx context.Context, units []gunbot.Unit) error {
	if len(units) == 0 {
		return nil
	}
	batch := make([]domain.StreamAppend, len(units))
	for i := range units {
		batch[i] = units[i].StreamAppend
	}
	res, err := a.cmds.AppendBatch(ctx, batch)
	var errs []error
	if err != nil {
		var be *domain.BatchError
		if !errors.As(err, &be) {
			return a.im.fail(fmt.Errorf("import: %w", err))
		}
		errs = be.Errs
	}
	for i := range units {
		if errs != nil && errs[i] != nil {
			added, err := a.settleConflict(ctx, &units[i], errs[i])
			if err != nil {
				return a.im.fail(err)
			}
			a.sum.Count(&units[i], added)
			continue
		}
		// A unit stored before answers with its original positions, at
		// most the head the import started from.
		added := res[i].LastPosition > a.head
		a.sum.Count(&units[i], added)
		if added && units[i].Kind == gunbot.KindConfig {
			a.configChanged = true
		}
	}
	a.done += len(units)
	if a.im.Terminal && a.im.Progress != nil {
		fmt.Fprintf(a.im.Progress, "\rimporting %d/%d %-50.50s", a.done, a.total, units[len(units)-1].What)
	}
	return nil
}

// keepStartState decides the bot core's state after an import (c is the
// folder's configuration, nil without one) and says in the summary what
// became of it. An import never starts trading on its own: Gunbot starts
// on launch when GUI.start is true, but a configuration seen for the first
// time here must be looked at before it trades (a folder's strategy once
// sold a paper account's BTC 40% under the market seconds after an
// import). So:
//   - with --start (Start), the core is started, unless it runs already;
//   - without it, a stopped core stays stopped, and a started one whose
//     configuration this import changed is stopped (what it would trade is
//     new); a started one whose configuration is unchanged keeps running.
//
// The summary names GUI.start when the folder says it, and how to start.
func (a *unitAppender) keepStartState(ctx context.Context, c *gunbot.ConfigFile) error {
	running, err := systemRunning(ctx, a.im.Store)
	if err != nil {
		return err
	}
	gui := ""
	if c != nil && gunbot.StartsSystem(c) {
		gui = "the configuration's GUI.start is true, but "
	}
	const how = "start it with tradeledger import --start, system/start or the dashboard once its pairs and strategies are right"
	switch {
	case a.im.Start && running:
		a.sum.System = "the bot core was running already (--start)"
	case a.im.Start:
		if err := a.append(ctx, []gunbot.Unit{systemUnit("--start", domain.TypeSystemStarted, domain.SystemStarted{})}); err != nil {
			return err
		}
		a.sum.System = "the bot core is started, as --start says"
	case running && a.configChanged:
		if err := a.append(ctx, []gunbot.Unit{systemUnit("stop", domain.TypeSystemStopped, domain.SystemStopped{})}); err != nil {
			return err
		}
		a.sum.System = "the bot core is stopped: this import changed its configuration, and " + gui + "an import never starts trading on its own; " + how
	case running:
		a.sum.System = "the bot core keeps running (its configuration is unchanged)"
	default:
		a.sum.System = "the bot core stays stopped: " + gui + "an import never starts trading on its own; " + how
	}
	return nil
}

// systemUnit is an event of the system stream as an import unit, with a
// new id: the operator's request of this run, not a fact of the folder.
func systemUnit(what, typ string, data any) gunbot.Unit {
	e := domain.NewEvent(domain.SystemClock{}, typ, data)
	e.Actor = domain.ActorImport
	return gunbot.Unit{What: what, Kind: gunbot.KindSystem, StreamAppend: domain.StreamAppend{
		Stream: domain.StreamSystem, Expected: domain.Any, Events: []domain.Event{e},
	}}
}

// systemRunning reports whether the log's system stream leaves the bot
// core started (its last event is SystemStarted).
func systemRunning(ctx context.Context, store domain.EventStore) (bool, error) {
	it := store.ReadStream(ctx, domain.StreamSystem, 0, 0)
	defer it.Close()
	running := false
	for it.Next() {
		switch it.Event().Type {
		case domain.TypeSystemStarted:
			running = true
		case domain.TypeSystemStopped:
			running = false
		}
	}
	if err := it.Err(); err != nil {
		return false, fmt.Errorf("import: read the system stream: %w", err)
	}
	return running, nil
}

// fail ends the progress line before err is printed.
func (im *folderImport) fail(err error) error {
	if im.Terminal && im.Progress != nil {
		fmt.Fprintln(im.Progress)
	}
	return err
}

// holdsLegacyImports reports whether the log up to head holds an order
// that a version before 2026-11-26 imported: a stream order-<id> with id
// in [2^52, 2^53) (gunbot.IsLegacyOrderID). An import into such a data dir
// gives orders their LegacyID, as those versions did, so that it finds the
// orders they stored; otherwise orders get time-ordered ids
// (gunbot.OrderID). A new data dir (head 0) reads nothing; another reads
// its log up to the first such stream, the whole log when there is none.
func holdsLegacyImports(ctx context.Context, store domain.EventStore, head uint64) (bool, error) {
	if head == 0 {
		return false, nil
	}
	it := store.ReadAll(ctx, 0, 0)
	defer it.Close()
	for it.Next() {
		e := it.Event()
		if e.Position > head {
			break
		}
		if id, ok := streams.OrderStreamID(e.Stream); ok && gunbot.IsLegacyOrderID(id) {
			return true, nil
		}
	}
	if err := it.Err(); err != nil {
		return false, fmt.Errorf("import: read the log for orders imported before: %w", err)
	}
	return false, nil
}

// importCheckpointPages is the SQLite store's WAL size, in pages, past
// which an import's commit checkpoints (sqlite.Store.SetCheckpointPages):
// a WAL of up to about 32 MiB, several of its commits.
const importCheckpointPages = 8192

// legacyBatchEvents is the SQLite store's AppendBatch group size for an
// import that gives orders their legacy ids (holdsLegacyImports).
const legacyBatchEvents = 1 << 16

// maxOrderIDProbes bounds how many ids settleConflict tries for one order.
// Each further id is taken only when another order traded in the same
// second got the same 19 bits of hash (gunbot.OrderID).
const maxOrderIDProbes = 64

// settleConflict decides a unit whose append failed with appendErr, and
// reports whether it is appended now (false: it was stored before). Only
// an order's ECONFLICT is settled; any other failure is the import's
// error.
//   - With legacy ids (holdsLegacyImports), the stream may hold the same
//     order appended by an earlier version under other event ids
//     (gunbot.IsImportedOrder): stored before.
//   - With time-ordered ids, another order holds the id: the same order
//     would have been a re-append, since its events' ids derive from the
//     order, not from the id. The order moves to the next id and is
//     appended alone there, once more for every id taken. Moved orders are
//     appended after their chunk, so the log is then not in trade-time
//     order for them; a re-import moves them the same way and finds them.
func (a *unitAppender) settleConflict(ctx context.Context, u *gunbot.Unit, appendErr error) (bool, error) {
	if u.Kind != gunbot.KindOrder || domain.ErrorCode(appendErr) != domain.ECONFLICT {
		return false, fmt.Errorf("import %s: %w", u.What, appendErr)
	}
	if a.legacy {
		return false, a.im.importedBefore(ctx, u, appendErr)
	}
	o := u.Order
	for range maxOrderIDProbes {
		o.ID++
		moved := a.conv.Order(o)
		res, err := a.cmds.AppendBatch(ctx, []domain.StreamAppend{moved.StreamAppend})
		if err == nil {
			return res[0].LastPosition > a.head, nil
		}
		var be *domain.BatchError
		if errors.As(err, &be) {
			err = be.Errs[0]
		}
		if domain.ErrorCode(err) != domain.ECONFLICT {
			return false, fmt.Errorf("import %s as order %d: %w", u.What, o.ID, err)
		}
	}
	return false, fmt.Errorf("import %s: ids %d to %d all hold other orders: %w", u.What, u.Order.ID, o.ID, appendErr)
}

// importedBefore returns nil when u's append failed (appendErr) only
// because an earlier version imported the same order under other event ids
// (a stream gunbot.IsImportedOrder recognizes), else the import's error.
func (im *folderImport) importedBefore(ctx context.Context, u *gunbot.Unit, appendErr error) error {
	fail := fmt.Errorf("import %s: %w", u.What, appendErr)
	it := im.Store.ReadStream(ctx, u.Stream, 0, 1)
	defer it.Close()
	if !it.Next() {
		if err := it.Err(); err != nil {
			return fmt.Errorf("import %s: read %s: %w", u.What, u.Stream, err)
		}
		return fail
	}
	if first := it.Event(); !gunbot.IsImportedOrder(u, &first) {
		return fail
	}
	return nil
}

// appendOrders hands the orders' units to appendUnits in chunks of
// importChunk, in order, building the next chunk while one is appended.
// The chunks' events are written into three arrays in turn (one appended,
// one built, one waiting between), each reused once its chunk is appended:
// the store copies what it keeps.
func (im *folderImport) appendOrders(ctx context.Context, conv *gunbot.Importer, orders []gunbot.Order, appendUnits func([]gunbot.Unit) error) error {
	type chunk struct {
		units  []gunbot.Unit
		events []domain.Event
	}
	chunks := make(chan chunk, 1)
	spare := make(chan []domain.Event, 3)
	for range 3 {
		spare <- nil
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		defer close(chunks)
		for from := 0; from < len(orders); from += importChunk {
			part := orders[from:min(from+importChunk, len(orders))]
			var events []domain.Event
			select {
			case events = <-spare:
			case <-stop:
				return
			case <-ctx.Done():
				return
			}
			if len(events) < gunbot.OrderEvents*len(part) {
				events = make([]domain.Event, gunbot.OrderEvents*importChunk)
			}
			units := make([]gunbot.Unit, len(part))
			for i, o := range part {
				units[i] = conv.OrderInto(o, events[gunbot.OrderEvents*i:gunbot.OrderEvents*(i+1)])
			}
			select {
			case chunks <- chunk{units, events}:
			case <-stop:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	for c := range chunks {
		if err := appendUnits(c.units); err != nil {
			return err
		}
		spare <- c.events
	}
	return ctx.Err()
}
