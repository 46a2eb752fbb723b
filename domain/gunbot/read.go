// Package gunbot is the Gunbot folder format, both ways: Read parses a
// folder (config.js or config.json, autoconfig.json, custom-editor.json,
// backups/, json/*-state.json, customStrategies/*.js, AutoConfig variable
// files) into what an import records, Importer turns that into the events
// to append, and Tree lays a configuration and stored files out as such a
// folder again (restore). It reads and writes no file itself: folders come
// as an fs.FS and trees go back as paths and bytes, so that cmd does the IO
// and the format is tested without it. Standard library only, like domain.
package gunbot

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// Folder is what Read found in a Gunbot folder.
type Folder struct {
	// Config is config.js or config.json; nil when there is neither.
	Config *ConfigFile
	// Files are the stored files to import, in the order Read lists them.
	Files []File
	// Orders are the state files' orders in trade-time order (a stable
	// sort: Gunbot keeps a state file's orders newest first, and lots are
	// matched in log order).
	Orders []Order
	// Skipped are the files and orders left out, each with the reason.
	Skipped []Skip
}

// ConfigFile is the folder's configuration.
type ConfigFile struct {
	Name string // config.js or config.json
	// Body is the configuration's text (for config.js, the object literal
	// after "module.exports ="): its hash names the import.
	Body []byte
	// JSON is Body as strict JSON.
	JSON []byte
}

// File is one stored file of the folder.
type File struct {
	Path    string // in the folder, slash-separated
	Written domain.FileWritten
}

// Order is one order of a state file.
type Order struct {
	Exchange, Pair string
	Side           domain.Side
	Time           int64 // ms since the epoch
	Rate, Amount   decimal.Decimal
	SourceID       string // the state file's id, "" when it had none
	// ID is the order id the import gives it (see OrderID): derived from
	// the fields above, in [2^51, 2^52), clear of the small ids live orders
	// get and exact as a JSON number. The import may move an order to a
	// later id when another order took this one (OrderID says when).
	ID int64
	// LegacyID is the id versions before 2026-11-26 gave the order: 2^52
	// plus 52 bits of the hash of its fields, in [2^52, 2^53). An import
	// into a data dir holding such ids gives them again, so that it finds
	// the orders stored. The ids of an order's events derive from it
	// (Importer.Order), whatever ID is: distinct orders' events never
	// share an id.
	LegacyID int64
}

// Skip is an item Read left out.
type Skip struct {
	Path   string // in the folder, slash-separated
	Reason string
}

// Read parses the Gunbot folder fsys. A configuration that does not parse
// is an error naming the file (and, for config.js, the line and column);
// a stored file or an order that is not valid is skipped, and listed in
// Skipped. The state files are read concurrently: fsys must allow that
// (os.DirFS and fstest.MapFS do).
func Read(fsys fs.FS) (*Folder, error) {
	f := &Folder{}
	var err error
	if f.Config, err = readConfig(fsys); err != nil {
		return nil, err
	}
	f.readFiles(fsys)
	f.readOrders(fsys)
	return f, nil
}

func (f *Folder) skip(p, format string, args ...any) {
	f.Skipped = append(f.Skipped, Skip{Path: p, Reason: fmt.Sprintf(format, args...)})
}

// readConfig reads config.js or config.json; nil when neither exists.
// config.js is read as the JavaScript object literal people keep
// (comments, trailing commas, unquoted keys, single quotes) with
// ParseJSON5.
func readConfig(fsys fs.FS) (*ConfigFile, error) {
	for _, name := range []string{"config.js", "config.json"} {
		b, err := fs.ReadFile(fsys, name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return nil, err
		}
		if name == "config.json" {
			return &ConfigFile{Name: name, Body: b, JSON: b}, nil
		}
		start := literalStart(b)
		if start < 0 {
			return nil, fmt.Errorf("%s: no object literal ({…}) in the file", name)
		}
		lit := bytes.TrimSuffix(bytes.TrimSpace(b[start:]), []byte(";"))
		v, err := ParseJSON5(lit)
		if err != nil {
			var se *SyntaxError
			if errors.As(err, &se) {
				line, col := lineColumn(b, start+se.Offset)
				return nil, fmt.Errorf("%s:%d:%d: %v", name, line, col, err)
			}
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		if _, ok := v.(map[string]any); !ok {
			return nil, fmt.Errorf("%s: the configuration must be an object ({…})", name)
		}
		doc, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		return &ConfigFile{Name: name, Body: lit, JSON: doc}, nil
	}
	return nil, nil
}

// literalStart returns the offset of the first { of b outside comments and
// strings, -1 when there is none.
func literalStart(b []byte) int {
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '{':
			return i
		case c == '/' && i+1 < len(b) && b[i+1] == '/':
			for i < len(b) && b[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(b) && b[i+1] == '*':
			end := bytes.Index(b[i+2:], []byte("*/"))
			if end < 0 {
				return -1
			}
			i += 2 + end + 1
		case c == '"' || c == '\'' || c == '`':
			for i++; i < len(b) && b[i] != c; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		}
	}
	return -1
}

// lineColumn returns the 1-based line and column (in bytes) of offset in b.
func lineColumn(b []byte, offset int) (line, col int) {
	offset = min(offset, len(b))
	line = 1 + bytes.Count(b[:offset], []byte("\n"))
	return line, offset - bytes.LastIndexByte(b[:offset], '\n')
}

// readFiles reads autoconfig.json, custom-editor.json (the custom strategy
// editor's file, which restore writes at the top too),
// backups/autoconfig.json.<ms>, customStrategies/*.js and AutoConfig
// variable files (*.json at the top whose name mentions "variables").
func (f *Folder) readFiles(fsys fs.FS) {
	type src struct{ kind, name, path string }
	var srcs []src
	for _, s := range []src{
		{domain.FileAutoconfig, domain.AutoconfigFileName, domain.AutoconfigFileName},
		{domain.FileCustomEditor, domain.CustomEditorFileName, domain.CustomEditorFileName},
	} {
		if _, err := fs.Stat(fsys, s.path); err == nil {
			srcs = append(srcs, s)
		}
	}
	top, _ := fs.ReadDir(fsys, ".")
	for _, e := range top {
		n := e.Name()
		if e.Type().IsRegular() && strings.HasSuffix(n, ".json") && strings.Contains(strings.ToLower(n), "variables") {
			srcs = append(srcs, src{domain.FileACVar, n, n})
		}
	}
	backups, _ := fs.ReadDir(fsys, "backups")
	for _, e := range backups {
		if !e.Type().IsRegular() {
			continue
		}
		p := path.Join("backups", e.Name())
		if domain.ValidateFileName(domain.FileBackup, e.Name()) != nil {
			f.skip(p, "only autoconfig.json.<timestamp ms> backups are kept")
			continue
		}
		srcs = append(srcs, src{domain.FileBackup, e.Name(), p})
	}
	strategies, _ := fs.ReadDir(fsys, "customStrategies")
	for _, e := range strategies {
		if e.Type().IsRegular() {
			srcs = append(srcs, src{domain.FileStrategy, e.Name(), path.Join("customStrategies", e.Name())})
		}
	}
	for _, s := range srcs {
		b, err := fs.ReadFile(fsys, s.path)
		if err != nil {
			f.skip(s.path, "%v", err)
			continue
		}
		fw, err := domain.NewFileWritten(s.kind, s.name, b)
		if err != nil {
			f.skip(s.path, "%s", domain.ErrorMessage(err))
			continue
		}
		f.Files = append(f.Files, File{Path: s.path, Written: fw})
	}
}

// stateOrder is one entry of a Gunbot state file's orders.
type stateOrder struct {
	Time   json.Number `json:"time"`
	Pair   string      `json:"pair"`
	Type   string      `json:"type"`
	Rate   json.Number `json:"rate"`
	Amount json.Number `json:"amount"`
	ID     any         `json:"id"`
	Cost   json.Number `json:"cost"`
}

// readOrders reads the orders of every json/*-state.json, the files
// concurrently (one goroutine per core: decoding 200,000 orders is about a
// tenth of an import), their orders and skips kept in the files' order.
func (f *Folder) readOrders(fsys fs.FS) {
	paths, _ := fs.Glob(fsys, "json/*-state.json")
	slices.Sort(paths)
	parts := make([]Folder, len(paths))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(paths)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(paths); i = int(next.Add(1) - 1) {
				parts[i].readStateFile(fsys, paths[i])
			}
		}()
	}
	wg.Wait()
	n := len(f.Orders)
	for i := range parts {
		n += len(parts[i].Orders)
	}
	f.Orders = slices.Grow(f.Orders, n-len(f.Orders))
	for i := range parts {
		f.Orders = append(f.Orders, parts[i].Orders...)
		f.Skipped = append(f.Skipped, parts[i].Skipped...)
	}
	sortByTime(f.Orders)
}

// sortByTime sorts orders by trade time, orders of the same time staying in
// the order they had (what a stable sort gives): through a slice of
// (time, index) pairs sorted by both, since a stable sort of the orders
// themselves moves every large element many times (200,000 orders: about
// a tenth of an import's CPU).
func sortByTime(orders []Order) {
	type at struct {
		time int64
		i    int
	}
	keys := make([]at, len(orders))
	sorted := true
	for i := range orders {
		keys[i] = at{orders[i].Time, i}
		sorted = sorted && (i == 0 || orders[i-1].Time <= orders[i].Time)
	}
	if sorted {
		return
	}
	slices.SortFunc(keys, func(a, b at) int {
		if c := cmp.Compare(a.time, b.time); c != 0 {
			return c
		}
		return cmp.Compare(a.i, b.i)
	})
	out := make([]Order, len(orders))
	for j, k := range keys {
		out[j] = orders[k.i]
	}
	copy(orders, out)
}

// readStateFile reads the state file at p into f.Orders, and what it cannot
// read into f.Skipped.
func (f *Folder) readStateFile(fsys fs.FS, p string) {
	exchange, pair, ok := SplitStateName(path.Base(p))
	if !ok {
		f.skip(p, "name is not <exchange>-<QUOTE>-<BASE>-state.json")
		return
	}
	b, err := fs.ReadFile(fsys, p)
	if err != nil {
		f.skip(p, "%v", err)
		return
	}
	orders, err := decodeStateOrders(b)
	if err != nil {
		f.skip(p, "not a state file: %v", err)
		return
	}
	f.Orders = make([]Order, 0, len(orders))
	for i, o := range orders {
		order, err := o.order(exchange, pair)
		if err != nil {
			f.skip(p, "order %d: %s", i, domain.ErrorMessage(err))
			continue
		}
		f.Orders = append(f.Orders, order)
	}
}

// decodedOrder is one entry of a state file's orders: decoded, or the
// reason it is not an order object.
type decodedOrder struct {
	stateOrder
	err error
}

// decodeStateOrders decodes a state file's orders in one pass when every
// entry is an order object, and entry by entry otherwise, so that one bad
// entry costs only itself.
func decodeStateOrders(b []byte) ([]decodedOrder, error) {
	// The plain shape Gunbot writes is read without reflection: at
	// 200,000 orders encoding/json was a tenth of an import's CPU.
	if orders, ok := scanStateOrders(b); ok {
		return orders, nil
	}
	return decodeStateOrdersJSON(b)
}

// decodeStateOrdersJSON is decodeStateOrders through encoding/json alone:
// every shape scanStateOrders does not take, and its tests' reference.
func decodeStateOrdersJSON(b []byte) ([]decodedOrder, error) {
	var whole struct {
		Orders []stateOrder `json:"orders"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if dec.Decode(&whole) == nil && len(bytes.TrimSpace(b[dec.InputOffset():])) == 0 {
		out := make([]decodedOrder, len(whole.Orders))
		for i, o := range whole.Orders {
			out[i].stateOrder = o
		}
		return out, nil
	}
	var raw struct {
		Orders []json.RawMessage `json:"orders"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	out := make([]decodedOrder, len(raw.Orders))
	for i, r := range raw.Orders {
		dec := json.NewDecoder(bytes.NewReader(r))
		dec.UseNumber()
		if err := dec.Decode(&out[i].stateOrder); err != nil {
			out[i].err = domain.Errorf(domain.EINVALID, "not an order object: %v", err)
		}
	}
	return out, nil
}

// SplitStateName splits a state file's name,
// "<exchange>-<QUOTE>-<BASE>-state.json".
func SplitStateName(name string) (exchange, pair string, ok bool) {
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

// The ranges of imported orders' ids (OrderID, Order.LegacyID).
const (
	orderIDBase       = domain.ImportedOrderIDs
	legacyOrderIDBase = int64(1) << 52
	orderIDHashBits   = 19
)

// OrderID returns the id an import gives an order that traded at ms and
// whose fields hash to sum: 2^51 + (the trade's second since the epoch <<
// 19 | 19 bits of sum), in [2^51, 2^52). Ids of orders appended in
// trade-time order increase, so the store's stream index grows at its end:
// with the hash alone (LegacyID), every order rewrote an index page at a
// random place, a fifth of an import's time at 200,000 orders. Two orders
// traded in the same second share an id with a chance of 2^-19; the
// import then gives the later one the next id that is free (cmd/tradeledger).
func OrderID(ms int64, sum [32]byte) int64 {
	sec := uint64(ms/1000) << orderIDHashBits
	h := binary.BigEndian.Uint64(sum[:8]) & (1<<orderIDHashBits - 1)
	return orderIDBase + int64((sec|h)&uint64(orderIDBase-1))
}

// IsLegacyOrderID reports whether id is in the range versions before
// 2026-11-26 gave imported orders (Order.LegacyID).
func IsLegacyOrderID(id int64) bool {
	return id >= legacyOrderIDBase && id < 2*legacyOrderIDBase
}

// order checks a state file's entry (an EINVALID error says what is wrong)
// and returns the order it records.
func (o *decodedOrder) order(exchange, pair string) (Order, error) {
	if o.err != nil {
		return Order{}, o.err
	}
	if o.Pair != "" && o.Pair != pair {
		return Order{}, domain.Errorf(domain.EINVALID, "pair %q does not match the file's pair %s", o.Pair, pair)
	}
	side := domain.Side(strings.ToLower(o.Type))
	if side != domain.Buy && side != domain.Sell {
		return Order{}, domain.Errorf(domain.EINVALID, "type %q is neither buy nor sell", o.Type)
	}
	ms, err := strconv.ParseInt(o.Time.String(), 10, 64)
	if err != nil || ms <= 0 {
		return Order{}, domain.Errorf(domain.EINVALID, "time %q is not a timestamp in ms", o.Time)
	}
	if ms < 1e11 { // seconds, not milliseconds
		ms *= 1000
	}
	rate, err1 := decimal.ParseDecimal(o.Rate.String())
	amount, err2 := decimal.ParseDecimal(o.Amount.String())
	if err1 != nil || err2 != nil || rate.Sign() <= 0 || amount.Sign() <= 0 {
		return Order{}, domain.Errorf(domain.EINVALID, "rate %q and amount %q must be positive numbers", o.Rate, o.Amount)
	}
	srcID := ""
	switch v := o.ID.(type) {
	case string:
		srcID = v
	case json.Number:
		srcID = v.String()
	case nil:
	default:
		return Order{}, domain.Errorf(domain.EINVALID, "id must be a number or a string")
	}
	if _, _, err := domain.SplitPair(pair); err != nil {
		return Order{}, err
	}
	key := []string{exchange, pair, srcID, strconv.FormatInt(ms, 10), string(side), rate.String(), amount.String()}
	sum := sha256.Sum256([]byte(strings.Join(key, "\x00")))
	legacy := legacyOrderIDBase + int64(binary.BigEndian.Uint64(sum[:8])&(uint64(legacyOrderIDBase)-1))
	return Order{Exchange: exchange, Pair: pair, Side: side, Time: ms, Rate: rate, Amount: amount, SourceID: srcID,
		ID: OrderID(ms, sum), LegacyID: legacy}, nil
}
