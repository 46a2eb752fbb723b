package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/titanous/json5"

	"github.com/tradeledger/tradeledger/domain"
)

// runImport is `tradeledger import [--data DIR] --from GUNBOT_DIR`.
func runImport(ctx context.Context, args []string, env *Env) error {
	fs := newFlagSet("import", env.Stderr)
	data := fs.String("data", "./data", "data directory")
	from := fs.String("from", "", "Gunbot-style folder to import (config.js or config.json, autoconfig.json, custom-editor.json, backups/, json/*-state.json, customStrategies/*.js, AutoConfig variable files)")
	takeWallet := fs.Bool("take-wallet", false, "use the folder's bot.service_wallet (the login encryption key) instead of keeping the data dir's")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *from == "" {
		return errors.New("--from is required: the Gunbot folder to import")
	}
	if st, err := os.Stat(*from); err != nil || !st.IsDir() {
		return fmt.Errorf("--from %s: not a readable directory", *from)
	}
	logger, err := newLogger("warn")
	if err != nil {
		return err
	}
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
	box, err := domain.NewSecretBox(d.MasterKey)
	if err != nil {
		d.Close()
		return fmt.Errorf("master key: %w", err)
	}
	im := &Importer{Store: d.Store, Box: box, Clock: domain.SystemClock{}, Progress: env.Stderr, Warn: env.Stderr, Terminal: isTerminal(env.Stderr), TakeWallet: *takeWallet}
	sum, err := im.Import(ctx, *from)
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

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Importer appends a Gunbot-style folder to the log as events. Every event
// id is derived from the source (file name and content hash, or the order's
// fields), so importing the same folder again appends nothing: the store
// treats re-appended ids as no-ops.
type Importer struct {
	Store domain.EventStore
	// Box encrypts exchange secrets found in clear (isEncrypted false).
	Box   *domain.SecretBox
	Clock domain.Clock
	// Progress receives a progress line on a terminal (Terminal true).
	Progress io.Writer
	Terminal bool
	// Warn receives one line per skipped item.
	Warn io.Writer
	// TakeWallet replaces the data dir's bot.service_wallet by the
	// folder's; by default the data dir's is kept.
	TakeWallet bool
}

// ImportSummary counts what an import did.
type ImportSummary struct {
	From                    string
	Added, Present, Skipped int // units (config, files, orders)
	Config, Files, Orders   int // units seen, by kind
	SecretsDropped          int // Gunbot-encrypted exchange secrets we cannot read
	EventsAppended          uint64
	Wallet                  string // what became of bot.service_wallet
}

// String is the final summary line.
func (s ImportSummary) String() string {
	line := fmt.Sprintf("imported %s: %d new, %d already present, %d skipped (config %d, files %d, orders %d; %d events appended)",
		s.From, s.Added, s.Present, s.Skipped, s.Config, s.Files, s.Orders, s.EventsAppended)
	if s.SecretsDropped > 0 {
		line += fmt.Sprintf("; %d encrypted exchange secrets not imported (set them again with license/keys/edit or config/update)", s.SecretsDropped)
	}
	if s.Wallet != "" {
		line += "; " + s.Wallet
	}
	return line
}

// importUnit is a group of events for one stream, appended at once.
type importUnit struct {
	what   string // for progress and warnings
	kind   string // config, file, order
	stream string
	events []domain.Event
}

// Import reads dir and appends its events. A malformed configuration is an
// error (nothing is appended); a malformed file or order is skipped with a
// warning.
func (im *Importer) Import(ctx context.Context, dir string) (ImportSummary, error) {
	sum := ImportSummary{From: dir}
	var units []importUnit
	u, err := im.configUnit(ctx, dir, &sum)
	if err != nil {
		return sum, err
	}
	if u != nil {
		units = append(units, *u)
	}
	units = append(units, im.fileUnits(dir, &sum)...)
	units = append(units, im.orderUnits(dir, &sum)...)

	for i, u := range units {
		if im.Terminal && im.Progress != nil {
			fmt.Fprintf(im.Progress, "\rimporting %d/%d %-50.50s", i+1, len(units), u.what)
		}
		before, err := im.Store.Head(ctx)
		if err != nil {
			return sum, err
		}
		if _, err := im.Store.Append(ctx, u.stream, domain.Any, u.events...); err != nil {
			if im.Terminal && im.Progress != nil {
				fmt.Fprintln(im.Progress)
			}
			return sum, fmt.Errorf("import %s: %w", u.what, err)
		}
		after, err := im.Store.Head(ctx)
		if err != nil {
			return sum, err
		}
		if after > before {
			sum.Added++
			sum.EventsAppended += uint64(len(u.events))
		} else {
			sum.Present++
		}
		switch u.kind {
		case "config":
			sum.Config++
		case "file":
			sum.Files++
		case "order":
			sum.Orders++
		}
	}
	if im.Terminal && im.Progress != nil && len(units) > 0 {
		fmt.Fprintln(im.Progress)
	}
	return sum, nil
}

func (im *Importer) warn(sum *ImportSummary, format string, args ...any) {
	sum.Skipped++
	if im.Warn != nil {
		fmt.Fprintf(im.Warn, "import: skipped "+format+"\n", args...)
	}
}

// importID returns a UUID-shaped id (version 8, RFC 9562 variant) derived
// from parts: the same source always gives the same id.
func importID(parts ...string) string {
	h := sha256.New()
	h.Write([]byte("tradeledger-import"))
	for _, p := range parts {
		h.Write([]byte{0})
		h.Write([]byte(p))
	}
	var u [16]byte
	copy(u[:], h.Sum(nil))
	u[6] = 0x80 | (u[6] & 0x0f)
	u[8] = 0x80 | (u[8] & 0x3f)
	s := hex.EncodeToString(u[:])
	return s[0:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:32]
}

func (im *Importer) event(typ string, data any, time int64, idParts ...string) domain.Event {
	e := domain.NewEvent(im.Clock, typ, data)
	e.ID = importID(append([]string{typ}, idParts...)...)
	if time > 0 {
		e.Time = time
	}
	e.Actor = domain.ActorImport
	return e
}

// readConfigFile reads config.js or config.json; nil when neither exists.
// body is the configuration's text (for config.js, the object literal after
// "module.exports =", whose hash names the import), doc the same as strict
// JSON: config.js is read as the JavaScript object literal people keep
// (comments, trailing commas, unquoted keys, single quotes) with a JSON5
// parser, and an error names the line and column in the file.
func readConfigFile(dir string) (name string, body, doc []byte, err error) {
	for _, name := range []string{"config.js", "config.json"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, os.ErrNotExist) {
			continue
		} else if err != nil {
			return name, nil, nil, err
		}
		if name == "config.json" {
			return name, b, b, nil
		}
		s := string(b)
		start := strings.Index(s, "{")
		if start < 0 {
			return name, nil, nil, fmt.Errorf("%s: no object literal ({…}) in the file", name)
		}
		lit := strings.TrimSuffix(strings.TrimSpace(s[start:]), ";")
		doc, err := json5ToJSON([]byte(lit))
		if err != nil {
			var se *json5.SyntaxError
			if errors.As(err, &se) {
				line, col := lineColumn(b, start+max(int(se.Offset)-1, 0))
				return name, nil, nil, fmt.Errorf("%s:%d:%d: %v", name, line, col, err)
			}
			return name, nil, nil, fmt.Errorf("%s: %v", name, err)
		}
		return name, []byte(lit), doc, nil
	}
	return "", nil, nil, nil
}

// json5ToJSON parses one JSON5 value (numbers kept as written) and returns
// it as JSON.
func json5ToJSON(b []byte) ([]byte, error) {
	dec := json5.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, errors.New("the configuration must be an object ({…})")
	}
	return json.Marshal(jsonNumbers(v))
}

// jsonNumbers replaces json5.Number (which encoding/json writes as a
// string) by json.Number, keeping each number's text.
func jsonNumbers(v any) any {
	switch x := v.(type) {
	case json5.Number:
		return json.Number(x)
	case map[string]any:
		for k, e := range x {
			x[k] = jsonNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = jsonNumbers(e)
		}
	}
	return v
}

// lineColumn returns the 1-based line and column (in bytes) of offset in b.
func lineColumn(b []byte, offset int) (line, col int) {
	offset = min(offset, len(b))
	line = 1 + bytes.Count(b[:offset], []byte("\n"))
	return line, offset - bytes.LastIndexByte(b[:offset], '\n')
}

// configUnit turns the folder's configuration into ConfigReplaced (secrets
// removed; missing sections empty; the current wallet kept when the file
// has none) and ExchangeKeysSet for secrets in clear, in one append on the
// config stream.
func (im *Importer) configUnit(ctx context.Context, dir string, sum *ImportSummary) (*importUnit, error) {
	name, body, text, err := readConfigFile(dir)
	if err != nil {
		return nil, err
	}
	if body == nil {
		return nil, nil
	}
	doc, err := domain.DecodeJSONObject(text)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", name, domain.ErrorMessage(err))
	}
	for _, s := range []string{"bot", "exchanges", "pairs", "strategies", "GUI"} {
		if _, ok := doc[s]; !ok {
			doc[s] = map[string]any{}
		}
	}
	if bot, ok := doc["bot"].(map[string]any); ok {
		cur, err := currentConfig(ctx, im.Store)
		if err != nil {
			return nil, err
		}
		// The data dir's wallet is the login encryption key its clients
		// use: replacing it silently would lock them out.
		w, _ := bot["service_wallet"].(string)
		switch {
		case w == "" || w == domain.Mask: // absent or masked (a restore without --with-secrets)
			bot["service_wallet"] = cur.Wallet()
			sum.Wallet = "kept the data dir's service wallet (the folder has none)"
		case w == cur.Wallet() || cur.Wallet() == "":
			sum.Wallet = "service wallet unchanged (the folder's is the data dir's)"
		case im.TakeWallet:
			sum.Wallet = "took the folder's service wallet (--take-wallet): clients must encrypt the login password with it"
		default:
			bot["service_wallet"] = cur.Wallet()
			sum.Wallet = "kept the data dir's service wallet; the folder's differs (--take-wallet to use it)"
		}
	}
	sha := domain.FileSHA256(body)
	var keys []domain.Event
	if exchanges, ok := doc["exchanges"].(map[string]any); ok {
		names := make([]string, 0, len(exchanges))
		for n := range exchanges {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, ex := range names {
			entry, ok := exchanges[ex].(map[string]any)
			if !ok {
				continue
			}
			encrypted, _ := entry["isEncrypted"].(bool)
			fields := map[string]string{}
			stripped, secrets := domain.ExtractSecrets(entry) // by domain.IsSecretPath, at any depth
			for f, s := range secrets {
				if s == "" {
					continue
				}
				if encrypted {
					sum.SecretsDropped++
					continue
				}
				fields[f] = im.Box.Seal(s)
			}
			stripped["isEncrypted"] = len(fields) > 0
			exchanges[ex] = stripped
			if len(fields) > 0 {
				keys = append(keys, im.event(domain.TypeExchangeKeysSet, domain.ExchangeKeysSet{Exchange: ex, Fields: fields}, 0, sha, ex))
			}
		}
	}
	cfg, err := domain.ConfigFromMap(doc)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", name, domain.ErrorMessage(err))
	}
	b, err := json.Marshal(cfg.WithoutSecrets())
	if err != nil {
		return nil, err
	}
	// The id also covers the wallet the configuration ends up with, so that
	// --take-wallet after a plain import of the same folder is a change,
	// and importing again with the same outcome adds nothing.
	idParts := []string{sha}
	if bot, ok := doc["bot"].(map[string]any); ok {
		w, _ := bot["service_wallet"].(string)
		idParts = append(idParts, "wallet", w)
	}
	events := append([]domain.Event{im.event(domain.TypeConfigReplaced, domain.ConfigReplaced{Config: b}, 0, idParts...)}, keys...)
	return &importUnit{what: name, kind: "config", stream: domain.StreamConfig, events: events}, nil
}

// fileUnits imports autoconfig.json, custom-editor.json (the custom
// strategy editor's file, which restore writes at the top too),
// backups/autoconfig.json.<ms>, customStrategies/*.js and AutoConfig
// variable files (*.json at the top whose name mentions "variables").
func (im *Importer) fileUnits(dir string, sum *ImportSummary) []importUnit {
	type src struct{ kind, name, path string }
	var srcs []src
	if _, err := os.Stat(filepath.Join(dir, domain.AutoconfigFileName)); err == nil {
		srcs = append(srcs, src{domain.FileAutoconfig, domain.AutoconfigFileName, filepath.Join(dir, domain.AutoconfigFileName)})
	}
	if _, err := os.Stat(filepath.Join(dir, domain.CustomEditorFileName)); err == nil {
		srcs = append(srcs, src{domain.FileCustomEditor, domain.CustomEditorFileName, filepath.Join(dir, domain.CustomEditorFileName)})
	}
	top, _ := os.ReadDir(dir)
	for _, e := range top {
		n := e.Name()
		if e.Type().IsRegular() && strings.HasSuffix(n, ".json") && strings.Contains(strings.ToLower(n), "variables") {
			srcs = append(srcs, src{domain.FileACVar, n, filepath.Join(dir, n)})
		}
	}
	backups, _ := os.ReadDir(filepath.Join(dir, "backups"))
	for _, e := range backups {
		if !e.Type().IsRegular() {
			continue
		}
		if domain.ValidateFileName(domain.FileBackup, e.Name()) != nil {
			im.warn(sum, "backups/%s: only autoconfig.json.<timestamp ms> backups are kept", e.Name())
			continue
		}
		srcs = append(srcs, src{domain.FileBackup, e.Name(), filepath.Join(dir, "backups", e.Name())})
	}
	strategies, _ := os.ReadDir(filepath.Join(dir, "customStrategies"))
	for _, e := range strategies {
		if e.Type().IsRegular() {
			srcs = append(srcs, src{domain.FileStrategy, e.Name(), filepath.Join(dir, "customStrategies", e.Name())})
		}
	}
	var units []importUnit
	for _, s := range srcs {
		b, err := os.ReadFile(s.path)
		if err != nil {
			im.warn(sum, "%s: %v", s.path, err)
			continue
		}
		fw, err := domain.NewFileWritten(s.kind, s.name, b)
		if err != nil {
			im.warn(sum, "%s: %s", s.path, domain.ErrorMessage(err))
			continue
		}
		units = append(units, importUnit{
			what: s.kind + " " + s.name, kind: "file", stream: domain.FileStream(s.kind, s.name),
			events: []domain.Event{im.event(domain.TypeFileWritten, fw, 0, s.kind, s.name, fw.SHA256)},
		})
	}
	return units
}

// gunbotOrder is one entry of a Gunbot state file's orders.
type gunbotOrder struct {
	Time   json.Number `json:"time"`
	Pair   string      `json:"pair"`
	Type   string      `json:"type"`
	Rate   json.Number `json:"rate"`
	Amount json.Number `json:"amount"`
	ID     any         `json:"id"`
	Cost   json.Number `json:"cost"`
}

// Imported orders get ids in [2^52, 2^53): derived from the source, clear
// of the small ids live orders get, and exact as JSON numbers.
const importOrderIDBase = int64(1) << 52

// orderUnits turns every order of json/*-state.json into an order stream:
// OrderRequested, OrderAccepted and one OrderFilled for the whole amount at
// the order's rate, all at the order's original time; the units come in
// the orders' time order.
func (im *Importer) orderUnits(dir string, sum *ImportSummary) []importUnit {
	paths, _ := filepath.Glob(filepath.Join(dir, "json", "*-state.json"))
	sort.Strings(paths)
	var units []importUnit
	for _, path := range paths {
		exchange, pair, ok := splitStateName(filepath.Base(path))
		if !ok {
			im.warn(sum, "%s: name is not <exchange>-<QUOTE>-<BASE>-state.json", path)
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			im.warn(sum, "%s: %v", path, err)
			continue
		}
		var state struct {
			Orders []json.RawMessage `json:"orders"`
		}
		if err := json.Unmarshal(b, &state); err != nil {
			im.warn(sum, "%s: not a state file: %v", path, err)
			continue
		}
		for i, raw := range state.Orders {
			u, err := im.orderUnit(exchange, pair, raw)
			if err != nil {
				im.warn(sum, "%s: order %d: %s", path, i, domain.ErrorMessage(err))
				continue
			}
			units = append(units, u)
		}
	}
	// In trade-time order, whatever order the files list them in (Gunbot
	// keeps the newest first): lots are matched in log order, so a sell
	// appended before the buy it sells would find no lot to consume.
	sort.SliceStable(units, func(i, j int) bool { return units[i].events[0].Time < units[j].events[0].Time })
	return units
}

// splitStateName splits "<exchange>-<QUOTE>-<BASE>-state.json".
func splitStateName(name string) (exchange, pair string, ok bool) {
	key, ok := strings.CutSuffix(name, "-state.json")
	if !ok {
		return "", "", false
	}
	parts := strings.Split(key, "-")
	if len(parts) < 3 {
		return "", "", false
	}
	n := len(parts)
	exchange = strings.Join(parts[:n-2], "-")
	pair = parts[n-2] + "-" + parts[n-1]
	if exchange == "" || parts[n-2] == "" || parts[n-1] == "" {
		return "", "", false
	}
	return exchange, pair, true
}

func (im *Importer) orderUnit(exchange, pair string, raw json.RawMessage) (importUnit, error) {
	var o gunbotOrder
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&o); err != nil {
		return importUnit{}, domain.Errorf(domain.EINVALID, "not an order object: %v", err)
	}
	if o.Pair != "" && o.Pair != pair {
		return importUnit{}, domain.Errorf(domain.EINVALID, "pair %q does not match the file's pair %s", o.Pair, pair)
	}
	side := domain.Side(strings.ToLower(o.Type))
	if side != domain.Buy && side != domain.Sell {
		return importUnit{}, domain.Errorf(domain.EINVALID, "type %q is neither buy nor sell", o.Type)
	}
	ms, err := strconv.ParseInt(o.Time.String(), 10, 64)
	if err != nil || ms <= 0 {
		return importUnit{}, domain.Errorf(domain.EINVALID, "time %q is not a timestamp in ms", o.Time)
	}
	if ms < 1e11 { // seconds, not milliseconds
		ms *= 1000
	}
	rate, err1 := domain.ParseDecimal(o.Rate.String())
	amount, err2 := domain.ParseDecimal(o.Amount.String())
	if err1 != nil || err2 != nil || rate.Sign() <= 0 || amount.Sign() <= 0 {
		return importUnit{}, domain.Errorf(domain.EINVALID, "rate %q and amount %q must be positive numbers", o.Rate, o.Amount)
	}
	srcID := ""
	switch v := o.ID.(type) {
	case string:
		srcID = v
	case json.Number:
		srcID = v.String()
	case nil:
	default:
		return importUnit{}, domain.Errorf(domain.EINVALID, "id must be a number or a string")
	}
	key := []string{exchange, pair, srcID, strconv.FormatInt(ms, 10), string(side), rate.String(), amount.String()}
	sum := sha256.Sum256([]byte(strings.Join(key, "\x00")))
	orderID := importOrderIDBase + int64(binary.BigEndian.Uint64(sum[:8])&(uint64(importOrderIDBase)-1))
	quote, _, err := domain.SplitPair(pair)
	if err != nil {
		return importUnit{}, err
	}
	idKey := strconv.FormatInt(orderID, 10)
	events := []domain.Event{
		im.event(domain.TypeOrderRequested, domain.OrderRequested{
			OrderID: orderID, Exchange: exchange, Pair: pair, Side: side, Kind: domain.KindLimit,
			Amount: amount, Price: rate, ClientOrderID: "import-" + idKey,
		}, ms, idKey, "requested"),
		im.event(domain.TypeOrderAccepted, domain.OrderAccepted{ExchangeOrderID: srcID}, ms, idKey, "accepted"),
		im.event(domain.TypeOrderFilled, domain.OrderFilled{
			FillID: "import-" + idKey, Price: rate, Quantity: amount, FeeAsset: quote,
		}, ms, idKey, "filled"),
	}
	return importUnit{what: fmt.Sprintf("order %s %s %s", exchange, pair, srcID), kind: "order", stream: domain.OrderStream(orderID), events: events}, nil
}
