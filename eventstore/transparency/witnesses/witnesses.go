// Package witnesses sends the log's checkpoints to the witnesses its
// operator lists (c2sp.org/tlog-witness) and records their answers in the
// checkpoints stream: each cosignature, verified with the witness's key
// first (CheckpointCosigned), and each refusal of a checkpoint as
// inconsistent with what the witness cosigned before — a fork, a rewrite,
// a cut (WitnessRefused). A witness that is down is retried with
// jittered, growing waits on the injected clock; nothing here is on the
// path of a trade or of a checkpoint's signing.
package witnesses

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/eventstore"
	"github.com/tradeledger/tradeledger/eventstore/transparency/cosign"
)

// Defaults of a Client.
const (
	// DefaultMinBackoff is the wait after a witness's first failure;
	// each failure in a row doubles it, up to DefaultMaxBackoff.
	DefaultMinBackoff = time.Second
	DefaultMaxBackoff = 5 * time.Minute
	// DefaultTimeout bounds one add-checkpoint request.
	DefaultTimeout = 10 * time.Second
	// maxAnswer bounds an answer's body read.
	maxAnswer = 64 << 10
	// maxConflicts is how many 409 answers in a row one attempt follows.
	maxConflicts = 3
)

// Witness is one witness the log's checkpoints go to: its verifier key
// (cosignature/v1) and its submission prefix.
type Witness struct {
	Verifier *cosign.Verifier
	URL      string
}

// Name returns the witness's name.
func (w Witness) Name() string { return w.Verifier.Name() }

// Key returns the witness's verifier key.
func (w Witness) Key() string { return w.Verifier.String() }

// ParseWitness reads "VKEY URL": the witness's verifier key, a space, its
// submission prefix (http or https). The error names what is wrong.
func ParseWitness(s string) (Witness, error) {
	f := strings.Fields(s)
	if len(f) != 2 {
		return Witness{}, fmt.Errorf("witness %q: want 'VKEY URL' (the witness's verifier key, a space, its URL)", s)
	}
	v, err := cosign.NewVerifier(f[0])
	if err != nil {
		return Witness{}, err
	}
	u := strings.TrimSuffix(f[1], "/")
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return Witness{}, fmt.Errorf("witness %s: URL %q is not http(s)://…", v.Name(), f[1])
	}
	return Witness{Verifier: v, URL: u}, nil
}

// Log is what the client reads of the transparency log
// (transparency.Log).
type Log interface {
	// LatestSigned returns the last checkpoint as the log signed it.
	LatestSigned() (domain.CheckpointSigned, bool)
	// Witnesses returns the checkpoints stream's record of each witness,
	// by verifier key.
	Witnesses() map[string]domain.WitnessRecord
	// ProveConsistency returns the proof that the tree of from records is
	// a prefix of the tree of to records.
	ProveConsistency(ctx context.Context, from, to int64) (tlog.TreeProof, error)
}

// Client sends each new checkpoint of Log to every witness. Fill it
// (New), then Run it, or call Tick (tests, on a ManualClock).
type Client struct {
	Log       Log
	Witnesses []Witness
	// Commands records the answers in the checkpoints stream.
	Commands *eventstore.Commands
	// Clock times the retries.
	Clock domain.Clock
	// HTTP sends the requests (default: DefaultTimeout per request).
	HTTP *http.Client
	// Quorum is how many witnesses must cosign a checkpoint (≤ 0 or
	// more than there are: all of them); Status says how many are
	// missing.
	Quorum int
	// MinBackoff and MaxBackoff bound the waits after failures.
	MinBackoff, MaxBackoff time.Duration
	// Jitter returns a number in [0, 1) (default math/rand/v2): a wait
	// of d is d/2 + Jitter()·d/2.
	Jitter func() float64
	// OnError, when set, hears each failed attempt and refusal (the
	// service logs them).
	OnError func(w Witness, err error)

	states []*state
	wake   []chan struct{}
}

// state is the client's memory of one witness, beside the log's record.
type state struct {
	mu       sync.Mutex
	old      int64 // the size the witness said it holds (-1: take the log's record)
	failures int   // in a row
	next     time.Time
	lastErr  string
	lastTry  time.Time
}

// New returns a client of log for witnesses with default settings.
func New(log Log, witnesses []Witness, commands *eventstore.Commands, clock domain.Clock) *Client {
	c := &Client{Log: log, Witnesses: witnesses, Commands: commands, Clock: clock,
		HTTP: &http.Client{Timeout: DefaultTimeout}, MinBackoff: DefaultMinBackoff, MaxBackoff: DefaultMaxBackoff,
		Jitter: rand.Float64}
	for range witnesses {
		c.states = append(c.states, &state{old: -1})
		c.wake = append(c.wake, make(chan struct{}, 1))
	}
	return c
}

// Wake makes Run send the latest checkpoint now rather than at its next
// tick. It never blocks (transparency.Log.OnCheckpoint).
func (c *Client) Wake() {
	for _, ch := range c.wake {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// Tick gives every witness that has not cosigned the latest checkpoint,
// nor refused it, and whose wait after a failure is over, an attempt;
// the witnesses are asked at once, and Tick returns when all answered.
func (c *Client) Tick(ctx context.Context) {
	var wg sync.WaitGroup
	for i := range c.Witnesses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.step(ctx, i)
		}()
	}
	wg.Wait()
}

// Run sends each checkpoint to each witness until ctx ends: a goroutine
// per witness, woken by Wake and every tick, so that a slow witness
// holds up no other.
func (c *Client) Run(ctx context.Context, tick time.Duration) {
	var wg sync.WaitGroup
	for i := range c.Witnesses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(tick)
			defer t.Stop()
			for {
				c.step(ctx, i)
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				case <-c.wake[i]:
				}
			}
		}()
	}
	wg.Wait()
}

// due returns the checkpoint witness i should be sent now, if any, and
// the old size to send with it.
func (c *Client) due(i int) (cp domain.CheckpointSigned, old int64, ok bool) {
	cp, ok = c.Log.LatestSigned()
	if !ok {
		return cp, 0, false
	}
	w, st := c.Witnesses[i], c.states[i]
	rec := c.Log.Witnesses()[w.Key()]
	if co := rec.Cosigned; co != nil && co.Origin == cp.Origin && co.Size >= cp.Size {
		return cp, 0, false // cosigned it (or a later one)
	}
	if r := rec.Refused; r != nil && r.Origin == cp.Origin && r.Size == cp.Size && r.Root == cp.Root {
		return cp, 0, false // refused it: the next checkpoint is tried
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if c.Clock.Now().Before(st.next) {
		return cp, 0, false
	}
	old = st.old
	if old < 0 {
		old = 0
		if co := rec.Cosigned; co != nil && co.Origin == cp.Origin {
			old = co.Size
		}
	}
	return cp, old, true
}

// step makes one attempt for witness i when it is due: the request, the
// 409s it follows (up to maxConflicts), and the answer recorded.
func (c *Client) step(ctx context.Context, i int) {
	cp, old, ok := c.due(i)
	if !ok {
		return
	}
	w, st := c.Witnesses[i], c.states[i]
	var err error
	for range maxConflicts {
		if old > cp.Size {
			c.refused(ctx, i, cp, old, http.StatusConflict, fmt.Sprintf("the witness has cosigned %d records of %s, more than this log's %d: the log was cut, or another log signs under its key", old, cp.Origin, cp.Size))
			return
		}
		var proof tlog.TreeProof
		if old > 0 && old < cp.Size {
			if proof, err = c.Log.ProveConsistency(ctx, old, cp.Size); err != nil {
				c.failed(i, fmt.Errorf("consistency proof from %d to %d records: %w", old, cp.Size, err))
				return
			}
		}
		status, body, err := c.post(ctx, w, cosign.Request{OldSize: old, Proof: proof, Checkpoint: []byte(cp.Note)}.Body())
		switch {
		case err != nil:
			c.failed(i, err)
			return
		case status == http.StatusConflict:
			n, err := cosign.ReadSizeAnswer(body)
			if err != nil {
				c.failed(i, fmt.Errorf("409 without a size: %v", err))
				return
			}
			st.mu.Lock()
			st.old = n
			st.mu.Unlock()
			old = n
			continue
		case status == http.StatusUnprocessableEntity:
			c.refused(ctx, i, cp, old, status, "the witness refused it as inconsistent with the checkpoint of "+fmt.Sprint(old)+" records it cosigned: "+firstLine(body))
			return
		case status != http.StatusOK:
			c.failed(i, fmt.Errorf("answered %d: %s", status, firstLine(body)))
			return
		}
		c.cosigned(ctx, i, cp, body)
		return
	}
	c.failed(i, fmt.Errorf("answered 409 %d times in a row (its size keeps moving)", maxConflicts))
}

// post sends one add-checkpoint request.
func (c *Client) post(ctx context.Context, w Witness, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL+"/add-checkpoint", bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "text/plain; charset=utf-8")
	res, err := c.HTTP.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, maxAnswer))
	if err != nil {
		return 0, nil, fmt.Errorf("reading the answer: %w", err)
	}
	return res.StatusCode, b, nil
}

// cosigned checks a 200 answer's signature lines with the witness's key
// and records the cosignature.
func (c *Client) cosigned(ctx context.Context, i int, cp domain.CheckpointSigned, body []byte) {
	w, st := c.Witnesses[i], c.states[i]
	got, err := cosign.Cosigned(append([]byte(cp.Note), body...), []*cosign.Verifier{w.Verifier})
	if err != nil || len(got) == 0 {
		if err == nil {
			err = errors.New("no cosignature by its key in the answer")
		}
		c.failed(i, fmt.Errorf("answered 200 with no valid cosignature: %v", err))
		return
	}
	ev := domain.CheckpointCosigned{Origin: cp.Origin, Size: cp.Size, Root: cp.Root, Witness: w.Name(), Key: w.Key(), URL: w.URL,
		Time: got[0].Time.Unix(), Signature: got[0].Line}
	_, err = eventstore.Run(ctx, c.Commands, eventstore.Command[struct{}]{
		Stream: domain.StreamCheckpoints,
		Load:   func(context.Context) (struct{}, domain.ExpectedVersion, error) { return struct{}{}, domain.Any, nil },
		Decide: func(struct{}) ([]domain.Event, error) { return domain.DecideCheckpointCosigned(ev, c.Clock) },
	})
	if err != nil {
		c.failed(i, fmt.Errorf("recording its cosignature: %w", err))
		return
	}
	st.mu.Lock()
	st.old, st.failures, st.next, st.lastErr, st.lastTry = cp.Size, 0, time.Time{}, "", c.Clock.Now()
	st.mu.Unlock()
}

// refused records that witness i refused cp as inconsistent (it holds
// witnessSize records of the log).
func (c *Client) refused(ctx context.Context, i int, cp domain.CheckpointSigned, witnessSize int64, status int, reason string) {
	w, st := c.Witnesses[i], c.states[i]
	r := domain.WitnessRefused{Origin: cp.Origin, Size: cp.Size, Root: cp.Root, Witness: w.Name(), Key: w.Key(), URL: w.URL,
		WitnessSize: witnessSize, Status: status, Reason: reason}
	_, err := eventstore.Run(ctx, c.Commands, eventstore.Command[domain.WitnessRecord]{
		Stream: domain.StreamCheckpoints,
		Load: func(context.Context) (domain.WitnessRecord, domain.ExpectedVersion, error) {
			return c.Log.Witnesses()[w.Key()], domain.Any, nil
		},
		Decide: func(last domain.WitnessRecord) ([]domain.Event, error) {
			return domain.DecideWitnessRefused(last, r, c.Clock)
		},
	})
	st.mu.Lock()
	st.old, st.lastErr, st.lastTry = -1, reason, c.Clock.Now()
	st.mu.Unlock()
	if c.OnError != nil {
		c.OnError(w, fmt.Errorf("REFUSED checkpoint of %d records: %s", cp.Size, reason))
	}
	if err != nil {
		c.failed(i, fmt.Errorf("recording its refusal: %w", err))
	}
}

// failed notes a failed attempt and sets the next one after a jittered
// wait that doubles with each failure in a row.
func (c *Client) failed(i int, err error) {
	w, st := c.Witnesses[i], c.states[i]
	st.mu.Lock()
	st.failures++
	d := c.MinBackoff << min(st.failures-1, 30)
	if d > c.MaxBackoff || d <= 0 {
		d = c.MaxBackoff
	}
	d = d/2 + time.Duration(c.Jitter()*float64(d/2))
	now := c.Clock.Now()
	st.next, st.lastErr, st.lastTry = now.Add(d), err.Error(), now
	st.mu.Unlock()
	if c.OnError != nil {
		c.OnError(w, fmt.Errorf("%w (next attempt in %s)", err, d.Round(time.Millisecond)))
	}
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
