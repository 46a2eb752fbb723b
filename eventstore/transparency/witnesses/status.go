package witnesses

import (
	"time"

	"github.com/tradeledger/tradeledger/domain"
)

// Status is what the client says of the latest checkpoint and each
// witness (/healthz, the dashboard).
type Status struct {
	// Size is the latest checkpoint's (0 before the first); Cosigned how
	// many witnesses cosigned it, Quorum how many must, Missing how many
	// more are needed.
	Size                      int64
	Root                      string
	Cosigned, Quorum, Missing int
	Witnesses                 []WitnessStatus
}

// WitnessStatus is one witness as Status shows it.
type WitnessStatus struct {
	Name, Key, URL string
	// Size is the last checkpoint it cosigned (0: none), Time its
	// cosignature's timestamp.
	Size int64
	Time time.Time
	// Current reports whether it cosigned the latest checkpoint.
	Current bool
	// Error is its last failure ("" once it answered), NextAttempt when
	// it is tried again (zero: at the next checkpoint).
	Error       string
	NextAttempt time.Time
	// Refused is its refusal of a checkpoint as inconsistent since it last
	// cosigned one (nil: none): the log forked, was rewritten or cut.
	Refused *domain.WitnessRefused
}

// Status returns the client's view now.
func (c *Client) Status() Status {
	cp, ok := c.Log.LatestSigned()
	records := c.Log.Witnesses()
	s := Status{Quorum: c.quorum()}
	if ok {
		s.Size, s.Root = cp.Size, cp.Root
	}
	for i, w := range c.Witnesses {
		rec := records[w.Key()]
		ws := WitnessStatus{Name: w.Name(), Key: w.Key(), URL: w.URL, Refused: rec.Refused}
		if co := rec.Cosigned; co != nil {
			ws.Size, ws.Time = co.Size, time.Unix(co.Time, 0).UTC()
			ws.Current = ok && co.Origin == cp.Origin && co.Size == cp.Size && co.Root == cp.Root
		}
		if ws.Current {
			s.Cosigned++
		}
		st := c.states[i]
		st.mu.Lock()
		ws.Error, ws.NextAttempt = st.lastErr, st.next
		st.mu.Unlock()
		s.Witnesses = append(s.Witnesses, ws)
	}
	if ok {
		s.Missing = max(s.Quorum-s.Cosigned, 0)
	}
	return s
}

func (c *Client) quorum() int {
	if c.Quorum <= 0 || c.Quorum > len(c.Witnesses) {
		return len(c.Witnesses)
	}
	return c.Quorum
}
