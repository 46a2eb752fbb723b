package http

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/secrets"
	"github.com/tradeledger/tradeledger/eventstore/sqlite"
	"github.com/tradeledger/tradeledger/projections"
)

// benchConfigHandler is the main handler of a server with the config
// routes over a SQLite log in a temp dir, initialized with cfgInitial, and
// a bearer token for it.
func benchConfigHandler(b *testing.B) (http.Handler, string) {
	b.Helper()
	store := sqlite.NewStore(filepath.Join(b.TempDir(), "events.db"))
	if err := store.Open(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	body, _ := json.Marshal(cfgInitial())
	clock := domain.NewManualClock(time.UnixMilli(1700000000000))
	if _, err := store.Append(context.Background(), domain.StreamConfig, domain.NoStream,
		domain.NewEvent(clock, domain.TypeConfigReplaced, domain.ConfigReplaced{Config: body})); err != nil {
		b.Fatal(err)
	}
	runner := projections.NewRunner(store)
	cv := projections.NewConfig()
	runner.Register(cv)
	if err := runner.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { runner.Close() })
	box, err := secrets.NewSecretBox(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		b.Fatal(err)
	}
	s := NewServer()
	s.Clock, s.Store, s.Runner = clock, store, runner
	s.Auth = &Authenticator{Secret: bytes.Repeat([]byte{9}, 32), TokenTTL: time.Hour, Clock: clock}
	s.Config, s.Secrets = cv, box
	token, err := s.Auth.IssueToken("bench")
	if err != nil {
		b.Fatal(err)
	}
	return s.Handler(), token
}

// BenchmarkConfigWrite measures config/strategy/add (decide against the
// config read model, append with its version, wait for the projection)
// from one client, and from GOMAXPROCS×4 clients writing the same stream
// at once, whose commands wait for each other (Server.streams): it reports
// writes/s and the share answered 409 (every attempt lost a race; none
// since the server's commands on a stream run one at a time).
func BenchmarkConfigWrite(b *testing.B) {
	body := []byte(`{"name":"bench","settings":{"GAIN":1}}`)
	write := func(h http.Handler, token string) int {
		req := httptest.NewRequest("POST", "/api/v1/config/strategy/add", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	b.Run("serial", func(b *testing.B) {
		h, token := benchConfigHandler(b)
		b.ResetTimer()
		start := time.Now()
		for i := 0; i < b.N; i++ {
			if code := write(h, token); code != http.StatusOK {
				b.Fatalf("status %d", code)
			}
		}
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "writes/s")
	})
	b.Run("contended", func(b *testing.B) {
		h, token := benchConfigHandler(b)
		var conflicts, other atomic.Int64
		b.SetParallelism(4)
		b.ResetTimer()
		start := time.Now()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				switch code := write(h, token); code {
				case http.StatusOK:
				case http.StatusConflict:
					conflicts.Add(1)
				default:
					other.Add(1)
				}
			}
		})
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "writes/s")
		b.ReportMetric(100*float64(conflicts.Load())/float64(b.N), "%409")
		if other.Load() > 0 {
			b.Fatalf("%d writes answered neither 200 nor 409", other.Load())
		}
	})
}
