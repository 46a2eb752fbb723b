// Package snaptest checks read-model snapshots (DESIGN §16): RandomLog
// writes random logs with every kind of event, and Check proves over them
// that a projection loaded from a snapshot taken at any position of a log
// and then fed the rest of it is the projection fed the whole log.
package snaptest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// LogOptions shape a RandomLog.
type LogOptions struct {
	// Events is about how many events to write.
	Events int
	// Start is the time of the first event (zero: 2025-03-29 22:00 UTC,
	// the night before Europe's clocks change).
	Start time.Time
	// Extra, when set, is asked now and then for events of its own (say,
	// signed checkpoints), given the log so far; each is appended to its
	// stream as the others.
	Extra func(rng *rand.Rand, log []domain.Event) []domain.Event
	// Keys is how many different Idempotency-Keys the keyed orders (one
	// in four) draw theirs from (0: 50, so that keys are often reused; a
	// large number: nearly every keyed order's is new).
	Keys int
}

// RandomLog returns a log of random events as the service would record
// them: orders of every kind (limit, market, stop-limit, trailing stop,
// OCOs) through every state (accepted, partly and fully filled, cancel
// asked, cancelled, rejected, expired, stops moved and triggered, outcomes
// unknown and re-sent, needing attention and cleared), fills with fees in
// the quote, the base and a third asset (BNB), late fills of finished
// orders; configuration (documents, pairs, strategies, exchange keys),
// files written and deleted, tokens created and revoked, passwords,
// logins, balances and rates observed, the system started and stopped,
// imported history (actor import, exchange times in the past, ids far
// from the live ones), checkpoints (unsigned: their notes are not
// signatures) and accepted log cuts; and clock steps (a day forward, an hour back
// across streams, a change of summer time). Positions are dense from 1;
// versions and times follow each stream's rules (a stream's time never
// goes back). The same rng gives the same log.
func RandomLog(rng *rand.Rand, opt LogOptions) []domain.Event {
	g := &gen{rng: rng, t: opt.Start.UnixMilli(), streams: map[string]*streamState{}, nextID: 1, importID: 9_000_000_000, keys: opt.Keys}
	if g.keys == 0 {
		g.keys = 50
	}
	if opt.Start.IsZero() {
		g.t = time.Date(2025, 3, 29, 22, 0, 0, 0, time.UTC).UnixMilli()
	}
	g.config()
	for len(g.log) < opt.Events {
		g.step()
		if opt.Extra != nil && rng.IntN(50) == 0 {
			for _, e := range opt.Extra(rng, g.log) {
				g.emit(e.Stream, e.Type, json.RawMessage(e.Data), e.Actor)
			}
		}
	}
	return g.log
}

type gen struct {
	rng      *rand.Rand
	t        int64
	log      []domain.Event
	streams  map[string]*streamState
	open     []*genOrder
	done     []*genOrder // finished orders (a late fill may come)
	nextID   int64
	importID int64
	fills    int
	files    []string // kind/name written
	tokens   []string
	pwGen    int64
	attn     []*genOrder
	seq      uint64
	keys     int // Idempotency-Keys drawn from
	signed   int // checkpoints recorded
}

type streamState struct {
	version int64
	time    int64
}

type genOrder struct {
	id                 int64
	exchange, pair     string
	side               domain.Side
	kind               domain.OrderKind
	amount, filled     decimal.Decimal
	price              decimal.Decimal
	accepted, trigger  bool
	ocoID              int64
	actor              string
	exchangeTimeOffset int64 // imported fills: how far in the past
}

var (
	exchanges = []string{"binance", "kraken"}
	pairs     = []string{"USDT-BTC", "USDT-ETH", "BTC-ETH", "USDC-SOL"}
	prices    = map[string]float64{"USDT-BTC": 60000, "USDT-ETH": 3000, "BTC-ETH": 0.05, "USDC-SOL": 150}
)

// emit appends an event to stream at the clock's time (never before the
// stream's last event).
func (g *gen) emit(stream, typ string, data any, actor string) domain.Event {
	b, ok := data.(json.RawMessage)
	if !ok {
		var err error
		if b, err = json.Marshal(data); err != nil {
			panic(err)
		}
	}
	st := g.streams[stream]
	if st == nil {
		st = &streamState{version: -1}
		g.streams[stream] = st
	}
	g.t += int64(g.rng.IntN(3000))
	t := max(g.t, st.time)
	st.version++
	st.time = t
	pos := uint64(len(g.log) + 1)
	e := domain.Event{ID: fmt.Sprintf("%016x-%d", pos, g.rng.Uint32()), Stream: stream, Version: st.version, Position: pos,
		Type: typ, Schema: 1, Time: t, Actor: actor, Data: b}
	g.log = append(g.log, e)
	return e
}

// amount returns a random positive amount with up to 12 decimals.
func (g *gen) amount() decimal.Decimal {
	switch g.rng.IntN(6) {
	case 0:
		return decimal.MustDecimal("0.000000012345") // below a Compact's reach at large counts
	case 1:
		return decimal.DecimalFromInt(int64(1 + g.rng.IntN(5_000_000))) // wide records (beyond a Compact)
	}
	return decimal.MustDecimal(strconv.FormatFloat(0.001+g.rng.Float64()*3, 'f', 1+g.rng.IntN(8), 64))
}

func (g *gen) price(pair string) decimal.Decimal {
	p := prices[pair] * (0.8 + 0.4*g.rng.Float64())
	return decimal.MustDecimal(strconv.FormatFloat(p, 'f', 2+g.rng.IntN(6), 64))
}

func (g *gen) pick(s []string) string { return s[g.rng.IntN(len(s))] }

func (g *gen) actor() string {
	return []string{domain.ActorCore, "admin", "dashboard", domain.ActorCLI}[g.rng.IntN(4)]
}

func (g *gen) step() {
	switch r := g.rng.IntN(100); {
	case r < 30:
		g.newOrder(false)
	case r < 70:
		g.progress()
	case r < 72:
		g.oco()
	case r < 74:
		g.lateFill()
	case r < 76:
		g.imported()
	case r < 79:
		g.configChange()
	case r < 81:
		g.file()
	case r < 83:
		g.token()
	case r < 85:
		g.auth()
	case r < 89:
		g.rate()
	case r < 92:
		g.balances()
	case r < 94:
		g.system()
	case r < 95:
		g.clearAttention()
	case r < 96:
		g.checkpoint()
	default:
		g.clockStep()
	}
}

// clockStep moves the clock: a day forward, a DST change's hour, or an
// hour back (another writer's clock; each stream's own time still never
// goes back).
func (g *gen) clockStep() {
	switch g.rng.IntN(3) {
	case 0:
		g.t += 24 * 3600 * 1000
	case 1:
		g.t += 3600 * 1000
	default:
		g.t -= 3600 * 1000
	}
}

func (g *gen) newOrder(import_ bool) *genOrder {
	pair := g.pick(pairs)
	o := &genOrder{exchange: g.pick(exchanges), pair: pair, side: domain.Buy, amount: g.amount(), price: g.price(pair), actor: g.actor()}
	if g.rng.IntN(2) == 0 {
		o.side = domain.Sell
	}
	kinds := []domain.OrderKind{domain.KindLimit, domain.KindLimit, domain.KindMarket, domain.KindStopLimit, domain.KindTrailingStop}
	o.kind = kinds[g.rng.IntN(len(kinds))]
	if import_ {
		o.kind, o.actor = domain.KindLimit, domain.ActorImport
		o.id = g.importID
		g.importID += int64(1 + g.rng.IntN(1000))
		o.exchangeTimeOffset = int64(1+g.rng.IntN(400)) * 24 * 3600 * 1000
	} else {
		o.id = g.nextID
		g.nextID++
	}
	req := domain.OrderRequested{OrderID: o.id, Exchange: o.exchange, Pair: o.pair, Side: o.side, Kind: o.kind,
		Amount: o.amount, Price: o.price, ClientOrderID: fmt.Sprintf("tl-%d-%d", o.id, g.rng.IntN(1000))}
	if o.kind == domain.KindStopLimit || o.kind == domain.KindTrailingStop {
		req.StopPrice = g.price(pair)
		req.LimitPrice = g.price(pair)
	}
	if g.rng.IntN(4) == 0 {
		req.IdempotencyKey = fmt.Sprintf("key-%d", g.rng.IntN(g.keys))
		req.IdempotencyFingerprint = fmt.Sprintf("fp%d", g.rng.IntN(3))
	}
	g.emit(domain.OrderStream(o.id), domain.TypeOrderRequested, req, o.actor)
	g.open = append(g.open, o)
	return o
}

// oco places an OCO: its two legs, then OcoPlaced.
func (g *gen) oco() {
	a, b := g.newOrder(false), g.newOrder(false)
	b.exchange, b.pair, b.side = a.exchange, a.pair, a.side
	id := g.nextID
	g.nextID++
	a.ocoID, b.ocoID = id, id
	g.emit(domain.OcoStream(id), domain.TypeOcoPlaced, domain.OcoPlaced{OcoID: id, Exchange: a.exchange, Pair: a.pair, Side: a.side,
		LimitOrderID: a.id, StopOrderID: b.id}, domain.ActorCore)
}

// progress moves a random open order on.
func (g *gen) progress() {
	if len(g.open) == 0 {
		g.newOrder(false)
		return
	}
	i := g.rng.IntN(len(g.open))
	o := g.open[i]
	stream := domain.OrderStream(o.id)
	finish := func() {
		g.open = append(g.open[:i], g.open[i+1:]...)
		g.done = append(g.done, o)
		if len(g.done) > 200 {
			g.done = g.done[1:]
		}
	}
	if !o.accepted {
		switch r := g.rng.IntN(10); {
		case r < 7:
			o.accepted = true
			g.emit(stream, domain.TypeOrderAccepted, domain.OrderAccepted{ExchangeOrderID: strconv.Itoa(g.rng.IntN(1_000_000))}, domain.ActorCore)
		case r < 8:
			g.emit(stream, domain.TypeOrderRejected, domain.OrderRejected{Reason: "insufficient funds"}, domain.ActorCore)
			finish()
		case r < 9:
			g.emit(stream, domain.TypeOrderOutcomeUnknown, domain.OrderOutcomeUnknown{Reason: "timeout"}, domain.ActorCore)
		default:
			g.emit(stream, domain.TypeOrderResent, domain.OrderResent{Reason: "not found", NotFound: 2}, domain.ActorCore)
		}
		return
	}
	emulated := o.kind == domain.KindStopLimit || o.kind == domain.KindTrailingStop
	if emulated && !o.trigger {
		if o.kind == domain.KindTrailingStop && g.rng.IntN(2) == 0 {
			g.emit(stream, domain.TypeTrailingStopMoved, domain.TrailingStopMoved{StopPrice: g.price(o.pair), Extreme: g.price(o.pair)}, domain.ActorCore)
			return
		}
		o.trigger = true
		g.emit(stream, domain.TypeStopTriggered, domain.StopTriggered{MarketPrice: g.price(o.pair), LimitPrice: o.price}, domain.ActorCore)
		return
	}
	switch r := g.rng.IntN(20); {
	case r < 10:
		if g.fill(o, stream) {
			finish()
		}
	case r < 12:
		g.emit(stream, domain.TypeOrderCancelRequested, domain.OrderCancelRequested{Reason: "asked"}, g.actor())
	case r < 15:
		g.emit(stream, domain.TypeOrderCancelled, domain.OrderCancelled{Remaining: o.amount.Sub(o.filled), Reason: "cancelled"}, domain.ActorCore)
		finish()
		if o.ocoID != 0 && g.rng.IntN(2) == 0 {
			g.emit(domain.OcoStream(o.ocoID), domain.TypeOcoLegCancelled, domain.OcoLegCancelled{OrderID: o.id, FilledLegID: o.id + 1}, domain.ActorCore)
		}
	case r < 16:
		g.emit(stream, domain.TypeOrderExpired, domain.OrderExpired{Reason: "expired"}, domain.ActorCore)
		finish()
	case r < 17:
		g.seq++
		g.emit(stream, domain.TypeOrderNeedsAttention, domain.OrderNeedsAttention{Exchange: o.exchange, Pair: o.pair,
			FillID: fmt.Sprintf("%s-%d", o.exchange, g.seq), Seq: g.seq, Field: "price", Raw: "1e-30", Reason: "more than 12 decimals"}, domain.ActorCore)
		g.attn = append(g.attn, o)
	default:
		if g.fill(o, stream) {
			finish()
		}
	}
}

// fill writes a partial or full fill of o, and reports whether it filled
// the order.
func (g *gen) fill(o *genOrder, stream string) bool {
	left := o.amount.Sub(o.filled)
	q := left
	if g.rng.IntN(3) == 0 && left.Cmp(decimal.MustDecimal("0.000001")) > 0 {
		q = left.Div(decimal.DecimalFromInt(int64(2 + g.rng.IntN(3))))
	}
	o.filled = o.filled.Add(q)
	g.writeFill(o, stream, q)
	return o.filled.Cmp(o.amount) >= 0
}

func (g *gen) writeFill(o *genOrder, stream string, q decimal.Decimal) {
	quote, base, _ := domain.SplitPair(o.pair)
	price := g.price(o.pair)
	f := domain.OrderFilled{Price: price, Quantity: q}
	switch g.rng.IntN(3) {
	case 0:
		f.FeeAsset, f.Fee = quote, price.Mul(q).Mul(decimal.MustDecimal("0.001"))
	case 1:
		f.FeeAsset, f.Fee = base, q.Mul(decimal.MustDecimal("0.001"))
	default:
		f.FeeAsset, f.Fee = "BNB", decimal.MustDecimal("0.0001234")
	}
	g.fills++
	g.seq++
	f.FillID, f.Seq = fmt.Sprintf("%s-%d", o.exchange, g.seq), g.seq
	if o.actor == domain.ActorImport {
		f.FillID, f.Seq = fmt.Sprintf("import-%d", g.fills), 0
		f.ExchangeTime = g.t - o.exchangeTimeOffset
	} else if g.rng.IntN(3) == 0 {
		f.ExchangeTime = g.t - int64(g.rng.IntN(120_000))
	}
	g.emit(stream, domain.TypeOrderFilled, f, o.actor)
}

// lateFill fills a finished order again (a fill that arrives after the
// order was cancelled).
func (g *gen) lateFill() {
	if len(g.done) == 0 {
		return
	}
	o := g.done[g.rng.IntN(len(g.done))]
	g.writeFill(o, domain.OrderStream(o.id), o.amount.Div(decimal.DecimalFromInt(7)))
}

// imported writes a few orders of imported history: filled at once, at
// exchange times in the past.
func (g *gen) imported() {
	for range 1 + g.rng.IntN(4) {
		o := g.newOrder(true)
		stream := domain.OrderStream(o.id)
		g.emit(stream, domain.TypeOrderAccepted, domain.OrderAccepted{}, domain.ActorImport)
		o.accepted = true
		o.filled = o.amount
		g.writeFill(o, stream, o.amount)
		g.open = g.open[:len(g.open)-1]
	}
}

func (g *gen) config() {
	doc := map[string]any{
		"bot": map[string]any{"service_wallet": "wallet-" + strconv.Itoa(g.rng.IntN(1000)), "SIMULATOR": true, "TIMEZONE": "UTC"},
		"exchanges": map[string]any{
			"binance": map[string]any{"key": "", "secret": "", "delay": 10, "simulator": map[string]any{"fee": "0.001", "feeAsset": "BNB"}},
			"kraken":  map[string]any{"key": "", "secret": "", "delay": 5},
		},
		"pairs":      map[string]any{},
		"strategies": map[string]any{"gain": map[string]any{"STRATEGY": "gain", "GAIN": 1.5, "TRADING_LIMIT": 100}},
		"GUI":        map[string]any{"theme": "dark"},
	}
	b, _ := json.Marshal(doc)
	g.emit(domain.StreamConfig, domain.TypeConfigReplaced, domain.ConfigReplaced{Config: b}, domain.ActorCLI)
}

func (g *gen) configChange() {
	switch g.rng.IntN(7) {
	case 0:
		g.config()
	case 5:
		g.emit(domain.StreamConfig, domain.TypeStrategyRemoved, domain.StrategyRemoved{Name: "grid" + strconv.Itoa(g.rng.IntN(3))}, "admin")
	case 1, 2:
		g.emit(domain.StreamConfig, domain.TypePairAdded, domain.PairAdded{Exchange: g.pick(exchanges), Pair: g.pick(pairs), Strategy: "gain",
			Enabled: g.rng.IntN(2) == 0, Override: json.RawMessage(`{"GAIN":` + strconv.Itoa(1+g.rng.IntN(5)) + `}`)}, "admin")
	case 3:
		g.emit(domain.StreamConfig, domain.TypePairRemoved, domain.PairRemoved{Exchange: g.pick(exchanges), Pair: g.pick(pairs)}, "admin")
	case 4:
		g.emit(domain.StreamConfig, domain.TypeStrategyAdded, domain.StrategyAdded{Name: "grid" + strconv.Itoa(g.rng.IntN(3)),
			Settings: json.RawMessage(`{"STRATEGY":"stepgrid","STEP":2}`)}, "admin")
	default:
		stream := domain.StreamConfig
		if g.rng.IntN(2) == 0 {
			stream = domain.StreamCredentials
		}
		g.emit(stream, domain.TypeExchangeKeysSet, domain.ExchangeKeysSet{Exchange: g.pick(exchanges),
			Fields: map[string]string{"key": "ct-" + strconv.Itoa(g.rng.IntN(100)), "secret": "ct-s"}}, "admin")
	}
}

func (g *gen) file() {
	kind := []string{domain.FileStrategy, domain.FileACVar, domain.FileBackup, domain.FileCustomEditor}[g.rng.IntN(4)]
	name := "f" + strconv.Itoa(g.rng.IntN(5))
	if kind == domain.FileStrategy {
		name += ".js"
	} else {
		name += ".json"
	}
	if g.rng.IntN(4) == 0 && len(g.files) > 0 {
		k := g.files[g.rng.IntN(len(g.files))]
		var kd, nm string
		fmt.Sscanf(k, "%s %s", &kd, &nm)
		g.emit(domain.FileStream(kd, nm), domain.TypeFileDeleted, domain.FileDeleted{Kind: kd, Name: nm}, "admin")
		return
	}
	content := json.RawMessage(`{"n":` + strconv.Itoa(g.rng.IntN(1000)) + `}`)
	if kind == domain.FileStrategy {
		content = json.RawMessage(`"// strategy ` + strconv.Itoa(g.rng.IntN(1000)) + `"`)
	}
	g.emit(domain.FileStream(kind, name), domain.TypeFileWritten, domain.FileWritten{Kind: kind, Name: name, Content: content, SHA256: "00"}, "admin")
	g.files = append(g.files, kind+" "+name)
}

func (g *gen) token() {
	if g.rng.IntN(3) == 0 && len(g.tokens) > 0 {
		id := g.tokens[g.rng.IntN(len(g.tokens))]
		g.emit(domain.StreamTokens, domain.TypeTokenRevoked, domain.TokenRevoked{Name: "t" + id, ID: id}, domain.ActorCLI)
		return
	}
	id := strconv.Itoa(len(g.tokens) + 1)
	scopes := []domain.Scope{domain.ScopeRead, domain.ScopeTrade, domain.ScopeAdmin}
	g.emit(domain.StreamTokens, domain.TypeTokenCreated, domain.TokenCreated{Name: "t" + strconv.Itoa(g.rng.IntN(3)),
		Scope: scopes[g.rng.IntN(3)], ID: id, Expires: g.t + int64(g.rng.IntN(10))*24*3600*1000}, domain.ActorCLI)
	g.tokens = append(g.tokens, id)
}

func (g *gen) auth() {
	switch g.rng.IntN(3) {
	case 0:
		g.pwGen++
		g.emit(domain.StreamCredentials, domain.TypePasswordSet, domain.PasswordSet{Hash: "$argon2id$v=19$" + strconv.Itoa(g.rng.IntN(1000)), Generation: g.pwGen}, domain.ActorCLI)
	case 1:
		g.emit(domain.StreamAuth, domain.TypeLoginSucceeded, domain.LoginSucceeded{Subject: "admin", RemoteAddr: "127.0.0.1"}, "admin")
	default:
		g.emit(domain.StreamAuth, domain.TypeLoginFailed, domain.LoginFailed{RemoteAddr: "10.0.0." + strconv.Itoa(g.rng.IntN(9)), Reason: "bad password"}, "anonymous")
	}
}

func (g *gen) rate() {
	x := g.pick(exchanges)
	switch g.rng.IntN(3) {
	case 0:
		g.emit(domain.RateStream(x), domain.TypeRateObserved, domain.RateObserved{Exchange: x, Base: "BNB", Quote: "USDT",
			Rate: decimal.MustDecimal(strconv.Itoa(500 + g.rng.IntN(200)))}, domain.ActorCore)
	case 1:
		g.emit(domain.RateStream(x), domain.TypeRateObserved, domain.RateObserved{Exchange: x, Base: "USDC", Quote: "USDT", Rate: decimal.MustDecimal("0.9998")}, domain.ActorCore)
	default:
		pair := g.pick(pairs)
		quote, base, _ := domain.SplitPair(pair)
		g.emit(domain.RateStream(x), domain.TypeRateObserved, domain.RateObserved{Exchange: x, Base: base, Quote: quote, Rate: g.price(pair)}, domain.ActorCore)
	}
}

func (g *gen) balances() {
	x := g.pick(exchanges)
	var bs []domain.AssetBalance
	for _, a := range []string{"USDT", "BTC", "ETH", "BNB"}[:1+g.rng.IntN(4)] {
		bs = append(bs, domain.AssetBalance{Asset: a, Available: g.amount(), OnOrder: decimal.DecimalFromInt(int64(g.rng.IntN(3)))})
	}
	g.emit(domain.BalanceStream(x), domain.TypeBalancesObserved, domain.BalancesObserved{Exchange: x, Balances: bs}, domain.ActorCore)
}

func (g *gen) system() {
	if g.rng.IntN(2) == 0 {
		g.emit(domain.StreamSystem, domain.TypeSystemStarted, domain.SystemStarted{}, "admin")
	} else {
		g.emit(domain.StreamSystem, domain.TypeSystemStopped, domain.SystemStopped{}, "admin")
	}
}

// checkpoint records a checkpoint of the log so far (its note is not a
// signature: no read model checks one; verify would); one in four is
// preceded by an accepted log cut (no read model reads one either),
// drawn without the random source, which the other events' draws keep;
// now and then it is instead that a read-model snapshot was discarded.
func (g *gen) checkpoint() {
	if g.signed++; g.signed%4 == 0 {
		g.emit(domain.StreamLogCuts, domain.TypeLogCutAccepted, domain.LogCutAccepted{Kept: int64(len(g.log)), TreeRecords: int64(len(g.log)) + 2,
			LostFrom: uint64(len(g.log)) + 1, LostTo: uint64(len(g.log)) + 2, Problem: "the event log was cut at its end"}, domain.ActorCLI)
	}
	if g.rng.IntN(4) == 0 {
		g.emit(domain.StreamSnapshots, domain.TypeSnapshotDiscarded, domain.SnapshotDiscarded{File: fmt.Sprintf("%d.snap", len(g.log)),
			Position: uint64(len(g.log)), Projections: []string{"ledger"}, Value: ".x", Snapshot: "1", Log: "2", Signed: true, Replaced: true}, domain.ActorCore)
		return
	}
	size := int64(len(g.log))
	g.emit(domain.StreamCheckpoints, domain.TypeCheckpointSigned, domain.CheckpointSigned{Origin: "tradeledger.test/log",
		Size: size, Root: "cm9vdA==", Note: fmt.Sprintf("tradeledger.test/log\n%d\ncm9vdA==\n\n— sig\n", size)}, domain.ActorCore)
	// A witness's answer to it: a cosignature, or now and then a refusal
	// as inconsistent (its signatures are not real: no read model checks
	// one).
	if size%2 == 0 {
		g.emit(domain.StreamCheckpoints, domain.TypeWitnessRefused, domain.WitnessRefused{Origin: "tradeledger.test/log", Size: size,
			Root: "cm9vdA==", Witness: "witness.test/w", Key: "witness.test/w+01020304+key", URL: "http://witness.test",
			WitnessSize: size - 1, Status: 422, Reason: "inconsistent"}, domain.ActorCore)
		return
	}
	g.emit(domain.StreamCheckpoints, domain.TypeCheckpointCosigned, domain.CheckpointCosigned{Origin: "tradeledger.test/log", Size: size,
		Root: "cm9vdA==", Witness: "witness.test/w", Key: "witness.test/w+01020304+key", URL: "http://witness.test",
		Time: g.t / 1000, Signature: fmt.Sprintf("— witness.test/w cosig%d\n", size)}, domain.ActorCore)
}

func (g *gen) clearAttention() {
	if len(g.attn) == 0 {
		return
	}
	o := g.attn[0]
	g.attn = g.attn[1:]
	g.emit(domain.OrderStream(o.id), domain.TypeOrderAttentionCleared, domain.OrderAttentionCleared{Exchange: o.exchange, Pair: o.pair, Note: "checked"}, "admin")
}
