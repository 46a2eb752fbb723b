package http

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tradeledger/tradeledger/domain"
	"github.com/tradeledger/tradeledger/domain/decimal"
	"github.com/tradeledger/tradeledger/projections"
)

// TestStalledExportsDropped: 16 clients (as many as the listener's
// connection slots) ask for an export of many fills and stop reading it;
// their responses are dropped once a write waited WriteStallTimeout, so
// that /healthz is answered and every handler ends (without a deadline the
// exports held every slot until their clients closed).
func TestStalledExportsDropped(t *testing.T) {
	const clients = 16
	ts := newTestServer(t, func(ts *testServer) {
		ts.Server.MaxConns = clients
		ts.Server.WriteStallTimeout = 200 * time.Millisecond
		l := projections.NewLedger(domain.LOFO)
		ts.Runner.Register(l)
		ts.Server.Ledger = l
		// 40,000 fills: an export of several MB, more than the
		// sockets hold.
		var batch []domain.StreamAppend
		for i := int64(1); i <= 40_000; i++ {
			side := domain.Buy
			if i%2 == 0 {
				side = domain.Sell
			}
			price := decimal.DecimalFromInt(100 + i%13)
			batch = append(batch, domain.StreamAppend{Stream: domain.OrderStream(i), Expected: domain.NoStream, Events: []domain.Event{
				domain.NewEvent(ts.Clock, domain.TypeOrderRequested, domain.OrderRequested{OrderID: i, Exchange: "binance", Pair: "USDT-BTC",
					Side: side, Kind: domain.KindLimit, Amount: decimal.MustDecimal("0.5"), Price: price, ClientOrderID: fmt.Sprint(i)}),
				domain.NewEvent(ts.Clock, domain.TypeOrderFilled, domain.OrderFilled{FillID: fmt.Sprint(i), Price: price,
					Quantity: decimal.MustDecimal("0.5"), Fee: decimal.MustDecimal("0.01"), FeeAsset: "USDT"}),
			}})
		}
		if _, err := domain.AppendBatch(context.Background(), ts.Store, batch); err != nil {
			t.Fatal(err)
		}
	})
	var conns []net.Conn
	for range clients {
		d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
			return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		}}
		c, err := d.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "GET /api/v1/export/fills.csv HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+ts.Token+"\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(safetyNet))
		resp, err := http.ReadResponse(bufio.NewReaderSize(c, 16), nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("export: %v %v", resp, err)
		}
		conns = append(conns, c) // never read again
	}
	client := &http.Client{Timeout: safetyNet}
	resp, err := client.Get(ts.URL + "/healthz")
	if err != nil {
		t.Fatalf("/healthz while %d clients stall on exports: %v", clients, err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("/healthz = %d", resp.StatusCode)
	}
	waitFor(t, "every stalled export dropped", func() bool { return strings.Count(ts.Logs(), "export ended early") == clients })
	// What the buffers held arrives, then the end: the server closed.
	c := conns[0]
	c.SetReadDeadline(time.Now().Add(safetyNet))
	if _, err := io.Copy(io.Discard, c); err != nil {
		t.Fatalf("reading a dropped export: %v, want its end", err)
	}
}
