package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/domain/snap"
	"github.com/tradeledger/tradeledger/projections"
)

// The forged-snapshot scenario (issue 36): someone with write access to the
// data dir but not the log's key changes the PNL in the Ledger's section
// of a snapshot and a balance in the balances' section, and recomputes the
// frames' CRC-32C. No part of the service may believe it.

const (
	forgeWallet   = "0x7f3a9c2b4e5d6f708192a3b4c5d6e7f8"
	forgePassword = "forge password"
)

// forgeDataDir is a data dir whose log holds a buy and a sell of BTC on
// binance (a realized PNL with distinctive digits) and an observed BTC
// balance, and the true figures a replay of the log gives: the pair's
// total PNL and the BTC balance.
func forgeDataDir(t *testing.T) (dir string, pnl, balance decimal.Decimal) {
	t.Helper()
	t.Setenv("TRADELEDGER_WALLET", forgeWallet)
	t.Setenv("TRADELEDGER_PASSWORD", forgePassword)
	dir = filepath.Join(t.TempDir(), "data")
	ctx := context.Background()
	d, err := OpenDataDir(ctx, dir, "", zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	clock := domain.NewManualClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	order := func(id int64, side domain.Side, price, fee string) {
		clock.Advance(time.Hour)
		p := decimal.MustDecimal(price)
		if _, err := d.Store.Append(ctx, domain.OrderStream(id), domain.NoStream,
			domain.NewEvent(clock, domain.TypeOrderRequested, domain.OrderRequested{OrderID: id, Exchange: "binance", Pair: "USDT-BTC",
				Side: side, Kind: domain.KindLimit, Amount: decimal.MustDecimal("1"), Price: p, ClientOrderID: "forge-" + string(side)}),
			domain.NewEvent(clock, domain.TypeOrderAccepted, domain.OrderAccepted{}),
			domain.NewEvent(clock, domain.TypeOrderFilled, domain.OrderFilled{FillID: "f" + string(side), Price: p,
				Quantity: decimal.MustDecimal("1"), Fee: decimal.MustDecimal(fee), FeeAsset: "USDT"})); err != nil {
			t.Fatal(err)
		}
	}
	order(1, domain.Buy, "100.123456789", "0.1")
	order(2, domain.Sell, "112.468024681", "0.11")
	balance = decimal.MustDecimal("1.234567891234")
	if _, err := d.Store.Append(ctx, domain.BalanceStream("binance"), domain.Any,
		domain.NewEvent(clock, domain.TypeBalancesObserved, domain.BalancesObserved{Exchange: "binance",
			Balances: []domain.AssetBalance{{Asset: "BTC", Available: balance}}})); err != nil {
		t.Fatal(err)
	}
	rep, err := replayState(ctx, d.Store, nil, logCut{}, domain.LOFO, projections.PnlScope{Keys: []string{"All"}}, time.UTC, clock.Now(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	pnl = decOf(t, rep.Pnl.Total.Pnl)
	if pnl.IsZero() {
		t.Fatal("no realized PNL to forge")
	}
	return dir, pnl, balance
}

// forgeSnapshot changes, in the named sections of the snapshot file at
// path, every value equal to a pair's first Decimal into its second (as a
// Decimal's memory and as a decimal.Compact: the two forms read models keep
// amounts in), and makes each changed frame's CRC-32C right again. The
// index is left as written. It fails unless every value was found.
func forgeSnapshot(t *testing.T, path string, edits map[string][2]decimal.Decimal) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := snap.ReadHeader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	for name, edit := range edits {
		sec, ok := h.Section(name)
		if !ok {
			t.Fatalf("no section %s", name)
		}
		changed := 0
		for off := sec.Offset; off < sec.Offset+sec.Length; {
			size := int64(binary.LittleEndian.Uint32(b[off:]))
			payload := b[off+8 : off+8+size]
			for _, form := range valueForms(edit[0], edit[1]) {
				changed += bytes.Count(payload, form[0])
				copy(payload, bytes.ReplaceAll(payload, form[0], form[1]))
			}
			binary.LittleEndian.PutUint32(b[off+4:], snap.Checksum(payload))
			off += 8 + size
		}
		if changed == 0 {
			t.Fatalf("section %s holds no %s to forge", name, edit[0])
		}
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// valueForms are the byte forms of from and to: the low word of a
// Decimal (its coefficient, for values of one word) and a Compact.
func valueForms(from, to decimal.Decimal) [][2][]byte {
	_, lf := from.Words()
	_, lt := to.Words()
	forms := [][2][]byte{{binary.LittleEndian.AppendUint64(nil, lf), binary.LittleEndian.AppendUint64(nil, lt)}}
	cf, ok1 := decimal.CompactOf(from)
	ct, ok2 := decimal.CompactOf(to)
	if ok1 && ok2 {
		forms = append(forms, [2][]byte{binary.LittleEndian.AppendUint64(nil, uint64(cf)), binary.LittleEndian.AppendUint64(nil, uint64(ct))})
	}
	return forms
}

// figures reads the pair's total PNL and the BTC balance from a running
// serve.
func figures(t *testing.T, m *Main, token string) (pnl, btc decimal.Decimal) {
	t.Helper()
	status, body := serveGet(t, m, "/api/v1/pnl/total?key="+url.QueryEscape("binance/USDT-BTC"), token)
	if status != 200 {
		t.Fatalf("pnl/total = %d %s", status, body)
	}
	var total map[string]any
	json.Unmarshal([]byte(body), &total)
	pnl = decOf(t, total["pnl"])
	req, _ := http.NewRequest("POST", m.Server.URL()+"/api/v1/balances", strings.NewReader("{}"))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var bals []map[string]any
	json.NewDecoder(resp.Body).Decode(&bals)
	for _, b := range bals {
		if b["Asset"] == "BTC" {
			// The exact amount (issue 42: "Available Qty" is the spec's 8 places).
			btc = decOf(t, b["availableExact"])
		}
	}
	return pnl, btc
}

// TestForgedSnapshotRefused: a snapshot whose Ledger PNL and a balance were
// changed, CRCs recomputed, is refused by serve (which serves the log's
// figures and logs why), ignored by replay (with or without
// --from-snapshot), named by verify --snapshots (exit 1: the snapshot, the
// projection, the first value that differs), and `tradeledger snapshot`
// writes the log's state over it, not the forged one.
func TestForgedSnapshotRefused(t *testing.T) {
	dir, pnl, btc := forgeDataDir(t)
	if out, errOut, code := auditRun(t, "snapshot", "--data", dir); code != 0 {
		t.Fatalf("snapshot: exit %d\n%s%s", code, out, errOut)
	}
	files, _ := filepath.Glob(filepath.Join(snapshotDir(dir), "*.snap"))
	if len(files) != 1 {
		t.Fatalf("snapshots %v", files)
	}
	forgedPnl, forgedBTC := pnl.Add(decimal.MustDecimal("1000")), decimal.MustDecimal("999")
	forgeSnapshot(t, files[0], map[string][2]decimal.Decimal{"ledger": {pnl, forgedPnl}, "balances": {btc, forgedBTC}})
	name := filepath.Base(files[0])

	// serve: the forged file refused at load, with why in the log.
	core, logs := observer.New(zap.InfoLevel)
	m := NewMain()
	m.Config.Data, m.Config.Listen, m.Config.FilesListen = dir, "127.0.0.1:0", ""
	m.Logger, m.ManualCycles, m.ManualCheckpoints, m.ManualSnapshots = zap.New(core), true, true, true
	if err := m.Run(context.Background()); err != nil {
		m.Close()
		t.Fatal(err)
	}
	_, token := serveLogin(t, m, forgeWallet, forgePassword)
	gotPnl, gotBTC := figures(t, m, token)
	if _, loaded, _ := m.Runner.Snapshot(); loaded {
		t.Error("serve loaded the forged snapshot")
	}
	m.Close()
	if gotPnl != pnl || gotBTC != btc {
		t.Fatalf("serve answers pnl %s and BTC %s, the log says %s and %s (the forgery: %s and %s)", gotPnl, gotBTC, pnl, btc, forgedPnl, forgedBTC)
	}
	skipped := logs.FilterMessage("read-model snapshot skipped").All()
	if len(skipped) != 1 || !strings.Contains(skipped[0].ContextMap()["why"].(string), "SHA-256") {
		t.Fatalf("serve's log of the forged snapshot: %v", skipped)
	}

	// replay: the log alone, and --from-snapshot does not take it either.
	for _, args := range [][]string{{"replay", "--data", dir, "--json"}, {"replay", "--data", dir, "--json", "--from-snapshot"}} {
		out, errOut, code := auditRun(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d %s", args, code, errOut)
		}
		rep := replayJSON(t, out)
		if rep.pnl != pnl || rep.snapshot != 0 || !strings.Contains(rep.source, "log alone") {
			t.Fatalf("%v: pnl %s from %q (snapshot %d), want %s from the log alone\n%s", args, rep.pnl, rep.source, rep.snapshot, pnl, errOut)
		}
		if len(args) == 5 && !strings.Contains(errOut, name+" not used") {
			t.Fatalf("replay --from-snapshot does not say why it passed over %s:\n%s", name, errOut)
		}
	}

	// verify: the log is sound; --snapshots names the forged snapshot,
	// its projection and the first value.
	if _, errOut, code := auditRun(t, "verify", "--data", dir); code != 0 {
		t.Fatalf("verify of the untouched log: exit %d %s", code, errOut)
	}
	out, errOut, code := auditRun(t, "verify", "--data", dir, "--snapshots")
	if code != 1 || !strings.Contains(errOut, "snapshot "+name) || !strings.Contains(errOut, "projection ledger") ||
		!strings.Contains(errOut, forgedPnl.String()) || !strings.Contains(errOut, pnl.String()) {
		t.Fatalf("verify --snapshots: exit %d, want 1 naming %s, projection ledger and the value (%s in the snapshot, %s in the log)\n%s%s",
			code, name, forgedPnl, pnl, out, errOut)
	}
	if !strings.Contains(out, "balances") {
		t.Fatalf("verify --snapshots does not name the balances among the projections that differ:\n%s", out)
	}

	// snapshot: the forged one is passed over; the new one is the log's.
	out, errOut, code = auditRun(t, "snapshot", "--data", dir)
	if code != 0 || !strings.Contains(errOut, name+" skipped") || !strings.Contains(out, "after the first event") {
		t.Fatalf("snapshot over a forged one: exit %d\n%s%s", code, out, errOut)
	}
	// (serve's login appended an event: the new one is at the next
	// position, the forged one stays, refused, until pruned.)
	out, errOut, code = auditRun(t, "verify", "--data", dir, "--snapshots")
	if code != 1 || !strings.Contains(out, "FAILED: snapshot "+name) || !strings.Contains(out, ".snap: OK: signed by this log's key") {
		t.Fatalf("verify --snapshots after the new snapshot: exit %d, want the new one OK and %s still failing\n%s%s", code, name, out, errOut)
	}
	out, errOut, code = auditRun(t, "replay", "--data", dir, "--json", "--from-snapshot")
	if rep := replayJSON(t, out); code != 0 || rep.snapshot == 0 || rep.pnl != pnl {
		t.Fatalf("replay --from-snapshot of the new snapshot: exit %d, snapshot %d, pnl %s\n%s", code, rep.snapshot, rep.pnl, errOut)
	}
}

// replayJSON reads what replay --json says of the total PNL, the
// snapshot it started from and its source.
func replayJSON(t *testing.T, out string) (r struct {
	pnl      decimal.Decimal
	snapshot uint64
	source   string
}) {
	t.Helper()
	var rep struct {
		Source string `json:"source"`
		AsOf   struct {
			Snapshot uint64 `json:"snapshot"`
		} `json:"asOf"`
		Pnl struct {
			Total struct {
				Pnl any `json:"pnl"`
			} `json:"total"`
		} `json:"pnlOverview"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("replay output: %v\n%s", err, out)
	}
	r.pnl, r.snapshot, r.source = decOf(t, rep.Pnl.Total.Pnl), rep.AsOf.Snapshot, rep.Source
	return r
}

// startForgeServe starts serve on dir with the background check at full
// speed, logging into logs.
func startForgeServe(t *testing.T, dir string, logs *zap.Logger) *Main {
	t.Helper()
	m := NewMain()
	m.Config.Data, m.Config.Listen, m.Config.FilesListen = dir, "127.0.0.1:0", ""
	m.Config.SnapshotCheckShare = 1
	m.Logger, m.ManualCycles, m.ManualCheckpoints, m.ManualSnapshots = logs, true, true, true
	if err := m.Run(context.Background()); err != nil {
		m.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// health is what /healthz says of the start snapshot's check.
func forgeHealth(t *testing.T, m *Main) (status, reason, check string) {
	t.Helper()
	resp, err := http.Get(m.Server.URL() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h struct {
		Status, Reason string
		Start          struct {
			Snapshot *struct{ Check string } `json:"snapshot"`
		} `json:"start"`
	}
	json.NewDecoder(resp.Body).Decode(&h)
	if h.Start.Snapshot != nil {
		check = h.Start.Snapshot.Check
	}
	return h.Status, h.Reason, check
}

// TestServeDiscardsWrongSnapshot: a snapshot signed by the log's own key
// (a writer's bug, or someone who has the key) that holds a PNL and a
// balance the log does not imply is loaded — serving starts at once —,
// found out by the background check against a rebuild from the log, and
// then: the rebuilt state is served, the file is deleted, a
// SnapshotDiscarded event is recorded and sent to the webhooks that want
// "snapshots", /healthz is degraded saying why, the metric says so. A
// snapshot that is the log's state passes the same check.
func TestServeDiscardsWrongSnapshot(t *testing.T) {
	ctx := context.Background()
	dir, pnl, btc := forgeDataDir(t)
	hooks := make(chan []byte, 8)
	hook := httptestServer(t, hooks)

	// A webhook for "snapshots", configured through the API, and a
	// snapshot that is the log's state: its check passes.
	m := startForgeServe(t, dir, zap.NewNop())
	_, token := serveLogin(t, m, forgeWallet, forgePassword)
	cfgResp := serveDo(t, m, "GET", "/api/v1/config/full", token, "")
	cfg := cfgResp["config"].(map[string]any)
	cfg["notifications"] = map[string]any{"webhooks": []any{map[string]any{"url": hook, "events": []any{"snapshots"}}}}
	body, _ := json.Marshal(map[string]any{"data": cfg})
	if out := serveDo(t, m, "POST", "/api/v1/config/update", token, string(body)); out["status"] != "success" {
		t.Fatalf("config/update: %v", out)
	}
	if _, _, err := m.SnapshotWriter.Write(ctx); err != nil {
		t.Fatal(err)
	}
	m.Close()
	m = startForgeServe(t, dir, zap.NewNop())
	m.snapCheck.work.wg.Wait()
	if status, reason, check := forgeHealth(t, m); status != "ok" || check != "equal" {
		t.Fatalf("start from the log's own snapshot: %s %q, check %q", status, reason, check)
	}
	m.Close()

	// The wrong state: the models at the head, fed a fill and a balance
	// the log does not have, written and signed.
	w := NewMain()
	w.Config.Data, w.Logger, w.ManualCycles, w.ManualCheckpoints = dir, zap.NewNop(), true, true
	if err := w.openModels(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.Runner.Start(ctx); err != nil {
		t.Fatal(err)
	}
	clock := domain.NewManualClock(time.Date(2026, 3, 1, 18, 0, 0, 0, time.UTC))
	fakes := []domain.Event{
		domain.NewEvent(clock, domain.TypeOrderRequested, domain.OrderRequested{OrderID: 3, Exchange: "binance", Pair: "USDT-BTC",
			Side: domain.Sell, Kind: domain.KindLimit, Amount: decimal.MustDecimal("1"), Price: decimal.MustDecimal("500"), ClientOrderID: "fake"}),
		domain.NewEvent(clock, domain.TypeOrderFilled, domain.OrderFilled{FillID: "fake", Price: decimal.MustDecimal("500"),
			Quantity: decimal.MustDecimal("1"), FeeAsset: "USDT"}),
	}
	for i := range fakes {
		fakes[i].Stream, fakes[i].Version = domain.OrderStream(3), int64(i)
	}
	bal := domain.NewEvent(clock, domain.TypeBalancesObserved, domain.BalancesObserved{Exchange: "binance",
		Balances: []domain.AssetBalance{{Asset: "BTC", Available: decimal.MustDecimal("999")}}})
	bal.Stream = domain.BalanceStream("binance")
	for _, p := range w.projections {
		switch p.Name() {
		case "ledger":
			for i := range fakes {
				if err := p.Apply(&fakes[i]); err != nil {
					t.Fatal(err)
				}
			}
		case "balances":
			if err := p.Apply(&bal); err != nil {
				t.Fatal(err)
			}
		}
	}
	f, err := w.Runner.Freeze(ctx)
	if err != nil {
		t.Fatal(err)
	}
	file, err := w.Snapshots.Write(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()

	m = startForgeServe(t, dir, zap.NewNop())
	if info, loaded, _ := m.Runner.Snapshot(); !loaded || info.Path != file.Path {
		t.Fatalf("serve did not start from the signed snapshot %s", file.Path)
	}
	m.snapCheck.work.wg.Wait()
	_, token = serveLogin(t, m, forgeWallet, forgePassword)
	if gotPnl, gotBTC := figures(t, m, token); gotPnl != pnl || gotBTC != btc {
		t.Fatalf("after the check serve answers pnl %s and BTC %s, the log says %s and %s", gotPnl, gotBTC, pnl, btc)
	}
	name := filepath.Base(file.Path)
	status, reason, check := forgeHealth(t, m)
	if status != "degraded" || check != "differed" || !strings.Contains(reason, name) || !strings.Contains(reason, "projection ledger") ||
		!strings.Contains(reason, "rebuilt from the log is served") {
		t.Fatalf("healthz: %s %q, check %q", status, reason, check)
	}
	if _, err := os.Lstat(file.Path); !os.IsNotExist(err) {
		t.Fatalf("the wrong snapshot is still there: %v", err)
	}
	_, fams := scrape(t, m.Server.URL()+"/metrics", token)
	if v, ok := metricValue(fams, "tradeledger_snapshot_check_failed", nil); !ok || v != 1 {
		t.Fatalf("tradeledger_snapshot_check_failed = %v (%v), want 1", v, ok)
	}
	it := m.DataDir.Store.ReadStream(ctx, domain.StreamSnapshots, 0, 0)
	var recs []domain.SnapshotDiscarded
	for it.Next() {
		e := it.Event()
		rec, err := domain.Payload[domain.SnapshotDiscarded](&e)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, *rec)
	}
	it.Close()
	if len(recs) != 1 || recs[0].File != name || !recs[0].Replaced || !recs[0].Signed ||
		strings.Join(recs[0].Projections, ",") != "ledger,balances" || recs[0].Log == "" {
		t.Fatalf("recorded %+v", recs)
	}
	select {
	case b := <-hooks:
		if !bytes.Contains(b, []byte(`"kind":"snapshots"`)) || !bytes.Contains(b, []byte(name)) {
			t.Fatalf("webhook body %s", b)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no webhook for the discarded snapshot")
	}
}

// httptestServer records each POSTed body on got and returns its URL.
func httptestServer(t *testing.T, got chan<- []byte) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		select {
		case got <- b:
		default:
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// serveDo sends a request with token to a running Main and decodes the
// JSON object it answers.
func serveDo(t *testing.T, m *Main, method, path, token, body string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(method, m.Server.URL()+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]any{}
	json.NewDecoder(resp.Body).Decode(&out)
	return out
}

// TestCheckpointKeyMustBePrivate: a checkpoint.key its group or others may
// read stops every command that opens the data dir, naming the file and
// the chmod that fixes it; at 0600 it opens.
func TestCheckpointKeyMustBePrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	d, err := OpenDataDir(context.Background(), dir, "", zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	file := filepath.Join(dir, "checkpoint.key")
	for _, mode := range []os.FileMode{0o640, 0o604, 0o660} {
		if err := os.Chmod(file, mode); err != nil {
			t.Fatal(err)
		}
		_, errOut, code := auditRun(t, "verify", "--data", dir)
		if code == 0 || !strings.Contains(errOut, file) || !strings.Contains(errOut, "chmod 600 "+file) {
			t.Fatalf("mode %04o: exit %d\n%s", mode, code, errOut)
		}
		m := NewMain()
		m.Config.Data, m.Config.Listen, m.Config.FilesListen, m.Logger = dir, "127.0.0.1:0", "", zap.NewNop()
		if err := m.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "chmod 600") {
			m.Close()
			t.Fatalf("mode %04o: serve started (%v)", mode, err)
		}
		m.Close()
	}
	if err := os.Chmod(file, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := auditRun(t, "verify", "--data", dir); code != 0 {
		t.Fatalf("at 0600: exit %d %s", code, errOut)
	}
}
