package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/tradeledger/tradeledger/cmd/benchab/loadgen"
)

// placementTrace records one measured placement run for -trace: serve's
// CPU profile (`perf record -g`, frame pointers, read with `perf report`)
// and each order's latency in due order, so that a tail can be told apart
// as a periodic stall (slow orders clustered in time) or a cost on every
// order (spread). Without -trace it does nothing.
type placementTrace struct {
	base string // DIR/<build>-<n>; "" when not tracing
	perf *exec.Cmd
	stat *exec.Cmd // perf stat: the syncs and writes counted
}

// startTrace starts perf on pid when -trace is set.
func (m *Main) startTrace(ctx context.Context, b *build, pid int) (*placementTrace, error) {
	if m.Trace == "" {
		return &placementTrace{}, nil
	}
	if err := os.MkdirAll(m.Trace, 0o755); err != nil {
		return nil, err
	}
	m.traced++
	t := &placementTrace{base: filepath.Join(m.Trace, fmt.Sprintf("%s-%d", b.short, m.traced))}
	t.perf = exec.CommandContext(ctx, "perf", "record", "-F", "997", "-g", "-p", fmt.Sprint(pid), "-o", t.base+".perf.data")
	t.perf.Stdout, t.perf.Stderr = os.Stderr, os.Stderr
	if err := t.perf.Start(); err != nil {
		return nil, fmt.Errorf("-trace: perf record: %w", err)
	}
	t.stat = exec.CommandContext(ctx, "perf", "stat", "-e", "syscalls:sys_enter_fsync,syscalls:sys_enter_fdatasync,syscalls:sys_enter_pwrite64,syscalls:sys_enter_futex",
		"-p", fmt.Sprint(pid), "-o", t.base+".stat")
	if err := t.stat.Start(); err != nil {
		return nil, fmt.Errorf("-trace: perf stat: %w", err)
	}
	return t, nil
}

// stop ends perf and writes r's latencies by due order, one a line: the
// call's index and its latency in ms.
func (t *placementTrace) stop(r loadgen.Result) error {
	if t.base == "" {
		return nil
	}
	for _, c := range []*exec.Cmd{t.perf, t.stat} {
		c.Process.Signal(syscall.SIGINT)
		c.Wait()
	}
	f, err := os.Create(t.base + ".lat")
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for i, d := range r.ByDue {
		fmt.Fprintf(w, "%d %.3f\n", i, float64(d.Microseconds())/1000)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// keepLog copies serve's log beside the trace.
func (t *placementTrace) keepLog(log string) error {
	if t.base == "" {
		return nil
	}
	data, err := os.ReadFile(log)
	if err != nil {
		return err
	}
	return os.WriteFile(t.base+".serve.log", data, 0o644)
}
