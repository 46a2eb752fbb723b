package transparency_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/audit"
	"github.com/tradeledger/tradeledger/eventstore/storetest"
	"github.com/tradeledger/tradeledger/eventstore/transparency"
)

// appendRaw appends one event whose data is exactly data (the store
// compacts it, nothing more: '<' stays '<').
func (e *logEnv) appendRaw(stream, data string) {
	e.t.Helper()
	ev := domain.NewEvent(e.clock, "Raw", nil)
	ev.Data = json.RawMessage(data)
	if _, err := e.store.Append(context.Background(), stream, domain.Any, ev); err != nil {
		e.t.Fatal(err)
	}
}

// An order's bundle checks with the verifier key alone; any change to
// it does not.
func TestOrderBundle(t *testing.T) {
	ctx := context.Background()
	e := newLogEnv(t)
	e.append(20)
	e.appendRaw("order-1", `{"note": "<b>&</b>", "price":"1.50"}`)
	e.append(5)
	e.appendRaw("order-1", `{"after":1}`)
	var buf bytes.Buffer
	// No checkpoint covers the order yet: the bundle issues one.
	if err := e.log.WriteOrderBundle(ctx, 1, &buf); err != nil {
		t.Fatal(err)
	}
	bundle := buf.Bytes()
	st, err := transparency.VerifyBundle(bundle, e.key.VerifierKey())
	if err != nil {
		t.Fatalf("bundle does not check: %v\n%s", err, bundle)
	}
	events := storetest.ReadAll(t, e.store.ReadStream(ctx, "order-1", 0, 0))
	if len(st.Events) != len(events) || st.Order != 1 || st.Checkpoint.Size != 27 {
		t.Fatalf("statement: %d events of order %d against %d records, want %d events against 27", len(st.Events), st.Order, st.Checkpoint.Size, len(events))
	}
	if s := st.Sentence(); !strings.Contains(s, "order 1") || !strings.Contains(s, st.Checkpoint.Origin) || !strings.Contains(s, "not covered") {
		t.Fatalf("sentence: %s", s)
	}
	// The events are the stored ones, data bytes included.
	if !bytes.Contains(bundle, []byte(`"<b>&</b>"`)) {
		t.Fatalf("bundle does not carry the stored data bytes:\n%s", bundle)
	}
	other, _ := transparency.GenerateKey(nil)
	otherKey, _ := transparency.ParseKey(other)
	// rebundle edits the bundle s decoded and returns it encoded again.
	rebundle := func(edit func(b *transparency.Bundle)) func(string) string {
		return func(s string) string {
			var b transparency.Bundle
			json.Unmarshal([]byte(s), &b)
			edit(&b)
			var out bytes.Buffer
			b.Encode(&out)
			return out.String()
		}
	}
	cases := []struct {
		name string
		edit func(string) string
		key  string
		want string
	}{
		{"another key", func(s string) string { return s }, otherKey.VerifierKey(), "signature"},
		{"edited data", func(s string) string { return strings.Replace(s, `"1.50"`, `"1.05"`, 1) }, "", "does not match its contents"},
		{"edited data re-hashed", rebundle(func(b *transparency.Bundle) {
			for i := range b.Events {
				ev := &b.Events[i].Event
				if bytes.Contains(ev.Data, []byte("1.50")) {
					var compact bytes.Buffer
					json.Compact(&compact, bytes.Replace(ev.Data, []byte("1.50"), []byte("1.05"), 1))
					ev.Data = compact.Bytes()
					ev.Hash = domain.ComputeHash(ev)
				}
			}
		}), "", "not in the checkpoint's tree"},
		{"an event left out", rebundle(func(b *transparency.Bundle) { b.Events = b.Events[1:] }), "", "from version 0"},
		{"another proof", rebundle(func(b *transparency.Bundle) {
			b.Events[0].Proof, b.Events[1].Proof = b.Events[1].Proof, b.Events[0].Proof
		}), "", "not in the checkpoint's tree"},
		{"not a bundle", func(string) string { return `{"format":"x"}` }, "", "format"},
	}
	for _, c := range cases {
		key := c.key
		if key == "" {
			key = e.key.VerifierKey()
		}
		if _, err := transparency.VerifyBundle([]byte(c.edit(string(bundle))), key); domain.ErrorCode(err) != domain.EINVALID || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%s: %v, want EINVALID saying %q", c.name, err, c.want)
		}
	}
	if _, err := e.log.OrderBundle(ctx, 99); domain.ErrorCode(err) != domain.ENOTFOUND {
		t.Fatalf("bundle of an unknown order: %v, want ENOTFOUND", err)
	}
}

// VerifySince checks the events after a checkpoint and the consistency
// with it, and proves each continued stream's head against it.
func TestVerifySince(t *testing.T) {
	ctx := context.Background()
	e := newLogEnv(t)
	e.append(200)
	c, _, err := e.log.Issue(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	cp, _ := transparency.OpenCheckpoint([]byte(c.Note), e.key.VerifierKey())
	e.append(150)
	sum, err := transparency.VerifySince(ctx, e.store, e.store, cp, audit.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !sum.OK() || sum.From != 200 || sum.To != 351 || sum.Verify.Events != 151 || sum.Linked != 6 {
		t.Fatalf("summary %+v (problem %q, faults %v)", sum, sum.Problem, sum.Verify.Faults)
	}
	ref := storetest.NewRefTree(t, storetest.ReadAll(t, e.store.ReadAll(ctx, 0, 0)))
	if sum.Root != ref.Root(t, 351) || tlog.CheckTree(sum.Consistency, 351, sum.Root, 200, cp.Root) != nil {
		t.Fatal("root or consistency proof is not tlog's")
	}
	// A checkpoint of the whole tree: nothing after it, still consistent.
	c, _, _ = e.log.Issue(ctx, true)
	last, _ := transparency.OpenCheckpoint([]byte(c.Note), e.key.VerifierKey())
	if sum, err := transparency.VerifySince(ctx, e.store, e.store, last, audit.VerifyOptions{}); err != nil || !sum.OK() || sum.Verify.Events != 1 {
		t.Fatalf("since the last checkpoint: %+v (%v)", sum, err)
	}
	// A checkpoint of another tree (a fork signed with the same key).
	fork := transparency.Checkpoint{Origin: cp.Origin, Size: 200, Root: tlog.RecordHash([]byte("fork"))}
	if sum, err := transparency.VerifySince(ctx, e.store, e.store, fork, audit.VerifyOptions{}); err != nil || sum.OK() || !strings.Contains(sum.Problem, "rewritten") {
		t.Fatalf("since a forked checkpoint: %+v (%v)", sum, err)
	}
	big := transparency.Checkpoint{Origin: cp.Origin, Size: 10_000, Root: cp.Root}
	if sum, _ := transparency.VerifySince(ctx, e.store, e.store, big, audit.VerifyOptions{}); sum.OK() || !strings.Contains(sum.Problem, "cut") {
		t.Fatalf("since a larger checkpoint: %+v", sum)
	}
}

// Roots rebuilt from the events check a checkpoint only at its size, and
// only with its root.
func TestRootsCheck(t *testing.T) {
	ctx := context.Background()
	e := newLogEnv(t)
	e.append(50)
	events := storetest.ReadAll(t, e.store.ReadAll(ctx, 0, 0))
	ref := storetest.NewRefTree(t, events)
	r := transparency.NewRoots(0, 17, 50)
	for i := range events {
		r.Add([]domain.Hash{domain.ComputeHash(&events[i])})
	}
	if h, ok := r.Root(17); !ok || h != ref.Root(t, 17) {
		t.Fatal("root of 17 is not tlog's")
	}
	if err := r.Check(transparency.Checkpoint{Size: 50, Root: ref.Root(t, 50)}); err != nil {
		t.Fatal(err)
	}
	if err := r.Check(transparency.Checkpoint{Size: 50, Root: ref.Root(t, 49)}); err == nil || !strings.Contains(err.Error(), "changed") {
		t.Fatalf("wrong root: %v", err)
	}
	if err := r.Check(transparency.Checkpoint{Size: 51, Root: ref.Root(t, 50)}); err == nil || !strings.Contains(err.Error(), "cut") {
		t.Fatalf("larger checkpoint: %v", err)
	}
}

// TestOrderBundleSignsOnce: 16 concurrent bundles of an order that no
// checkpoint covers yet sign one checkpoint between them, not one each
// (any read-scope token may ask for bundles: the signatures must not grow
// with the requests), and all are proven against it.
func TestOrderBundleSignsOnce(t *testing.T) {
	ctx := context.Background()
	e := newLogEnv(t)
	e.append(20)
	e.appendRaw("order-1", `{"a":1}`)
	count := func() int {
		return len(storetest.ReadAll(t, e.store.ReadStream(ctx, domain.StreamCheckpoints, 0, 0)))
	}
	before := count()
	var wg sync.WaitGroup
	notes := make([]string, 16)
	errs := make([]error, 16)
	for i := range notes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, err := e.log.OrderBundle(ctx, 1)
			notes[i], errs[i] = b.Checkpoint, err
		}()
	}
	wg.Wait()
	for i := range notes {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if notes[i] != notes[0] {
			t.Fatalf("bundle %d is proven against another checkpoint", i)
		}
	}
	if signed := count() - before; signed != 1 {
		t.Fatalf("16 concurrent bundles signed %d checkpoints, want 1", signed)
	}
}
