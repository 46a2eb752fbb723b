package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
)

// clients is how many clients place orders at once.
const clients = 64

// childEnv is the environment of the builds' processes: this one's without
// TRADELEDGER_* settings (which would change what is measured), with a
// fixed master key.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TRADELEDGER_") {
			env = append(env, kv)
		}
	}
	return append(env, "TRADELEDGER_MASTER_KEY="+strings.Repeat("ab", 32))
}

// command runs b's tradeledger with args and returns its standard output,
// or an error with its standard error.
func (m *Main) command(ctx context.Context, b *build, args ...string) (string, error) {
	r, err := m.timed(ctx, b, args...)
	return r.out, err
}

// run is a command's output, its wall time and its CPU (user and system).
type run struct {
	out       string
	wall, cpu time.Duration
}

// timed runs b's tradeledger with args, timing it from its start to its
// exit.
func (m *Main) timed(ctx context.Context, b *build, args ...string) (run, error) {
	cmd := exec.CommandContext(ctx, b.bin, args...)
	cmd.Env = childEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := run{out: stdout.String(), wall: time.Since(start)}
	if cmd.ProcessState != nil {
		r.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if err != nil {
		return r, fmt.Errorf("%s %s: %v\n%s%s", b.short, strings.Join(args, " "), err, truncate(stdout.String(), 2000), truncate(stderr.String(), 2000))
	}
	return r, nil
}

// server is a running serve.
type server struct {
	cmd      *exec.Cmd
	url      string
	ready    time.Duration // from its start to the first 200 of /readyz
	readyCPU time.Duration // its CPU then
	done     chan error
	stopped  bool
	client   *http.Client
	log      string
}

// serve starts b's serve on data (with args) on a free loopback port, no
// files listener and, where it has them, no snapshots written, and waits
// until /readyz answers 200.
func (m *Main) serve(ctx context.Context, b *build, data string, args ...string) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	all := []string{"serve", "--data", data, "--listen", "127.0.0.1:" + strconv.Itoa(port), "--files-listen", ""}
	if b.snapshots {
		all = append(all, "--snapshot-every", "0")
	}
	all = append(all, args...)
	logFile, err := os.Create(b.serveLog)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	cmd := exec.Command(b.bin, all...)
	cmd.Env = childEnv()
	cmd.Stdout, cmd.Stderr = logFile, logFile
	s := &server{cmd: cmd, url: "http://127.0.0.1:" + strconv.Itoa(port), done: make(chan error, 1), log: b.serveLog,
		client: &http.Client{Transport: &http.Transport{MaxIdleConns: clients, MaxIdleConnsPerHost: clients}, Timeout: time.Minute}}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { s.done <- cmd.Wait() }()
	poll := &http.Client{Timeout: time.Second}
	deadline := start.Add(10 * time.Minute)
	for {
		resp, err := poll.Get(s.url + "/readyz")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				s.ready = time.Since(start)
				s.readyCPU = procCPU(cmd.Process.Pid)
				return s, nil
			}
		}
		select {
		case err := <-s.done:
			s.stopped = true
			return nil, fmt.Errorf("%s serve exited before ready (%v); its log %s ends:\n%s", b.short, err, s.log, tail(s.log))
		case <-ctx.Done():
			s.stop()
			return nil, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("%s serve not ready after 10 minutes; its log %s", b.short, s.log)
		}
	}
}

// call makes an API request with the bearer token and returns the status
// and body.
func (s *server) call(method, path, token, body string) (int, string, error) {
	req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out), err
}

// stop ends serve (SIGTERM, then SIGKILL after a minute) and waits for it;
// a second stop does nothing.
func (s *server) stop() error {
	if s.stopped {
		return nil
	}
	s.stopped = true
	s.client.CloseIdleConnections()
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		return nil
	case <-time.After(time.Minute):
		_ = s.cmd.Process.Kill()
		<-s.done
		return fmt.Errorf("serve did not stop within a minute of SIGTERM; its log %s", s.log)
	}
}

// freePort is a loopback port free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// procCPU is process pid's CPU so far (user and system, /proc/pid/stat, in
// clock ticks of 10 ms); 0 where it cannot be read.
func procCPU(pid int) time.Duration {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(raw, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(raw[i+1:]))
	if len(f) < 13 { // state is f[0]; utime f[11], stime f[12]
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// tail is the last lines of file.
func tail(file string) string {
	raw, _ := os.ReadFile(file)
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	return strings.Join(lines[max(0, len(lines)-20):], "\n")
}

// loadavg is /proc/loadavg's 1, 5 and 15 minute loads.
func loadavg() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// load1 is the machine's load over the last minute (NaN if unknown).
func load1() float64 {
	f := strings.Fields(loadavg())
	if len(f) == 0 {
		return nan
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return nan
	}
	return v
}

// clickhouseDatabase is the URL of base's server with a database of its
// own for build short (the server's database name with _benchab_<short>
// and this process's id) and that database's name.
func clickhouseDatabase(base, short string) (string, string, error) {
	u, err := url.Parse(base)
	if err != nil || u.Scheme != "clickhouse" || u.Host == "" {
		return "", "", fmt.Errorf("-clickhouse %q: want clickhouse://host:9000[/database]", base)
	}
	db := strings.Trim(u.Path, "/")
	if db == "" {
		db = "tradeledger"
	}
	db = fmt.Sprintf("%s_benchab_%s_%d", db, strings.ToLower(short), os.Getpid())
	u.Path = "/" + db
	return u.String(), db, nil
}

// dropClickHouse drops the databases prepare made.
func (m *Main) dropClickHouse() {
	if len(m.chDBs) == 0 {
		return
	}
	u, err := url.Parse(m.ClickHouse)
	if err != nil {
		return
	}
	u.Path = ""
	opts, err := ch.ParseDSN(u.String())
	if err != nil {
		fmt.Fprintf(m.Stderr, "benchab: ClickHouse databases %v left: %v\n", m.chDBs, err)
		return
	}
	conn, err := ch.Open(opts)
	if err == nil {
		defer conn.Close()
		for _, db := range m.chDBs {
			if e := conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+db); e != nil {
				err = errors.Join(err, e)
			}
		}
	}
	if err != nil {
		fmt.Fprintf(m.Stderr, "benchab: ClickHouse databases %v may be left: %v\n", m.chDBs, err)
	}
	m.chDBs = nil
}
