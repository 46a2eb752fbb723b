package projections

import "github.com/tradeledger/tradeledger/domain/snap"

// StateReplacer is a Snapshotter whose state can be replaced in place while
// it serves: ReplaceState is Load for a projection that has applied events
// — its install replaces the whole state, what is cached of the old one
// dropped —, so that serve can switch the projection to the state rebuilt
// from the log when the snapshot it started from proves wrong
// (Runner.Replace). The read models of this package are; a projection
// that is not makes the switch refuse, and serve then says to restart it.
type StateReplacer interface {
	Snapshotter
	ReplaceState(d *snap.Decoder) (install func(), err error)
}

// ReplaceState implements StateReplacer: Load, and the JSON pages cached
// of the old state dropped (the order records' blocks go with their
// books; the cache's accounting of them here).
func (l *Ledger) ReplaceState(d *snap.Decoder) (func(), error) {
	install, err := l.Load(d)
	if err != nil {
		return nil, err
	}
	return func() {
		install()
		c := &l.pages
		c.mu.Lock()
		c.size, c.fifo, c.head = 0, nil, 0
		c.mu.Unlock()
	}, nil
}

// ReplaceState implements StateReplacer (Load's install sets every field).
func (l *OrderList) ReplaceState(d *snap.Decoder) (func(), error) { return l.Load(d) }

// ReplaceState implements StateReplacer (Load's install sets every field).
func (p *Password) ReplaceState(d *snap.Decoder) (func(), error) { return p.Load(d) }

// ReplaceState implements StateReplacer (Load's install sets every field).
func (t *Tokens) ReplaceState(d *snap.Decoder) (func(), error) { return t.Load(d) }

// ReplaceState implements StateReplacer (Load's install sets every field).
func (p *Config) ReplaceState(d *snap.Decoder) (func(), error) { return p.Load(d) }

// ReplaceState implements StateReplacer (Load's install sets every field).
func (p *Files) ReplaceState(d *snap.Decoder) (func(), error) { return p.Load(d) }

// ReplaceState implements StateReplacer (Load's install sets every field).
func (b *Balances) ReplaceState(d *snap.Decoder) (func(), error) { return b.Load(d) }
