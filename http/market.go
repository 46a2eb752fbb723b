package http

import (
	"math"
	"net/http"
	"strconv"

	"github.com/gorilla/mux"

	"github.com/tradeledger/tradeledger/domain"
)

// CoreReader is the read side of the bot core as cmd fills Server.Core
// with it (exchange/engine.Scheduler): the market series (MarketReader,
// this file) and core memory (CoreMemory, coremem.go) of active pairs,
// and whether the system is started (CoreStatus, system.go). Every
// per-pair method answers ENOTFOUND, with a message saying why, for a
// pair that is unknown or not active (not enabled, system stopped, or no
// data collected yet).
type CoreReader interface {
	CoreStatus
	MarketReader
	CoreMemory
}

// MarketReader is the market data the core collects for an active pair:
// its candles, oldest first, and its order book (ENOTFOUND for a pair
// that is unknown or not active).
type MarketReader interface {
	Candles(exchange, pair string) ([]domain.Candle, error)
	OrderBook(exchange, pair string) (domain.OrderBook, error)
}

// Chart indicator settings. The EMA uses the pair's EMA_PERIOD strategy
// parameter when set (as the gain strategy does), else domain.DefaultEMAPeriod.
const (
	ChartBollingerPeriod = 20
	ChartBollingerK      = 2.0
	ChartRSIPeriod       = 14
)

// marketHandler serves the market data collected by the core from a
// MarketReader (503 without one), with the EMA period of chart/data from
// the configuration in force:
//
//	GET  market/candles?key=<exchange>/<pair>   {data:{open,high,low,close,volume,time}}
//	GET  market/orderbook?key=<exchange>/<pair> {data:{ask:[[price,qty]…],bid:[[price,qty]…]}}
//	POST chart/data {exchange, pair}            candles plus EMA, Bollinger bands and RSI
//
// Candles are the pair's series, oldest first, arrays of equal length: at
// most engine.DefaultCandleLimit (100) candles of the pair's PERIOD strategy
// parameter in minutes (default 5); time is each candle's opening time in
// ms. The book has at most engine.DefaultBookDepth (20) levels a side, asks
// ascending and bids descending (best first). Unknown or inactive pairs are
// 404.
type marketHandler struct {
	market MarketReader
	// config, when set, gives chart/data its pair's EMA_PERIOD.
	config CurrentConfig
}

func (h *marketHandler) register(r *mux.Router) {
	r.Handle("/market/candles", handlerFunc(h.handleMarketCandles)).Methods("GET")
	r.Handle("/market/orderbook", handlerFunc(h.handleMarketOrderBook)).Methods("GET")
	r.Handle("/chart/data", handlerFunc(h.handleChartData)).Methods("POST")
}

// errNoCore is the answer of the core's routes on a server without it.
var errNoCore = domain.Errorf(domain.EUNAVAILABLE, "the bot core is not available")

func (h *marketHandler) ready() error {
	if h.market == nil {
		return errNoCore
	}
	return nil
}

// pairKeyQuery reads and validates the key query parameter.
func pairKeyQuery(r *http.Request) (exchange, pair string, err error) {
	key := r.URL.Query().Get("key")
	if key == "" {
		return "", "", domain.Errorf(domain.EINVALID, "query parameter key is required (URL-encoded <exchange>/<pair>, e.g. binance%%2FUSDT-BTC)")
	}
	if exchange, pair, err = domain.SplitPairKey(key); err != nil {
		return "", "", domain.Errorf(domain.EINVALID, "query parameter key: %s", domain.ErrorMessage(err))
	}
	if _, _, err = domain.SplitPair(pair); err != nil {
		return "", "", domain.Errorf(domain.EINVALID, "query parameter key: %s", domain.ErrorMessage(err))
	}
	return exchange, pair, nil
}

// exchangePairBody is the {exchange, pair} body of chart and core memory
// requests.
type exchangePairBody struct {
	Exchange string `json:"exchange"`
	Pair     string `json:"pair"`
}

// decodeExchangePair reads a JSON body holding {exchange, pair} (body is
// an exchangePairBody or a request embedding one) and checks them.
func decodeExchangePair(r *http.Request, body interface{ validate() error }) error {
	if err := decodeJSON(r, body, false); err != nil {
		return err
	}
	return body.validate()
}

func (b exchangePairBody) validate() error {
	if b.Exchange == "" {
		return domain.Errorf(domain.EINVALID, "field exchange is required")
	}
	if b.Pair == "" {
		return domain.Errorf(domain.EINVALID, "field pair is required")
	}
	if _, _, err := domain.SplitPair(b.Pair); err != nil {
		return domain.Errorf(domain.EINVALID, "field pair: %s", domain.ErrorMessage(err))
	}
	return nil
}

type candleArrays struct {
	Open   []domain.Number `json:"open"`
	High   []domain.Number `json:"high"`
	Low    []domain.Number `json:"low"`
	Close  []domain.Number `json:"close"`
	Volume []domain.Number `json:"volume"`
	Time   []int64         `json:"time"`
}

func newCandleArrays(cs []domain.Candle) candleArrays {
	a := candleArrays{
		Open: make([]domain.Number, len(cs)), High: make([]domain.Number, len(cs)), Low: make([]domain.Number, len(cs)),
		Close: make([]domain.Number, len(cs)), Volume: make([]domain.Number, len(cs)), Time: make([]int64, len(cs)),
	}
	for i, c := range cs {
		a.Open[i], a.High[i], a.Low[i] = domain.Number(c.Open), domain.Number(c.High), domain.Number(c.Low)
		a.Close[i], a.Volume[i], a.Time[i] = domain.Number(c.Close), domain.Number(c.Volume), c.Time
	}
	return a
}

type candlesResponse struct {
	Data candleArrays `json:"data"`
}

func (h *marketHandler) handleMarketCandles(w http.ResponseWriter, r *http.Request) error {
	exchange, pair, err := pairKeyQuery(r)
	if err != nil {
		return err
	}
	if err := h.ready(); err != nil {
		return err
	}
	cs, err := h.market.Candles(exchange, pair)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, candlesResponse{Data: newCandleArrays(cs)})
	return nil
}

type orderBookResponse struct {
	Data struct {
		Ask [][2]domain.Number `json:"ask"`
		Bid [][2]domain.Number `json:"bid"`
	} `json:"data"`
}

func (h *marketHandler) handleMarketOrderBook(w http.ResponseWriter, r *http.Request) error {
	exchange, pair, err := pairKeyQuery(r)
	if err != nil {
		return err
	}
	if err := h.ready(); err != nil {
		return err
	}
	book, err := h.market.OrderBook(exchange, pair)
	if err != nil {
		return err
	}
	var resp orderBookResponse
	resp.Data.Ask = make([][2]domain.Number, len(book.Asks))
	resp.Data.Bid = make([][2]domain.Number, len(book.Bids))
	for i, l := range book.Asks {
		resp.Data.Ask[i] = [2]domain.Number{domain.Number(l.Price), domain.Number(l.Quantity)}
	}
	for i, l := range book.Bids {
		resp.Data.Bid[i] = [2]domain.Number{domain.Number(l.Price), domain.Number(l.Quantity)}
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// series is an indicator series; warm-up positions (NaN) are null.
type series []float64

// MarshalJSON writes the values as numbers, NaN and ±Inf as null.
func (v series) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 2+len(v)*12)
	b = append(b, '[')
	for i, f := range v {
		if i > 0 {
			b = append(b, ',')
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			b = append(b, "null"...)
			continue
		}
		b = strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	return append(b, ']'), nil
}

type chartDataResponse struct {
	Data struct {
		candleArrays
		Indicators struct {
			EMA struct {
				Period int    `json:"period"`
				Values series `json:"values"`
			} `json:"ema"`
			Bollinger struct {
				Period int     `json:"period"`
				K      float64 `json:"k"`
				Upper  series  `json:"upper"`
				Middle series  `json:"middle"`
				Lower  series  `json:"lower"`
			} `json:"bollinger"`
			RSI struct {
				Period int    `json:"period"`
				Values series `json:"values"`
			} `json:"rsi"`
		} `json:"indicators"`
	} `json:"data"`
}

// handleChartData answers the pair's candles (as market/candles) and, in
// data.indicators, series of the same length computed over the closes:
// ema {period, values}, bollinger {period, k, upper, middle, lower} (SMA ±
// k population standard deviations) and rsi {period, values} (Wilder). A
// position without enough history is null.
func (h *marketHandler) handleChartData(w http.ResponseWriter, r *http.Request) error {
	var body exchangePairBody
	if err := decodeExchangePair(r, &body); err != nil {
		return err
	}
	if err := h.ready(); err != nil {
		return err
	}
	cs, err := h.market.Candles(body.Exchange, body.Pair)
	if err != nil {
		return err
	}
	closes := domain.Closes(cs)
	var resp chartDataResponse
	d := &resp.Data
	d.candleArrays = newCandleArrays(cs)
	ind := &d.Indicators
	ind.EMA.Period = h.chartEMAPeriod(body.Exchange, body.Pair)
	ind.EMA.Values = domain.EMA(closes, ind.EMA.Period)
	bb := &ind.Bollinger
	bb.Period, bb.K = ChartBollingerPeriod, ChartBollingerK
	u, m, l := domain.Bollinger(closes, bb.Period, bb.K)
	bb.Upper, bb.Middle, bb.Lower = u, m, l
	ind.RSI.Period = ChartRSIPeriod
	ind.RSI.Values = domain.RSI(closes, ChartRSIPeriod)
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// chartEMAPeriod is the pair's EMA_PERIOD (override, then strategy
// settings), else the default.
func (h *marketHandler) chartEMAPeriod(exchange, pair string) int {
	if h.config == nil {
		return domain.DefaultEMAPeriod
	}
	cfg := h.config.Current()
	pc, ok := cfg.Pair(exchange, pair)
	if !ok {
		return domain.DefaultEMAPeriod
	}
	settings, _ := cfg.Strategy(pc.Strategy)
	n, err := domain.StrategyParams{Override: pc.Override, Settings: settings}.Int("EMA_PERIOD", domain.DefaultEMAPeriod)
	if err != nil || n < 1 {
		return domain.DefaultEMAPeriod
	}
	return n
}
