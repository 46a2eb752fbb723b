// Pair: the live market (candles with EMA and Bollinger bands from
// chart/data, this pair's fills as ▲/▼ markers on the candles they fall in,
// open orders and stops as price lines) and the pair's own history from the
// records (fill prices over its whole history, a marker at each fill's
// time, and the trade list); the order ticket (limit, market, stop-limit,
// trailing stop, OCO; buy and sell), which shows only the fields of its
// order type, checks them before the review and confirms with the figures
// that will be sent; open orders with cancel. Prices and amounts follow the
// pair's market precision, times the chosen zone.

import { h, replace, splitKey } from './dom.js';
import { get, post } from './api.js';
import { debounce } from './live.js';
import { money, withUnit, tone, dateTime, count, market } from './fmt.js';
import { setupState, nextSteps } from './steps.js';
import { timeChart } from './timechart.js';

const kinds = {
  limit: { label: 'Limit', path: '', fields: ['amt', 'price'] },
  market: { label: 'Market', path: '/market', fields: ['amt'] },
  stoplimit: { label: 'Stop-limit', path: '/stoplimit', fields: ['amt', 'stopPrice', 'limitPrice'] },
  trailingstop: { label: 'Trailing stop', path: '/trailingstop', fields: ['amt', 'price', 'stopPrice'] },
  oco: { label: 'OCO', path: '/oco', fields: ['amt', 'price', 'stopPrice', 'limit'] },
};

const fieldLabels = {
  amt: 'Amount', price: 'Price', stopPrice: 'Stop price', limitPrice: 'Limit price', limit: 'Limit price after the stop',
};
const fieldOrder = ['stopPrice', 'limitPrice', 'limit', 'price', 'amt'];
const HISTORY = 1000; // fills drawn on the history chart and paged in the trade list
const TRADES_PAGE = 25;

// fieldOf finds which ticket field a server message is about ("field
// \"amt\" must be …"), or ''.
function fieldOf(message, fields) {
  const quoted = message.match(/"([A-Za-z]+)"/);
  if (quoted && fields.includes(quoted[1])) return quoted[1];
  for (const f of fieldOrder) if (fields.includes(f) && new RegExp(`\\b${f}\\b`).test(message)) return f;
  return '';
}

export async function render(view, ctx) {
  const setup = await setupState();
  const keys = [];
  for (const [ex, pairs] of Object.entries(setup.config.pairs || {})) for (const p of Object.keys(pairs || {})) keys.push(`${ex}/${p}`);
  keys.sort();
  const key = ctx.params[0] || keys[0];
  if (!key) {
    replace(view, h('h1', null, 'Pair'), nextSteps('No pairs configured yet, so there is no market to show.', setup));
    return;
  }
  const { exchange, pair } = splitKey(key);
  const [quote, base] = pair.split('-');
  const [{ LWC, makeChart, colors, zoneTimes }, mk] = await Promise.all([import('./chart.js'), market(key)]);
  const tz = ctx.tz;

  const picker = h('select', { id: 'pair-picker', 'aria-label': 'Pair', onchange: () => ctx.navigate('#/pair/' + encodeURIComponent(picker.value)) },
    (keys.includes(key) ? keys : [key, ...keys]).map(k => h('option', { value: k, selected: k === key }, k)));
  const legend = h('div', { class: 'legend mono', id: 'legend', 'aria-live': 'off' });
  const chartBox = h('div', { class: 'chart tall', id: 'candles', role: 'img', 'aria-label': `Candles of ${key}` });
  const historyBox = h('div', { class: 'chart tall', id: 'history-chart', role: 'img', 'aria-label': `Fill prices of ${key} over its history` });
  const chartNote = h('div', { id: 'chart-note' });
  const linesList = h('ul', { id: 'price-lines', class: 'lines', 'aria-label': 'Orders drawn on the chart' });
  const offList = h('ul', { id: 'off-chart', class: 'lines', 'aria-label': 'Orders outside the chart\'s price range' });
  const historyNote = h('p', { class: 'muted small', id: 'history-note' });
  const openBox = h('div', { id: 'open-orders' });
  const openError = h('p', { class: 'error', id: 'open-error', role: 'alert' });
  const tradesBox = h('div', { id: 'trades' });
  const ticket = h('div', { class: 'panel', id: 'ticket-panel' });
  const tabs = {
    live: h('button', { type: 'button', role: 'tab', id: 'tab-live', 'aria-controls': 'live-panel', onclick: () => showTab('live') }, 'Live market'),
    history: h('button', { type: 'button', role: 'tab', id: 'tab-history', 'aria-controls': 'history-panel', onclick: () => showTab('history') }, 'Trade history'),
  };
  const livePanel = h('div', { id: 'live-panel', role: 'tabpanel', 'aria-labelledby': 'tab-live' }, legend, chartBox, chartNote, linesList, offList);
  const historyPanel = h('div', { id: 'history-panel', role: 'tabpanel', 'aria-labelledby': 'tab-history' }, historyBox, historyNote);

  replace(view,
    h('div', { class: 'row' }, h('h1', null, 'Pair'), picker),
    h('div', { class: 'grid2' },
      h('section', { 'aria-label': 'Charts' }, h('div', { class: 'tabs', role: 'tablist' }, tabs.live, tabs.history), livePanel, historyPanel),
      h('section', { 'aria-labelledby': 'ticket-title' }, h('h2', { id: 'ticket-title' }, 'Order ticket'), ticket)),
    h('section', { 'aria-labelledby': 'open-title' }, h('h2', { id: 'open-title' }, 'Open orders'), openError, openBox),
    h('section', { 'aria-labelledby': 'trades-title' }, h('h2', { id: 'trades-title' }, `Trades of ${key}`), tradesBox));

  let tab = '';
  function showTab(name) {
    tab = name;
    for (const [n, b] of Object.entries(tabs)) b.setAttribute('aria-selected', String(n === name));
    livePanel.hidden = name !== 'live';
    historyPanel.hidden = name !== 'history';
    view.dataset.tab = name;
    if (name === 'live') chart?.timeScale().fitContent();
  }

  // --- live chart
  const chart = makeChart(chartBox, zoneTimes(tz));
  let c = colors();
  const candles = chart.addSeries(LWC.CandlestickSeries, {
    upColor: c.pos, downColor: c.neg, wickUpColor: c.pos, wickDownColor: c.neg, borderVisible: false, priceFormat: mk.priceFormat(),
  });
  const lineStyle = { lineWidth: 1, priceLineVisible: false, lastValueVisible: false, crosshairMarkerVisible: false, priceFormat: mk.priceFormat() };
  const ema = chart.addSeries(LWC.LineSeries, { ...lineStyle, color: c.accent2 });
  const bbStyle = { ...lineStyle, color: c.muted, lineStyle: 2 };
  const bbUpper = chart.addSeries(LWC.LineSeries, bbStyle);
  const bbLower = chart.addSeries(LWC.LineSeries, bbStyle);
  const markers = LWC.createSeriesMarkers(candles, []);
  let times = [];
  let span = 0; // seconds a candle covers
  let lo = 0, hi = 0; // the candles' price range
  let fillsAt = new Map();
  let priceLines = [];
  let bars = new Map();
  let hasMarket = false;
  let closed = false; // the page was left

  async function loadChart() {
    let data;
    try {
      ({ data } = await post('/chart/data', { exchange, pair }));
    } catch (err) {
      hasMarket = false;
      candles.setData([]);
      chartBox.dataset.candles = '0';
      const s = await setupState().catch(() => setup);
      const enabled = s.pairs.includes(key);
      replace(chartNote, s.running === false || !enabled
        ? nextSteps(!enabled ? `No market data: ${key} is not enabled (Settings).` : 'No market data: the system is stopped, so no candles are collected.',
          { ...s, pairs: enabled ? s.pairs : [] }, { onStarted: () => waitForMarket() })
        : h('p', { class: 'muted' }, `No market data yet: ${err.message}. The trade history has this pair's fills.`));
      if (s.running && enabled) waitForMarket(); // the core's next cycle brings it
      return;
    }
    hasMarket = true;
    replace(chartNote);
    times = data.time.map(t => Math.floor(t / 1000));
    span = times.length > 1 ? times[1] - times[0] : 300;
    bars = new Map();
    lo = Infinity; hi = -Infinity;
    candles.setData(times.map((t, i) => {
      const b = { time: t, open: data.open[i], high: data.high[i], low: data.low[i], close: data.close[i] };
      lo = Math.min(lo, b.low); hi = Math.max(hi, b.high);
      bars.set(t, b);
      return b;
    }));
    if (!mk.fromRules && times.length) { mk.setReference(data.close[times.length - 1]); applyPrecision(); }
    chartBox.dataset.candles = String(times.length);
    const line = (vals) => times.map((t, i) => (vals[i] == null ? { time: t } : { time: t, value: vals[i] }));
    const ind = data.indicators || {};
    ema.setData(line(ind.ema?.values || []));
    ema.applyOptions({ title: ind.ema ? `EMA ${ind.ema.period}` : '' });
    bbUpper.setData(line(ind.bollinger?.upper || []));
    bbLower.setData(line(ind.bollinger?.lower || []));
    bbUpper.applyOptions({ title: ind.bollinger ? `BB ${ind.bollinger.period}` : '' });
    await loadMarks();
    drawLines();
  }

  // A pair without market rules takes its precision from its price, known
  // once candles or fills are in.
  function applyPrecision() {
    const priceFormat = mk.priceFormat();
    for (const s of [candles, ema, bbUpper, bbLower]) s?.applyOptions({ priceFormat });
  }

  // After a start, candles come with the core's first cycle: ask again a
  // few times (one loop at a time).
  let waiting = false;
  async function waitForMarket() {
    if (waiting) return;
    waiting = true;
    try {
      for (let i = 0; i < 20 && !hasMarket && !closed; i++) {
        await new Promise(r => setTimeout(r, 1500));
        if (!closed) await loadChart();
      }
    } finally {
      waiting = false;
    }
  }

  // A fill is drawn on the candle it falls in; fills outside the candles'
  // time range are not drawn there (the trade history shows every fill).
  async function loadMarks() {
    if (times.length === 0) return;
    const end = times[times.length - 1] + span;
    let marks = [];
    try {
      marks = await get('/chart/marks', { exchange, pair, interval: Math.max(1, Math.round(span / 60)), startTime: times[0], endTime: end });
    } catch { /* no marks: the candles still stand */ }
    fillsAt = new Map();
    const list = [];
    for (const m of marks || []) {
      if (m.time < times[0] || m.time >= end) continue;
      let a = 0, b = times.length - 1;
      while (a < b) { const mid = (a + b + 1) >> 1; if (times[mid] <= m.time) a = mid; else b = mid - 1; }
      const t = times[a];
      const buy = /buy/i.test((m.tooltip || [])[0] || m.label || '');
      list.push({ time: t, position: buy ? 'belowBar' : 'aboveBar', shape: buy ? 'arrowUp' : 'arrowDown', color: buy ? c.pos : c.neg, text: buy ? '▲' : '▼' });
      if (!fillsAt.has(t)) fillsAt.set(t, []);
      fillsAt.get(t).push(markText(m, buy));
    }
    list.sort((x, y) => x.time - y.time);
    markers.setMarkers(list);
    chartBox.dataset.fills = String(list.length);
  }

  // markText says a chart mark's fill in the pair's precision (the API's
  // tooltip lines carry the numbers as they are).
  function markText(m, buy) {
    const num = (label) => {
      const line = (m.tooltip || []).find(l => l.startsWith(label + ': '));
      return line ? Number(line.slice(label.length + 2).split(' ')[0]) : null;
    };
    const amount = num('Amount'), price = num('Price');
    return `${buy ? 'buy' : 'sell'} ${mk.amount(amount)} ${base} @ ${mk.price(price)} ${quote}`;
  }

  chart.subscribeCrosshairMove((p) => {
    const b = p.time != null ? bars.get(p.time) : null;
    if (!b) { legend.textContent = `${key} · prices in ${quote} · ${tz}`; return; }
    const fills = fillsAt.get(p.time) || [];
    legend.textContent = `${dateTime(p.time * 1000, tz)}  O ${mk.price(b.open)} H ${mk.price(b.high)} L ${mk.price(b.low)} C ${mk.price(b.close)} ${quote}` +
      (fills.length ? `  ·  fills: ${fills.join(' | ')}` : '');
  });
  legend.textContent = `${key} · prices in ${quote} · ${tz}`;

  // --- open orders (table and price lines)
  let open = [];
  // Lines of orders within the candles' price range (with a margin) are
  // drawn; the others are listed as above or below the chart, rather than
  // pinned to its edge.
  function drawLines() {
    for (const l of priceLines) candles.removePriceLine(l);
    priceLines = [];
    const inside = [], outside = [];
    const margin = hasMarket ? (hi - lo) * 0.25 : 0;
    for (const o of open) {
      const levels = [];
      if (o.type === 'limit') levels.push(['', o.rate || o.price]);
      else {
        if (o.stopPrice) levels.push(['stop ', o.stopPrice]);
        if (o.limitPrice) levels.push(['limit ', o.limitPrice]);
        if (!o.stopPrice && (o.rate || o.price)) levels.push(['', o.rate || o.price]);
      }
      for (const [what, price] of levels) {
        if (!price) continue;
        const title = `${o.side} ${what}${mk.amount(o.amount)} ${base}`;
        const text = `${o.type} ${title} @ ${mk.price(price)} ${quote}`;
        if (hasMarket && price >= lo - margin && price <= hi + margin) {
          priceLines.push(candles.createPriceLine({ price, color: o.side === 'buy' ? c.pos : c.neg, lineWidth: 1, lineStyle: 1, axisLabelVisible: true, title }));
          inside.push(h('li', { dataset: { id: String(o.id) } }, text));
        } else {
          const where = !hasMarket ? 'no candles to draw on' : price > hi ? 'above the chart' : 'below the chart';
          outside.push(h('li', { dataset: { id: String(o.id), where } }, `${text} (${where})`));
        }
      }
    }
    replace(linesList, inside);
    replace(offList, outside);
  }

  async function loadOpen() {
    try {
      ({ data: open } = await get('/orders/open', { key }));
      // Newest first, as every list of orders here (the API lists them
      // by id).
      open.sort((a, b) => (b.time || 0) - (a.time || 0) || b.id - a.id);
    } catch (err) {
      replace(openBox, h('p', { class: 'error', role: 'alert' }, err.message));
      return;
    }
    drawLines();
    if (open.length === 0) {
      replace(openBox, h('p', { class: 'muted', id: 'no-open' }, 'No open orders on this pair.'));
      return;
    }
    replace(openBox, h('div', { class: 'table-wrap' }, h('table', { id: 'open-table', class: 'stack' },
      h('thead', null, h('tr', null, ['Time', 'Side', 'Type', 'State', `Price (${quote})`, `Stop (${quote})`, `Amount (${base})`, `Filled (${base})`, '']
        .map((l, i) => h('th', { scope: 'col', class: i >= 4 && i < 8 ? 'num' : null }, l)))),
      h('tbody', null, open.map(o => h('tr', { dataset: { id: String(o.id) } },
        h('td', { 'data-label': 'Time' }, dateTime(o.time, tz)), h('td', { class: o.side === 'buy' ? 'pos' : 'neg', 'data-label': 'Side' }, o.side),
        h('td', { 'data-label': 'Type' }, o.type),
        h('td', { 'data-label': 'State' }, o.state + (o.cancelRequested ? ' (cancelling)' : '')),
        h('td', { class: 'num', 'data-label': `Price (${quote})` }, mk.price(o.rate || o.price || o.limitPrice)),
        h('td', { class: 'num', 'data-label': `Stop (${quote})` }, o.stopPrice ? mk.price(o.stopPrice) : '–'),
        h('td', { class: 'num', 'data-label': `Amount (${base})` }, mk.amount(o.amount)), h('td', { class: 'num', 'data-label': `Filled (${base})` }, mk.amount(o.filled)),
        h('td', null, h('button', {
          type: 'button', class: 'danger cancel', 'aria-label': `Cancel order ${o.id}`, disabled: o.cancelRequested,
          onclick: async (e) => {
            e.target.disabled = true;
            try {
              await post('/trade/cancel', { data: { exch: exchange, pair, id: String(o.id), price: o.rate || o.price || o.stopPrice || 0, type: o.type } });
              await loadOpen();
            } catch (err) {
              e.target.disabled = false;
              openError.textContent = err.message;
            }
          },
        }, 'Cancel'))))))));
  }

  // --- history: the pair's fills from its records, newest first, on a
  // time axis proportional to time (timechart.js): a point per fill at its
  // time and price, ▲ buys and ▼ sells, however close in time.
  const historyLegend = h('div', { class: 'legend mono', id: 'history-legend', 'aria-live': 'off' });
  historyPanel.insertBefore(historyLegend, historyBox);
  const fillText = (r) => `${dateTime(r.time, tz)}  ${r.type} ${mk.amount(r.amount)} ${base} @ ${mk.price(r.rate)} ${quote}`;
  const hist = timeChart(historyBox, {
    tz, empty: 'No fills of this pair yet.',
    scales: { left: { format: (v) => mk.price(v), unit: quote } },
    legend: (r) => { historyLegend.textContent = r ? fillText(r) : `${key} · fill prices in ${quote} · ${tz}`; },
  });
  historyLegend.textContent = `${key} · fill prices in ${quote} · ${tz}`;
  let records = [];
  let recordsTotal = 0;
  let tradesPage = 0;

  async function loadHistory() {
    const r = await get('/orders/page', { key, page: 0, pageSize: HISTORY });
    records = r.data || [];
    recordsTotal = r.total || 0;
    if (!mk.fromRules && !hasMarket && records.length) { mk.setReference(records[0].rate); applyPrecision(); }
    // A point per fill, oldest first (two in the same second are two).
    const oldest = [...records].reverse();
    hist.setData([{ kind: 'line', scale: 'left', color: colors().accent, width: 1, points: oldest.map(r => ({ t: r.time, v: r.rate, item: r })) }],
      oldest.map(r => ({ t: r.time, v: r.rate, side: r.type === 'buy' ? 'buy' : 'sell', scale: 'left', item: r })));
    historyBox.dataset.fills = String(records.length);
    historyNote.textContent = records.length === 0 ? 'No fills of this pair yet.'
      : `${count(records.length)} fill${records.length === 1 ? '' : 's'} from ${dateTime(records[records.length - 1].time, tz)} to ${dateTime(records[0].time, tz)}` +
        (recordsTotal > records.length ? ` (the last ${count(records.length)} of ${count(recordsTotal)})` : '') + ': fill prices, ▲ buys below, ▼ sells above.';
    drawTrades();
  }

  // feeCell shows a fill's fee in quote and, when the exchange charged it
  // in another asset (the base, BNB …), that amount with its unit under it
  // (the rate it was valued at in the cell's title) — or, without a rate
  // at its time, the amount and that it counts in no figure.
  function feeCell(r) {
    const label = `Fee (${quote})`;
    if (!r.feeAsset || r.feeAsset === quote) return h('td', { class: 'num', 'data-label': label, 'data-col': 'fee' }, money(r.fees, quote));
    if (r.unconvertedFees) {
      return h('td', { class: 'num', 'data-label': label, 'data-col': 'fee', title: `No rate of ${r.feeAsset} within bot.FEE_RATE_MAX_AGE of the fill: this fee is in no figure in ${quote}` },
        withUnit(r.feeAmount, r.feeAsset), h('div', { class: 'u fee-note' }, 'no rate'));
    }
    return h('td', { class: 'num', 'data-label': label, 'data-col': 'fee', title: `1 ${r.feeAsset} = ${r.feeRate} ${quote}` },
      money(r.fees, quote), h('div', { class: 'u fee-asset' }, withUnit(r.feeAmount, r.feeAsset)));
  }

  function drawTrades() {
    if (records.length === 0) {
      replace(tradesBox, h('p', { class: 'muted', id: 'no-trades' }, 'No trades on this pair yet.'));
      return;
    }
    const pages = Math.ceil(records.length / TRADES_PAGE);
    tradesPage = Math.min(tradesPage, pages - 1);
    const slice = records.slice(tradesPage * TRADES_PAGE, (tradesPage + 1) * TRADES_PAGE);
    const nav = h('div', { class: 'row toolbar' },
      h('button', { type: 'button', id: 'trades-newer', disabled: tradesPage === 0, onclick: () => { tradesPage--; drawTrades(); } }, '← Newer'),
      h('button', { type: 'button', id: 'trades-older', disabled: tradesPage >= pages - 1, onclick: () => { tradesPage++; drawTrades(); } }, 'Older →'),
      h('p', { class: 'muted' }, `${tradesPage * TRADES_PAGE + 1}–${tradesPage * TRADES_PAGE + slice.length} of ${count(recordsTotal)} fills; every order of the pair in `,
        h('a', { href: '#/orders' }, 'Orders'), '.'));
    replace(tradesBox, nav, h('div', { class: 'table-wrap' }, h('table', { id: 'trades-table', class: 'stack' },
      h('thead', null, h('tr', null, ['Time', 'Side', `Price (${quote})`, `Amount (${base})`, `Value (${quote})`, `Fee (${quote})`, `PNL (${quote})`, 'Order id']
        .map((l, i) => h('th', { scope: 'col', class: i >= 2 && i <= 6 ? 'num' : null }, l)))),
      h('tbody', null, slice.map(r => h('tr', { dataset: { id: String(r.id), side: r.type } },
        h('td', { 'data-label': 'Time' }, dateTime(r.time, tz)),
        h('td', { class: r.type === 'buy' ? 'pos' : 'neg', 'data-label': 'Side' }, r.type),
        h('td', { class: 'num', 'data-label': `Price (${quote})`, 'data-col': 'price' }, mk.price(r.rate)),
        h('td', { class: 'num', 'data-label': `Amount (${base})`, 'data-col': 'amount' }, mk.amount(r.amount)),
        h('td', { class: 'num', 'data-label': `Value (${quote})` }, money(r.cost, quote)),
        feeCell(r),
        h('td', { class: 'num ' + (r.type === 'sell' ? tone(r.pnl) : ''), 'data-label': `PNL (${quote})`, 'data-col': 'pnl' }, r.type === 'sell' ? money(r.pnl, quote, { sign: true }) : '–'),
        h('td', { class: 'mono', 'data-label': 'Order id' }, String(r.id))))))));
  }

  // --- ticket
  const state = { side: 'buy', kind: 'limit' };
  const inputs = {};
  const errors = {};
  const formError = h('p', { class: 'error', id: 'ticket-error', role: 'alert', hidden: true });
  const result = h('p', { class: 'ok', id: 'ticket-result', role: 'status' });
  const fieldsBox = h('div');
  const confirmBox = h('div', { id: 'ticket-confirm', hidden: true, class: 'confirm' });
  const review = h('button', { type: 'submit', class: 'primary', id: 'ticket-review' }, 'Review order');
  const marketNote = h('p', { class: 'muted small', id: 'ticket-market-note' });

  function drawFields() {
    const k = kinds[state.kind];
    // A field the order type does not have is emptied, so that nothing of
    // another type's order is sent or confirmed.
    for (const [name, input] of Object.entries(inputs)) if (!k.fields.includes(name)) input.value = '';
    replace(fieldsBox, k.fields.map(name => {
      inputs[name] = inputs[name] || h('input', { id: 't-' + name, name, type: 'text', inputmode: 'decimal', autocomplete: 'off', 'aria-describedby': 't-' + name + '-error' });
      errors[name] = errors[name] || h('div', { class: 'field-error', id: 't-' + name + '-error', role: 'alert' });
      return h('div', null, h('label', { for: 't-' + name }, fieldLabels[name] + (name === 'amt' ? ` (${base})` : ` (${quote})`)), inputs[name], errors[name]);
    }), state.kind === 'market' ? marketNote : null);
    marketNote.textContent = `A market order fills at the book's prices${lastPrice() ? `; the last price is ${mk.price(lastPrice())} ${quote}` : ''}.`;
  }
  function lastPrice() {
    if (times.length) return bars.get(times[times.length - 1])?.close;
    return records[0]?.rate;
  }
  function clearErrors() {
    for (const e of Object.values(errors)) e.textContent = '';
    formError.hidden = true;
    for (const i of Object.values(inputs)) i.removeAttribute('aria-invalid');
  }
  function fieldError(name, message) {
    errors[name].textContent = message;
    inputs[name].setAttribute('aria-invalid', 'true');
  }
  // check reads the ticket's fields: the values, or null after marking
  // each wrong field (required, a positive number).
  function check() {
    const values = {};
    let first = '';
    for (const name of kinds[state.kind].fields) {
      const raw = inputs[name].value.trim().replace(/,/g, '');
      const v = Number(raw);
      let msg = '';
      if (raw === '') msg = `${fieldLabels[name]} is required.`;
      else if (!/^\d*\.?\d+$/.test(raw) && !/^\d+\.$/.test(raw)) msg = `${fieldLabels[name]} must be a positive number.`;
      else if (!(v > 0)) msg = `${fieldLabels[name]} must be greater than 0.`;
      if (msg) { fieldError(name, msg); first ||= name; } else values[name] = v;
    }
    if (!first && state.kind === 'trailingstop' && values.price === values.stopPrice) {
      fieldError('stopPrice', 'Stop price must differ from the price: their difference is the trailing distance.');
      first = 'stopPrice';
    }
    if (first) { inputs[first].focus(); return null; }
    return values;
  }
  function summary(values) {
    const k = kinds[state.kind];
    const amount = `${mk.amount(values.amt)} ${base}`;
    const verb = state.side === 'buy' ? 'Buy' : 'Sell';
    switch (state.kind) {
      case 'market': {
        const last = lastPrice();
        return `${verb} ${amount} at the market price on ${key}` +
          (last ? ` (last ${mk.price(last)} ${quote}: about ${withUnit(last * values.amt, quote)})` : '');
      }
      case 'limit': return `${verb} ${amount} at ${mk.price(values.price)} ${quote} (limit) on ${key}: ${withUnit(values.price * values.amt, quote)}`;
      default: return `${verb} ${amount}, ${k.label.toLowerCase()} on ${key}: ` +
        k.fields.filter(f => f !== 'amt').map(f => `${fieldLabels[f]} ${mk.price(values[f])} ${quote}`).join(', ');
    }
  }
  const sideBox = h('fieldset', { class: 'side' }, h('legend', null, 'Side'),
    ['buy', 'sell'].map(s => h('label', { class: 'inline' },
      h('input', { type: 'radio', name: 'side', value: s, checked: s === state.side, onchange: () => { state.side = s; hideConfirm(); } }), ' ', s === 'buy' ? 'Buy' : 'Sell')));
  const kindSelect = h('select', { id: 't-kind', onchange: () => { state.kind = kindSelect.value; hideConfirm(); clearErrors(); drawFields(); } },
    Object.entries(kinds).map(([k, v]) => h('option', { value: k, selected: k === state.kind }, v.label)));
  function hideConfirm() { confirmBox.hidden = true; review.hidden = false; }

  const form = h('form', {
    id: 'ticket', novalidate: true,
    onsubmit: (e) => {
      e.preventDefault();
      clearErrors();
      result.textContent = '';
      const values = check();
      if (!values) { hideConfirm(); return; }
      const d = { exch: exchange, pair, ...values };
      replace(confirmBox,
        h('p', { id: 'ticket-summary' }, summary(values)),
        h('div', { class: 'row' },
          h('button', { type: 'button', class: 'primary', id: 'ticket-confirm-button', onclick: () => send(d) }, `Confirm ${state.side}`),
          h('button', { type: 'button', onclick: () => { hideConfirm(); review.focus(); } }, 'Back')));
      confirmBox.hidden = false;
      review.hidden = true;
      confirmBox.querySelector('#ticket-confirm-button').focus();
    },
  },
  sideBox,
  h('label', { for: 't-kind' }, 'Order type'), kindSelect,
  fieldsBox, formError,
  h('div', { class: 'row' }, review),
  confirmBox, result);

  async function send(d) {
    const btn = confirmBox.querySelector('#ticket-confirm-button');
    btn.disabled = true;
    try {
      const r = await post(`/trade/${state.side}${kinds[state.kind].path}`, { data: d });
      result.textContent = `${r.message || 'Order sent'}${r.id ? ` (id ${r.id})` : ''}`;
      hideConfirm();
      await Promise.all([loadOpen(), loadChart(), loadHistory()]);
    } catch (err) {
      hideConfirm();
      const f = fieldOf(err.message, kinds[state.kind].fields);
      if (f) {
        fieldError(f, err.message);
        inputs[f].focus();
      } else {
        formError.textContent = err.message;
        formError.hidden = false;
      }
    }
  }
  drawFields();
  replace(ticket, form);

  await Promise.all([loadChart(), loadOpen(), loadHistory()]);
  drawFields(); // the market note knows the last price now
  showTab(hasMarket ? 'live' : 'history');

  const refresh = debounce(() => { loadOpen(); loadMarks(); loadHistory(); }, 300);
  const off = ctx.live?.on((ev) => {
    if (ev.type?.startsWith('Order') || ev.type === 'StopTriggered' || ev.type === 'TrailingStopMoved' || ev.type?.startsWith('Oco')) refresh();
  });
  const timer = setInterval(() => loadChart(), 60000); // new candles: the market has no events in the log
  const onTheme = () => {
    c = colors();
    candles.applyOptions({ upColor: c.pos, downColor: c.neg, wickUpColor: c.pos, wickDownColor: c.neg });
    ema.applyOptions({ color: c.accent2 });
    bbUpper.applyOptions({ color: c.muted });
    bbLower.applyOptions({ color: c.muted });
    loadOpen();
    loadMarks();
    loadHistory();
  };
  window.addEventListener('themechange', onTheme);
  return () => { closed = true; off?.(); clearInterval(timer); window.removeEventListener('themechange', onTheme); chart.destroy(); hist.destroy(); };
}
