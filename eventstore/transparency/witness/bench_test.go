package witness

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"
)

// BenchmarkCosignLoopback: checkpoints one witness cosigns per second
// over loopback HTTP, each with a consistency proof from the one before
// (a log growing by 16 records per checkpoint), the witness's database
// synced (synchronous=FULL) before each answer, as the protocol asks.
func BenchmarkCosignLoopback(b *testing.B) {
	w, err := Open(b.TempDir(), "witness.test/bench")
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	srv := newLoopback(b, w)
	l := newMemLog(b, "log.test/bench")
	w.AddLog(context.Background(), "", l.vkey)
	bodies := make([][]byte, b.N)
	old := int64(0)
	for i := range bodies {
		l.add(16, "b")
		bodies[i] = l.request(old)
		old = l.n
	}
	client := &http.Client{}
	b.ResetTimer()
	start := time.Now()
	for _, body := range bodies {
		res, err := client.Post(srv+"/add-checkpoint", "text/plain", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			b.Fatalf("status %d", res.StatusCode)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "checkpoints/s")
}
