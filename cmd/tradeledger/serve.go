package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/secrets"
	"github.com/tradeledger/tradeledger/eventstore/transparency"
	"github.com/tradeledger/tradeledger/eventstore/transparency/witnesses"
	"github.com/tradeledger/tradeledger/exchange/engine"
	"github.com/tradeledger/tradeledger/exchange/paper"
	tlhttp "github.com/tradeledger/tradeledger/http"
	"github.com/tradeledger/tradeledger/projections"
	"github.com/tradeledger/tradeledger/projections/clickhouse"
	"github.com/tradeledger/tradeledger/projections/metrics"
	"github.com/tradeledger/tradeledger/projections/webhook"
)

// ServeConfig is the serve command's settings (docs/operations.md, "Operator commands").
type ServeConfig struct {
	Data        string
	Listen      string
	FilesListen string
	EventStore  string
	ClickHouse  string
	ReadFrom    string
	PnlMethod   string
	TokenTTL    time.Duration
	TLSCert     string
	TLSKey      string
	LogLevel    string
	// LogFormat is LogFormatAuto, LogFormatConsole or LogFormatJSON.
	LogFormat string
	// MetricsListen, when set, serves /metrics without a token on its own
	// address (metrics.go).
	MetricsListen string
	// CORSOrigins lets pages of these origins call the API (comma-separated).
	CORSOrigins string
	// TrustedProxies are the reverse proxies (CIDRs, comma-separated)
	// whose X-Forwarded-For names the client for the login limiter.
	TrustedProxies string
	// MaxConns caps the open connections of each listener.
	MaxConns int
	// CheckpointInterval is the least time between two checkpoints of
	// the Merkle tree signed because the log grew; PublicTlog serves
	// /tlog/* (checkpoint and tiles) without a token.
	CheckpointInterval time.Duration
	PublicTlog         bool
	// SnapshotEvery is how many events pass between two read-model
	// snapshots (0: none written), SnapshotInterval the longest wait
	// before one of a log that grew (snapshot.go).
	SnapshotEvery    uint64
	SnapshotInterval time.Duration
	// SnapshotDir is where the snapshots are ("": the data dir's
	// snapshots/).
	SnapshotDir string
	// SyncInterval is the least time between two reads of an exchange
	// account's new activity by the core's cycle (and balance checks).
	SyncInterval time.Duration
	// Witnesses are the witnesses each checkpoint is sent to (--witness
	// 'VKEY URL', repeatable); WitnessQuorum how many must cosign it (0:
	// all) before /healthz stops counting the missing (witnesses.go).
	Witnesses     witnessFlag
	WitnessQuorum int
	// SnapshotCheckShare is the share of one core the background check
	// of the snapshot the start loaded takes at most (0: no check;
	// snapcheck.go).
	SnapshotCheckShare float64
	// Instance names this service among those sharing the ClickHouse
	// database (clickhouse.go; empty: the log's origin id).
	Instance string
}

// Main is the running service: ParseFlags fills Config, Run opens and wires
// everything, Close tears it down in reverse.
type Main struct {
	Config ServeConfig
	Logger *zap.Logger
	Clock  domain.Clock

	DataDir *DataDir
	Runner  *projections.Runner
	// projections are the runner's projections (projections.go).
	projections []projections.Projection
	Server      *tlhttp.Server
	// Engine is the trading engine: its order state, trade commands,
	// reconciliation, emulation and the pair scheduler (Engine.Scheduler).
	// Simulator is the paper exchange.
	Engine    *engine.Engine
	Simulator *paper.Simulator
	// Connectors chooses each exchange's connector (paper or real) from
	// the configuration among this binary's (connectors.go); the engine
	// trades on it.
	Connectors *engine.Connectors
	// ConnectorURLs, when set, replaces a connector's API host, by
	// connector name (tests: a fixture server). The zero value is
	// production behaviour.
	ConnectorURLs map[string]string
	// Sink feeds ClickHouse when --clickhouse is set; pnlReader serves the
	// PNL routes from it with --read-from clickhouse (clickhouse.go).
	Sink      *clickhouse.Sink
	pnlReader *clickhouse.Reader
	fleet     *clickhouse.Fleet
	// ManualCycles, when true, leaves the core's background schedule off:
	// the caller (a test on a domain.ManualClock) drives Core.Cycle. The
	// zero value is production behaviour.
	ManualCycles bool
	// Webhooks deliver chosen events to config.notifications.webhooks.
	Webhooks *webhook.Notifier
	// Tlog signs checkpoints of the Merkle tree over the log and serves
	// its proofs (tlog.go). ManualCheckpoints, when true, leaves its
	// background issuing off: the caller (a test on a ManualClock) calls
	// Tlog.Tick. The zero value is production behaviour.
	Tlog              *transparency.Log
	ManualCheckpoints bool
	// Witnesses collects the witnesses' cosignatures of the checkpoints
	// (--witness; nil without). With ManualCheckpoints the caller calls
	// Witnesses.Tick.
	Witnesses *witnesses.Client
	tlogWork  background
	// Metrics are the Prometheus metrics (metrics.go).
	Metrics    *metrics.Metrics
	metricsLn  net.Listener
	metricsSrv *http.Server

	// models are the read models serve makes itself (projections.go).
	models serveModels
	// Snapshots are the data dir's read-model snapshots; SnapshotWriter
	// writes one every --snapshot-every events or --snapshot-interval
	// (snapshot.go). ManualSnapshots, when true, leaves the background
	// writes off: the caller (a test) calls SnapshotWriter.Write. The zero
	// value is production behaviour.
	Snapshots       *projections.Snapshots
	SnapshotWriter  *projections.SnapshotWriter
	ManualSnapshots bool
	// snapCheck is the background check of the start snapshot against
	// the log (snapcheck.go); snapshotsSkipped counts the snapshots the
	// start passed over.
	snapCheck        *snapshotCheck
	snapshotsSkipped int
	// storeChecked is closed once the store's integrity check started at
	// the start has returned (nil: none was started).
	storeChecked chan struct{}

	// AcceptTruncatedLog goes on with a log cut at its end, recording the
	// decision (--accept-truncated-log, a one-shot argument without an
	// environment twin; logcut.go). The zero value refuses to start.
	AcceptTruncatedLog bool

	lock   *os.File  // the data dir's serve lock, held until Close
	stderr io.Writer // where the log goes (ParseFlags: the command's stderr)
}

// NewMain returns a Main with default settings.
func NewMain() *Main {
	return &Main{
		Config: ServeConfig{Data: "./data", Listen: "127.0.0.1:3000", FilesListen: "127.0.0.1:5051", ReadFrom: "memory", PnlMethod: "lofo", TokenTTL: tlhttp.DefaultTokenTTL, LogLevel: "info", LogFormat: LogFormatAuto, MaxConns: tlhttp.DefaultMaxConns,
			CheckpointInterval: transparency.DefaultInterval, SnapshotEvery: projections.DefaultSnapshotEvery,
			SnapshotInterval: projections.DefaultSnapshotInterval, SyncInterval: engine.DefaultSyncInterval,
			SnapshotCheckShare: DefaultSnapshotCheckShare},
		Clock: domain.SystemClock{},
	}
}

// ParseFlags fills m.Config from args and their env twins.
func (m *Main) ParseFlags(args []string, env *Env) error {
	fs := m.flagSet(env.Stderr)
	fs.BoolVar(&m.AcceptTruncatedLog, "accept-truncated-log", false, "go on with a log cut at its end: record the decision as an event naming the lost positions and sign a checkpoint that says so (without it, serve refuses to start on such a log)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	m.stderr = env.Stderr
	if _, err := tlhttp.ParseTrustedProxies(m.Config.TrustedProxies); err != nil {
		return fmt.Errorf("--trusted-proxies: %w", err)
	}
	if _, err := tlhttp.ParseCORSOrigins(m.Config.CORSOrigins); err != nil {
		return fmt.Errorf("--cors-origins: %w", err)
	}
	if m.Config.Instance != "" {
		if err := clickhouse.CheckInstance(m.Config.Instance); err != nil {
			return fmt.Errorf("--instance: %w", err)
		}
	}
	return nil
}

// flagSet returns serve's flags bound to m.Config: they are the settings
// that have environment twins (hasEnvTwin).
func (m *Main) flagSet(stderr io.Writer) *flag.FlagSet {
	fs := newFlagSet("serve", stderr)
	c := &m.Config
	fs.StringVar(&c.Data, "data", c.Data, "data directory")
	fs.StringVar(&c.Listen, "listen", c.Listen, "address of the API listener")
	fs.StringVar(&c.FilesListen, "files-listen", c.FilesListen, "address of the config and files listener (empty: off)")
	fs.StringVar(&c.EventStore, "eventstore", c.EventStore, "event store URL (empty: embedded SQLite; esdb://host:2113?tls=false for EventStoreDB)")
	fs.StringVar(&c.ClickHouse, "clickhouse", c.ClickHouse, "ClickHouse URL for the analytics sink (empty: off)")
	fs.StringVar(&c.ReadFrom, "read-from", c.ReadFrom, "where PNL reads come from: memory or clickhouse")
	fs.StringVar(&c.Instance, "instance", c.Instance, "this service's name in the ClickHouse database several services share (the fleet routes list it; letters, digits, . _ -; empty: the log's origin id)")
	fs.StringVar(&c.PnlMethod, "pnl-method", c.PnlMethod, "lot matching for PNL: "+domain.PnlMethodNames)
	fs.DurationVar(&c.TokenTTL, "token-ttl", c.TokenTTL, "lifetime of API tokens")
	fs.StringVar(&c.TLSCert, "tls-cert", c.TLSCert, "TLS certificate file (with --tls-key: serve HTTPS)")
	fs.StringVar(&c.TLSKey, "tls-key", c.TLSKey, "TLS key file")
	fs.StringVar(&c.LogLevel, "log-level", c.LogLevel, "debug, info, warn or error")
	fs.StringVar(&c.LogFormat, "log-format", c.LogFormat, "console (for a person), json (one object per line) or auto: console on a terminal, JSON otherwise")
	fs.StringVar(&c.CORSOrigins, "cors-origins", c.CORSOrigins, "origins (https://host[:port],…) whose pages may call the API from a browser (empty: none)")
	fs.StringVar(&c.MetricsListen, "metrics-listen", c.MetricsListen, "address serving /metrics without a token (empty: off; /metrics on --listen needs a token)")
	fs.IntVar(&c.MaxConns, "max-conns", c.MaxConns, "most open connections per listener (more wait to be accepted; 0: no cap)")
	fs.StringVar(&c.TrustedProxies, "trusted-proxies", c.TrustedProxies, "reverse proxies (CIDR,…) whose X-Forwarded-For the login limiter keys on (empty: none)")
	fs.DurationVar(&c.CheckpointInterval, "checkpoint-interval", c.CheckpointInterval, "least time between two signed checkpoints of the log's Merkle tree, issued when the log grew")
	fs.BoolVar(&c.PublicTlog, "public-tlog", c.PublicTlog, "serve /tlog/checkpoint and /tlog/tile/… (the Merkle tree, for mirrors) without a token")
	fs.Uint64Var(&c.SnapshotEvery, "snapshot-every", c.SnapshotEvery, "write a read-model snapshot (data dir's snapshots/) every this many events (0: none)")
	fs.DurationVar(&c.SnapshotInterval, "snapshot-interval", c.SnapshotInterval, "longest wait before a read-model snapshot of a log that grew")
	fs.StringVar(&c.SnapshotDir, "snapshot-dir", c.SnapshotDir, "directory of the read-model snapshots (default: the data directory's snapshots/)")
	fs.DurationVar(&c.SyncInterval, "sync-interval", c.SyncInterval, "least time between two reads of an exchange account's new activity (and balance checks) by the core")
	fs.Var(&c.Witnesses, "witness", "a witness each signed checkpoint is sent to (c2sp.org/tlog-witness): 'VKEY URL', its verifier key and URL (repeatable; the environment twin holds one per line)")
	fs.IntVar(&c.WitnessQuorum, "witness-quorum", c.WitnessQuorum, "how many witnesses must cosign each checkpoint; /healthz says how many are missing (0: all)")
	fs.Float64Var(&c.SnapshotCheckShare, "snapshot-check-share", c.SnapshotCheckShare, "share of one core the background check of the snapshot the start loaded may take (0: not checked)")
	return fs
}

// Run opens the data dir, replays the log into the projections and starts
// the listeners.
func (m *Main) Run(ctx context.Context) (err error) {
	if m.Logger == nil {
		stderr := m.stderr
		if stderr == nil {
			stderr = os.Stderr
		}
		if m.Logger, err = newLogger(m.Config.LogLevel, m.Config.LogFormat, stderr); err != nil {
			return err
		}
	}
	if m.lock, err = lockDataDir(m.Config.Data); err != nil {
		return err
	}
	if err := m.openModels(ctx); err != nil {
		return err
	}
	rm := m.models
	ledger, orderList, passwords, tokens, configView, filesView := rm.ledger, rm.orderList, rm.passwords, rm.tokens, rm.config, rm.files

	start := time.Now()
	// The store's integrity check reads the whole file on a connection of
	// its own while the snapshot loads and the log replays (writes wait
	// for it, reads do not): on two cores the start overlaps it instead
	// of /readyz waiting for it after them.
	m.checkStoreIntegrity()
	m.loadSnapshot(ctx) // snapshot.go: the newest valid read-model snapshot, if any
	if err := m.Runner.Start(ctx); err != nil {
		return err
	}
	m.logReady(time.Since(start))
	if err := m.Connectors.Check(configView.Current()); err != nil {
		return err // a connector this binary lacks: the message says how to build one that has it
	}
	m.startWebhooks(configView)

	s := tlhttp.NewServer()
	s.Logger, s.Clock, s.Store, s.Runner = m.Logger, m.Clock, m.DataDir.Store, m.Runner
	s.TLSCertFile, s.TLSKeyFile = m.Config.TLSCert, m.Config.TLSKey
	s.TrustedProxies, _ = tlhttp.ParseTrustedProxies(m.Config.TrustedProxies) // checked by ParseFlags
	s.MaxConns = m.Config.MaxConns
	s.Auth = &tlhttp.Authenticator{Secret: m.DataDir.JWTSecret, TokenTTL: m.Config.TokenTTL, Clock: m.Clock}
	// Resource dependencies are wired here.
	s.Ledger, s.OrderList = ledger, orderList
	states := projections.NewStates(m.DataDir.Store) // asOf= and method= reads, rebuilt from the log
	states.Snapshots = m.Snapshots                   // from the newest read-model snapshot within the cut
	s.States = states
	s.Auth.Generation = passwords.Generation
	s.Auth.Grants = tokens.Active
	s.Auth.CatchUp = catchUpWith(m.DataDir.Store, m.Runner)
	s.Passwords, s.Wallet = passwords, configView.Wallet
	if err := m.openClickHouse(s); err != nil {
		return err
	}
	m.Engine.Scheduler.ABP = ledger.ABP // average unit cost of held lots (--pnl-method)
	m.wireSimulator(configView)
	s.Core = m.Engine.Scheduler
	s.Trader = m.Engine.Trader // trade, balances and pairs routes
	if !m.ManualCycles {
		m.Engine.Scheduler.Start()
	}
	s.Audit = tlhttp.NewAudit()
	s.Verifier = m.Tlog // audit/verify: the chains, the tree and the kept checkpoint
	if s.Secrets, err = secrets.NewSecretBox(m.DataDir.MasterKey); err != nil {
		return fmt.Errorf("master key: %w", err)
	}
	s.Config, s.Files = configView, filesView
	s.Tlog, s.PublicTlog = m.Tlog, m.Config.PublicTlog
	s.Connectors, s.VerifyKeys = m.connectorStatuses, m.verifyKeys
	s.Attention = m.Engine.Attention.Summary
	m.snapCheck = &snapshotCheck{}
	s.SnapshotCheck = m.snapCheck.status
	s.RealConnector = m.Connectors.HasReal
	s.Reconciler = reconciliation{store: m.DataDir.Store, sync: m.Engine.Accounts, accounts: rm.accounts}
	s.Paper = paperActivity{m: m}

	m.wireMetrics(s)
	m.Metrics.WatchSnapshotCheck(m.snapCheck.metric)
	m.wireWebhooks(s)
	m.wireWitnesses(s)
	if s.CORSOrigins, err = tlhttp.ParseCORSOrigins(m.Config.CORSOrigins); err != nil {
		return fmt.Errorf("--cors-origins: %w", err)
	}

	m.Server = s
	if err := s.Open(m.Config.Listen, m.Config.FilesListen); err != nil {
		return err
	}
	if err := m.openMetricsListener(); err != nil {
		return err
	}
	m.startTlog()      // builds the tree of a log written before it, then issues checkpoints
	m.startWitnesses() // sends each checkpoint to the witnesses (--witness)
	m.startSnapshots() // read-model snapshots in the background
	// The start snapshot checked against the log, then the writer started (snapcheck.go).
	m.startSnapshotCheck()
	m.Logger.Info("serving", zap.String("dashboard", dashboardURL(s.URL())), zap.String("api", s.URL()), zap.String("files", s.FilesURL()))
	m.logConnectors()
	m.logStartWarnings(passwords)
	return nil
}

// openModels opens the data dir and makes every read model, the engine and
// the components that are projections, and registers them with a new
// runner: everything a replay needs, nothing that serves (serve, and the
// snapshot command, which replays without serving).
func (m *Main) openModels(ctx context.Context) (err error) {
	if m.DataDir == nil { // else opened by the caller (newModelSet)
		if m.DataDir, err = m.openDataDir(ctx); err != nil {
			return err
		}
	}
	m.Runner = projections.NewRunner(m.DataDir.Store)
	// None of serve's read models reads an event's hashes (verify does,
	// from the log itself): the replay leaves them in the file.
	m.Runner.ReplayNoHashes = true
	m.Runner.OnError = func(p projections.Projection, e *domain.Event, err error) {
		m.Logger.Error("projection failed to apply event", zap.String("projection", p.Name()),
			zap.String("stream", e.Stream), zap.Int64("version", e.Version), zap.Uint64("position", e.Position), zap.Error(err))
	}
	// The read models are made here and registered in one place before
	// the replay (registerProjections, projections.go).
	m.newMetrics()
	method, err := domain.ParsePnlMethod(m.Config.PnlMethod)
	if err != nil {
		return fmt.Errorf("--pnl-method: %w", err)
	}
	ledger := projections.NewLedger(method)
	orderList := projections.NewOrderList()
	passwords := projections.NewPassword()
	tokens := projections.NewTokens()
	m.Simulator = paper.NewSimulator(m.Clock)
	configView := projections.NewConfig()
	if m.Connectors, err = m.newConnectors(configView); err != nil {
		return err
	}
	// The engine follows the system stream (SystemStarted/SystemStopped)
	// and recovers every unfinished order from the log. Orders are
	// accepted only while a pair of the exchange cycles.
	m.Engine = engine.New(m.DataDir.Store, m.Connectors.Exchange, configView, projections.NewBalances(), m.Clock)
	m.Engine.Desk.Wait = m.Runner.WaitFor
	m.Engine.Scheduler.OnError = func(exchange, pair string, err error) {
		m.Logger.Warn("core cycle", zap.String("exchange", exchange), zap.String("pair", pair), zap.Error(err))
	}
	// Rates for the PNL's currency conversion come from the log
	// (projections/pnlconv.go): the scheduler records each pair's price,
	// a command by the core like the engine's other writes.
	m.Engine.Scheduler.Rates = m.Engine.Reconciler.ObserveRate
	// and the rates of the assets fees are charged in (BNB …): those the
	// configuration names, and those fills paid fees in so far.
	m.Engine.Scheduler.FeeAssets = func(exchange string) []string {
		return feeAssets(configView.Current(), exchange, ledger.FeeAssets(exchange))
	}
	m.newTlog()      // tlog.go
	m.newWitnesses() // witnesses.go
	filesView := projections.NewFiles(ledger)
	if err := m.newWebhooks(ctx, configView); err != nil { // webhooks.go
		return err
	}
	// Logs what happens from now on (orders, start/stop, passwords).
	head, err := m.DataDir.Store.Head(ctx)
	if err != nil {
		return fmt.Errorf("read head: %w", err)
	}
	// The accounts' reconciliation (DESIGN §18): the engine's sync
	// decides against it, finding the orders of finished trades in the
	// order index.
	accounts := projections.NewAccounts()
	m.Engine.Accounts.Book = accounts
	m.Engine.Accounts.Interval = m.Config.SyncInterval
	m.Engine.Accounts.FindOrder = orderFinder(orderList, m.DataDir.Store)
	m.models = serveModels{ledger: ledger, orderList: orderList, passwords: passwords, tokens: tokens,
		config: configView, files: filesView, accounts: accounts, activity: &activityLog{Logger: m.Logger, After: head}}
	m.registerProjections(m.models)
	// A read-model snapshot freezes the engine's projections at the
	// runner's position: the engine's own appends, which it applies to
	// them at once, wait meanwhile (snapshot.go).
	m.Runner.Ahead = m.Engine.Desk.HoldApplies
	m.newSnapshots()
	return nil
}

// Close stops the listeners, the core, the projections and the store, in
// that order.
func (m *Main) Close() error {
	if m.Server != nil {
		m.Server.Close()
	}
	m.closeMetrics()
	if m.snapCheck != nil {
		m.snapCheck.work.stop()
	}
	if m.SnapshotWriter != nil {
		m.SnapshotWriter.Close()
	}
	m.tlogWork.stop()
	if m.Webhooks != nil {
		m.Webhooks.Close()
	}
	m.closeClickHouse()
	if m.Engine != nil {
		m.Engine.Close()
	}
	m.signFinalCheckpoint() // logcut.go
	if m.Runner != nil {
		m.Runner.Close()
	}
	if m.DataDir != nil {
		m.DataDir.Close()
	}
	if m.lock != nil {
		m.lock.Close() // releases the flock
		m.lock = nil
	}
	if m.Logger != nil {
		_ = m.Logger.Sync()
	}
	return nil
}

func runServe(ctx context.Context, args []string, env *Env) error {
	m := NewMain()
	if err := m.ParseFlags(args, env); err != nil {
		return err
	}
	if err := m.Run(ctx); err != nil {
		m.Close()
		return err
	}
	<-ctx.Done()
	m.Logger.Info("shutting down")
	return m.Close()
}

// wireSimulator gives the simulator its exchanges' settings from the
// configuration (serve, and the commands that trade or sync through it).
func (m *Main) wireSimulator(configView *projections.Config) {
	m.Simulator.Settings = func(name string) (paper.ExchangeSettings, bool) {
		entry, ok := configView.Current().Exchange(name)
		if !ok {
			return paper.ExchangeSettings{}, false
		}
		return simulatorSettings(name, entry, m.Logger), true
	}
	m.Simulator.SettingsVersion = configView.Version // a changed simulator fee applies at once
}

// simulatorSettings reads config.exchanges.<name>.simulator: fee (rate,
// e.g. "0.001") and balances (asset → starting amount). A value that is
// not a number is logged and left to the simulator's default.
func simulatorSettings(name string, entry map[string]any, logger *zap.Logger) paper.ExchangeSettings {
	var set paper.ExchangeSettings
	sim, _ := entry["simulator"].(map[string]any)
	if sim == nil {
		return set
	}
	params := domain.StrategyParams{Settings: sim}
	if _, ok := sim["fee"]; ok {
		if fee, err := params.Decimal("fee", decimal.Zero); err == nil && fee.Sign() >= 0 {
			set.Fee = &fee
		} else {
			logger.Warn("config.exchanges.<name>.simulator.fee is not a rate; using the default", zap.String("exchange", name))
		}
	}
	if asset, ok := sim["feeAsset"].(string); ok {
		set.FeeAsset = asset
	}
	if _, ok := sim["feeAssetPrice"]; ok {
		if p, err := params.Decimal("feeAssetPrice", decimal.Zero); err == nil && p.IsPos() {
			set.FeeAssetPrice = &p
		} else {
			logger.Warn("config.exchanges.<name>.simulator.feeAssetPrice is not a price; using the default", zap.String("exchange", name))
		}
	}
	if balances, ok := sim["balances"].(map[string]any); ok {
		set.Balances = map[string]decimal.Decimal{}
		for asset := range balances {
			v, err := domain.StrategyParams{Settings: balances}.Decimal(asset, decimal.Zero)
			if err != nil || v.Sign() < 0 {
				logger.Warn("config.exchanges.<name>.simulator.balances: not an amount; left out", zap.String("exchange", name), zap.String("asset", asset))
				continue
			}
			set.Balances[asset] = v
		}
	}
	return set
}

// feeAssets returns seen with the fee assets exchange's configuration names
// added: config.exchanges.<name>.feeAsset (a real exchange's, e.g. BNB on
// Binance) and .simulator.feeAsset (the paper exchange's, unless it is
// "received").
func feeAssets(c domain.Config, exchange string, seen []string) []string {
	entry, _ := c.Exchange(exchange)
	sim, _ := entry["simulator"].(map[string]any)
	out := seen
	for _, v := range []any{entry["feeAsset"], sim["feeAsset"]} {
		x, _ := v.(string)
		if x == "" || x == paper.FeeInReceived || slices.Contains(out, x) {
			continue
		}
		out = append(out, x)
	}
	return out
}

// checkStoreIntegrity runs the store's full integrity check, if it has one,
// in the background; the store holds writes back until it is done (so
// /readyz waits for it) and refuses them if it fails.
func (m *Main) checkStoreIntegrity() {
	c, ok := m.DataDir.Store.(interface{ CheckIntegrity() error })
	if !ok {
		return
	}
	m.storeChecked = make(chan struct{})
	go func() {
		defer close(m.storeChecked)
		switch err := c.CheckIntegrity(); {
		case domain.ErrorCode(err) == domain.EUNAVAILABLE: // closed first, or could not run: the next write retries
			m.Logger.Info("event store integrity check not done", zap.String("reason", domain.ErrorMessage(err)))
		case err != nil:
			m.Logger.Error("event store failed its integrity check: writes are refused", zap.Error(err))
		default:
			m.Logger.Info("event store integrity check passed")
		}
	}()
}
