package engine

import (
	"sync"

	"github.com/tradeledger/tradeledger/domain"
)

// System is whether trading is on, as the log and the configuration say:
// a projection of the system stream (SystemStarted, SystemStopped), so a
// restarted process resumes what the log says, plus the exchanges with an
// enabled pair. The Scheduler cycles only while it is started; the Trader
// accepts an order only for an exchange that IsCycling (the spec's
// precondition). Both read it; it reads neither.
type System struct {
	// Config is the configuration (which pairs are enabled).
	Config ConfigSource
	// Exchange returns the connector for an exchange name; an exchange
	// without one is not cycling.
	Exchange func(name string) (domain.Exchange, error)

	mu      sync.RWMutex
	running bool
	starts  uint64 // SystemStarted events applied: the scheduler makes every pair due after one

	// activeMu guards the exchanges with an enabled pair, derived from
	// the configuration of version activeVersion (IsCycling's cache).
	activeMu      sync.Mutex
	active        map[string]bool
	activeVersion int64
	activeValid   bool
}

// Name implements projections.Projection.
func (s *System) Name() string { return "system" }

// Apply implements projections.Projection: SystemStarted and SystemStopped
// of the system stream switch trading on and off.
func (s *System) Apply(e *domain.Event) error {
	if e.Stream != domain.StreamSystem {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch e.Type {
	case domain.TypeSystemStarted:
		s.running = true
		s.starts++
	case domain.TypeSystemStopped:
		s.running = false
	}
	return nil
}

// Running reports whether the log says the system is started. A nil
// System is stopped.
func (s *System) Running() bool {
	running, _ := s.state()
	return running
}

// state returns whether the system is started and how many starts the log
// had so far.
func (s *System) state() (running bool, starts uint64) {
	if s == nil {
		return false, 0
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.running, s.starts
}

// IsCycling reports whether at least one pair of exchange is cycling: the
// system is started, the configuration has an enabled pair on exchange and
// a connector for it exists. The trader refuses orders otherwise.
//
// It is on the order placement path, so the set of exchanges with an
// enabled pair is cached while the configuration's version is unchanged
// (see VersionedConfig) instead of rebuilding the configuration per order.
func (s *System) IsCycling(exchange string) bool {
	if !s.Running() || s.Config == nil || s.Exchange == nil {
		return false
	}
	if !s.activeExchanges()[exchange] {
		return false
	}
	_, err := s.Exchange(exchange)
	return err == nil
}

// activeExchanges returns the exchanges with an enabled pair. The map is
// never changed once returned.
func (s *System) activeExchanges() map[string]bool {
	vc, versioned := s.Config.(VersionedConfig)
	var version int64
	if versioned {
		version = vc.Version() // before Current: a change in between only looks stale
		s.activeMu.Lock()
		if s.activeValid && s.activeVersion == version {
			active := s.active
			s.activeMu.Unlock()
			return active
		}
		s.activeMu.Unlock()
	}
	active := map[string]bool{}
	for _, p := range s.Config.Current().Pairs() {
		if p.Enabled {
			active[p.Exchange] = true
		}
	}
	if versioned {
		s.activeMu.Lock()
		s.active, s.activeVersion, s.activeValid = active, version, true
		s.activeMu.Unlock()
	}
	return active
}
