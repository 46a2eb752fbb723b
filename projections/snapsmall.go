package projections

import (
	"encoding/json"
	"maps"
	"slices"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/snap"
)

// Snapshots of the small read models (Snapshotter): each Freeze copies the
// state under the read lock (a handful of entries, or maps of values that
// are replaced, never changed in place) and encodes the copy with its maps
// in key order.

// SnapshotVersion implements Snapshotter.
func (p *Password) SnapshotVersion() uint32 { return 1 }

// Freeze implements Snapshotter.
func (p *Password) Freeze() func(*snap.Encoder) {
	p.mu.RLock()
	hash, gen, ok, failed := p.hash, p.generation, p.succeeded, p.failed
	p.mu.RUnlock()
	return func(e *snap.Encoder) {
		e.Text(hash)
		e.Varint(gen)
		e.Varint(ok)
		e.Varint(failed)
	}
}

// Load implements Snapshotter.
func (p *Password) Load(d *snap.Decoder) (func(), error) {
	hash, gen, ok, failed := d.Text(), d.Varint(), d.Varint(), d.Varint()
	if err := d.Err(); err != nil {
		return nil, err
	}
	return func() {
		p.mu.Lock()
		p.hash, p.generation, p.succeeded, p.failed = hash, gen, ok, failed
		p.mu.Unlock()
	}, nil
}

// SnapshotVersion implements Snapshotter.
func (t *Tokens) SnapshotVersion() uint32 { return 1 }

// Freeze implements Snapshotter. A name's latest token is usually the one
// its id maps to (then only its id is written), unless a later token of
// the same id replaced it there.
func (t *Tokens) Freeze() func(*snap.Encoder) {
	t.mu.RLock()
	byID := make(map[string]TokenInfo, len(t.byID))
	for id, info := range t.byID {
		byID[id] = *info
	}
	type named struct {
		info   TokenInfo
		shared bool // the same token as byID's of its id
	}
	byName := make(map[string]named, len(t.byName))
	for name, info := range t.byName {
		byName[name] = named{*info, t.byID[info.ID] == info}
	}
	t.mu.RUnlock()
	return func(e *snap.Encoder) {
		e.Len(len(byID))
		for _, id := range slices.Sorted(maps.Keys(byID)) {
			encodeToken(e, byID[id])
		}
		e.Len(len(byName))
		for _, name := range slices.Sorted(maps.Keys(byName)) {
			n := byName[name]
			e.Text(name)
			e.Bool(n.shared)
			if n.shared {
				e.Text(n.info.ID)
			} else {
				encodeToken(e, n.info)
			}
		}
	}
}

func encodeToken(e *snap.Encoder, info TokenInfo) {
	e.Text(info.Name)
	e.Text(string(info.Scope))
	e.Text(info.ID)
	e.Varint(info.Created.UnixMilli())
	e.Varint(info.Expires.UnixMilli())
	e.Bool(info.Revoked)
}

func decodeToken(d *snap.Decoder) *TokenInfo {
	return &TokenInfo{Name: d.Text(), Scope: domain.Scope(d.Text()), ID: d.Text(),
		Created: time.UnixMilli(d.Varint()).UTC(), Expires: time.UnixMilli(d.Varint()).UTC(), Revoked: d.Bool()}
}

// Load implements Snapshotter.
func (t *Tokens) Load(d *snap.Decoder) (func(), error) {
	byID := map[string]*TokenInfo{}
	for range d.Len(6) {
		info := decodeToken(d)
		byID[info.ID] = info
	}
	byName := map[string]*TokenInfo{}
	for range d.Len(2) {
		name := d.Text()
		if d.Bool() {
			id := d.Text()
			info := byID[id]
			if info == nil && d.Err() == nil {
				d.Failf("token %q of name %q is not among the tokens", id, name)
			}
			byName[name] = info
		} else {
			byName[name] = decodeToken(d)
		}
	}
	if err := d.Err(); err != nil {
		return nil, err
	}
	return func() {
		t.mu.Lock()
		t.byID, t.byName = byID, byName
		t.mu.Unlock()
	}, nil
}

// SnapshotVersion implements Snapshotter.
func (p *Config) SnapshotVersion() uint32 { return 1 }

// Freeze implements Snapshotter. A Config is never changed in place (each
// change makes a new one), nor is an exchange's credentials map.
func (p *Config) Freeze() func(*snap.Encoder) {
	p.mu.RLock()
	base, version, creds := p.base, p.version, maps.Clone(p.creds)
	p.mu.RUnlock()
	return func(e *snap.Encoder) {
		e.Bool(!base.IsZero())
		if !base.IsZero() {
			b, err := base.MarshalJSON()
			if err != nil {
				e.Fail(err)
				return
			}
			e.Bytes(b)
		}
		e.Varint(version)
		snap.TextMap(e, creds, func(m map[string]string) { encodeStrings(e, m) })
	}
}

// Load implements Snapshotter.
func (p *Config) Load(d *snap.Decoder) (func(), error) {
	var base domain.Config
	if d.Bool() {
		c, err := domain.ParseConfig(d.Bytes())
		if err != nil && d.Err() == nil {
			d.Fail(err)
		}
		base = c
	}
	version := d.Varint()
	creds := decodeTextMap(d, 2, func() map[string]string { return decodeStrings(d) })
	if err := d.Err(); err != nil {
		return nil, err
	}
	return func() {
		p.mu.Lock()
		p.base, p.version, p.creds = base, version, creds
		p.mu.Unlock()
	}, nil
}

// encodeStrings writes a map of strings in key order.
func encodeStrings(e *snap.Encoder, m map[string]string) {
	snap.TextMap(e, m, e.Text)
}

func decodeStrings(d *snap.Decoder) map[string]string { return decodeTextMap(d, 2, d.Text) }

// decodeTextMap reads a map snap.TextMap wrote: its length (each entry
// minSize bytes at least), then each key and the value value reads.
func decodeTextMap[V any](d *snap.Decoder, minSize int, value func() V) map[string]V {
	n := d.Len(minSize)
	m := make(map[string]V, n)
	for range n {
		k := d.Text()
		m[k] = value()
	}
	return m
}

// SnapshotVersion implements Snapshotter.
func (p *Files) SnapshotVersion() uint32 { return 1 }

// Freeze implements Snapshotter. A file's content is never changed once
// stored (a write stores a new one), nor is a balances slice.
func (p *Files) Freeze() func(*snap.Encoder) {
	p.mu.RLock()
	files := make(map[string]map[string]storedFile, len(p.files))
	for kind, m := range p.files {
		files[kind] = maps.Clone(m)
	}
	versions, balances := maps.Clone(p.versions), maps.Clone(p.balances)
	p.mu.RUnlock()
	return func(e *snap.Encoder) {
		snap.TextMap(e, files, func(m map[string]storedFile) {
			snap.TextMap(e, m, func(f storedFile) {
				e.Bytes(f.content)
				e.Text(f.sha256)
			})
		})
		snap.TextMap(e, versions, e.Varint)
		snap.TextMap(e, balances, func(b []domain.AssetBalance) { encodeAssetBalances(e, b) })
	}
}

// Load implements Snapshotter.
func (p *Files) Load(d *snap.Decoder) (func(), error) {
	files := decodeTextMap(d, 2, func() map[string]storedFile {
		return decodeTextMap(d, 3, func() storedFile {
			return storedFile{content: json.RawMessage(d.Bytes()), sha256: d.Text()}
		})
	})
	versions := decodeTextMap(d, 2, d.Varint)
	balances := decodeTextMap(d, 2, func() []domain.AssetBalance { return decodeAssetBalances(d) })
	if err := d.Err(); err != nil {
		return nil, err
	}
	return func() {
		p.mu.Lock()
		p.files, p.versions, p.balances = files, versions, balances
		p.mu.Unlock()
	}, nil
}

func encodeAssetBalances(e *snap.Encoder, bs []domain.AssetBalance) {
	e.Bool(bs == nil)
	e.Len(len(bs))
	for _, b := range bs {
		e.Text(b.Asset)
		e.Decimal(b.Available)
		e.Decimal(b.OnOrder)
	}
}

func decodeAssetBalances(d *snap.Decoder) []domain.AssetBalance {
	isNil := d.Bool()
	n := d.Len(3)
	if isNil {
		return nil
	}
	bs := make([]domain.AssetBalance, n)
	for i := range bs {
		bs[i] = domain.AssetBalance{Asset: d.Text(), Available: d.Decimal(), OnOrder: d.Decimal()}
	}
	return bs
}

// SnapshotVersion implements Snapshotter.
func (b *Balances) SnapshotVersion() uint32 { return 1 }

// Freeze implements Snapshotter (an exchange's balances are replaced, not
// changed in place).
func (b *Balances) Freeze() func(*snap.Encoder) {
	b.mu.RLock()
	by := maps.Clone(b.by)
	b.mu.RUnlock()
	return func(e *snap.Encoder) {
		snap.TextMap(e, by, func(b domain.BalancesObserved) {
			e.Text(b.Exchange)
			encodeAssetBalances(e, b.Balances)
		})
	}
}

// Load implements Snapshotter.
func (b *Balances) Load(d *snap.Decoder) (func(), error) {
	by := decodeTextMap(d, 3, func() domain.BalancesObserved {
		return domain.BalancesObserved{Exchange: d.Text(), Balances: decodeAssetBalances(d)}
	})
	if err := d.Err(); err != nil {
		return nil, err
	}
	return func() {
		b.mu.Lock()
		b.by = by
		b.mu.Unlock()
	}, nil
}
