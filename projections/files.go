package projections

import (
	"encoding/json"
	"sort"
	"strings"
	"sync"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
)

// Files is the read model of the auxiliary files (spec "Files"): the
// AutoConfig variable files, autoconfig.json and its backups, the custom
// editor file and the custom strategies, each the last FileWritten of its
// file-<kind>-<name> stream unless a FileDeleted followed; and the state
// files <exchange>-<pair>-state.json, which are not stored but derived, when
// asked for, from the Ledger's fills and the observed balances: the order
// log is folded once, by the Ledger, not once per read model.
type Files struct {
	mu       sync.RWMutex
	ledger   *Ledger
	files    map[string]map[string]storedFile // kind → name → file
	versions map[string]int64                 // file stream → last version
	balances map[string][]domain.AssetBalance // exchange → last observed
}

type storedFile struct {
	content json.RawMessage
	sha256  string
}

// NewFiles returns an empty Files projection whose state files come from
// ledger (which must be fed from the same log).
func NewFiles(ledger *Ledger) *Files {
	return &Files{
		ledger:   ledger,
		files:    map[string]map[string]storedFile{},
		versions: map[string]int64{},
		balances: map[string][]domain.AssetBalance{},
	}
}

// Name implements Projection.
func (p *Files) Name() string { return "files" }

// Apply implements Projection.
func (p *Files) Apply(e *domain.Event) error {
	switch e.Type {
	case domain.TypeFileWritten:
		var d domain.FileWritten
		if err := e.Decode(&d); err != nil {
			return err
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		p.versions[strings.Clone(e.Stream)] = e.Version // kept: not the replay batch's memory (Projection)
		m := p.files[d.Kind]
		if m == nil {
			m = map[string]storedFile{}
			p.files[d.Kind] = m
		}
		m[d.Name] = storedFile{content: append(json.RawMessage(nil), d.Content...), sha256: d.SHA256}
	case domain.TypeFileDeleted:
		var d domain.FileDeleted
		if err := e.Decode(&d); err != nil {
			return err
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		p.versions[strings.Clone(e.Stream)] = e.Version // kept: not the replay batch's memory (Projection)
		delete(p.files[d.Kind], d.Name)
	case domain.TypeBalancesObserved:
		var d domain.BalancesObserved
		if err := e.Decode(&d); err != nil {
			return err
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		p.balances[d.Exchange] = append([]domain.AssetBalance(nil), d.Balances...)
	}
	return nil
}

// List returns the names of kind's files, sorted. For state files these are
// the pairs with at least one filled order.
func (p *Files) List(kind string) []string {
	var names []string
	if kind == domain.FileState {
		for _, key := range p.ledger.FilledKeys() {
			exchange, pair, _ := domain.SplitPairKey(key)
			names = append(names, domain.StateFileName(exchange, pair))
		}
	} else {
		p.mu.RLock()
		for n := range p.files[kind] {
			names = append(names, n)
		}
		p.mu.RUnlock()
	}
	sort.Strings(names)
	if names == nil {
		names = []string{}
	}
	return names
}

// Get returns the content of a file (a JSON document; a JSON string for
// strategies), or ENOTFOUND.
func (p *Files) Get(kind, name string) (json.RawMessage, error) {
	if kind == domain.FileState {
		return p.state(name)
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	f, ok := p.files[kind][name]
	if !ok {
		return nil, domain.Errorf(domain.ENOTFOUND, "%s file %q not found", kind, name)
	}
	return append(json.RawMessage(nil), f.content...), nil
}

// Version returns the expected version for the next append to a file's
// stream: the last version, or domain.NoStream if the stream is empty.
func (p *Files) Version(kind, name string) domain.ExpectedVersion {
	p.mu.RLock()
	defer p.mu.RUnlock()
	v, ok := p.versions[domain.FileStream(kind, name)]
	if !ok {
		return domain.NoStream
	}
	return domain.ExpectedVersion(v)
}

// stateEntry is one order of a state file.
type stateEntry struct {
	Time   int64          `json:"time"`
	Pair   string         `json:"pair"`
	Type   domain.Side    `json:"type"`
	Rate   decimal.Number `json:"rate"`
	Amount decimal.Number `json:"amount"`
	ID     int64          `json:"id"`
	Cost   decimal.Number `json:"cost"`
}

type stateBalance struct {
	Available decimal.Number `json:"available"`
	OnOrder   decimal.Number `json:"onOrder"`
}

// state builds <exchange>-<pair>-state.json: orders with fills, newest
// first (rate is the average fill price, amount the filled quantity, cost
// their product summed over fills, time that of the last fill), and the
// exchange's last observed balances.
func (p *Files) state(name string) (json.RawMessage, error) {
	var exchange string
	var records []OrderRecord
	for _, key := range p.ledger.FilledKeys() {
		ex, pair, _ := domain.SplitPairKey(key)
		if domain.StateFileName(ex, pair) == name {
			exchange, records = ex, p.ledger.Orders(key)
			break
		}
	}
	// One entry per order: the Ledger keeps one record per fill.
	byID := map[int64]int{}
	entries := []stateEntry{}
	filled := []decimal.Decimal{}
	for _, r := range records {
		i, seen := byID[r.ID]
		if !seen {
			i = len(entries)
			byID[r.ID] = i
			entries = append(entries, stateEntry{Pair: r.Pair, Type: r.Type, ID: r.ID})
			filled = append(filled, decimal.Zero)
		}
		e := &entries[i]
		e.Time = max(e.Time, r.Time)
		filled[i] = filled[i].Add(r.Amount)
		e.Cost = decimal.Number(decimal.Decimal(e.Cost).Add(r.Rate.Mul(r.Amount)))
	}
	for i := range entries {
		entries[i].Amount = decimal.Number(filled[i])
		entries[i].Rate = decimal.Number(decimal.Decimal(entries[i].Cost).Div(filled[i]))
	}
	if len(entries) == 0 {
		return nil, domain.Errorf(domain.ENOTFOUND, "state file %q not found", name)
	}
	sort.Slice(entries, func(i, j int) bool {
		if entries[i].Time != entries[j].Time {
			return entries[i].Time > entries[j].Time
		}
		return entries[i].ID > entries[j].ID
	})
	balances := map[string]stateBalance{}
	p.mu.RLock()
	for _, b := range p.balances[exchange] {
		balances[b.Asset] = stateBalance{Available: decimal.Number(b.Available), OnOrder: decimal.Number(b.OnOrder)}
	}
	p.mu.RUnlock()
	b, err := json.Marshal(struct {
		Orders   []stateEntry            `json:"orders"`
		Balances map[string]stateBalance `json:"balances"`
	}{entries, balances})
	if err != nil {
		return nil, err
	}
	return b, nil
}
