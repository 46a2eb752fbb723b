// Pair: candles with fill markers (▲ buy, ▼ sell, details at the
// crosshair), open orders and stops as price lines, EMA and Bollinger from
// chart/data; the order ticket (limit, market, stop-limit, trailing stop,
// OCO; buy and sell) with a confirmation step and the server's message at
// the field; open orders with cancel.

import { h, replace, num, dateTime, splitKey } from './dom.js';
import { get, post } from './api.js';
import { debounce } from './live.js';

const kinds = {
  limit: { label: 'Limit', path: '', fields: ['amt', 'price'] },
  market: { label: 'Market', path: '/market', fields: ['amt', 'price?'] },
  stoplimit: { label: 'Stop-limit', path: '/stoplimit', fields: ['amt', 'stopPrice', 'limitPrice'] },
  trailingstop: { label: 'Trailing stop', path: '/trailingstop', fields: ['amt', 'price', 'stopPrice'] },
  oco: { label: 'OCO', path: '/oco', fields: ['amt', 'price', 'stopPrice', 'limit'] },
};

const fieldLabels = {
  amt: 'Amount', price: 'Price', 'price?': 'Price (optional: market price)', stopPrice: 'Stop price',
  limitPrice: 'Limit price', limit: 'Limit price after the stop',
};
const fieldOrder = ['stopPrice', 'limitPrice', 'limit', 'price', 'amt'];

// fieldOf finds which ticket field a server message is about ("field
// \"amt\" must be …"), or ''.
function fieldOf(message, fields) {
  const quoted = message.match(/"([A-Za-z]+)"/);
  if (quoted && fields.includes(quoted[1])) return quoted[1];
  for (const f of fieldOrder) if (fields.includes(f) && new RegExp(`\\b${f}\\b`).test(message)) return f;
  return '';
}

async function pairKeys() {
  const { config } = await get('/config/full');
  const keys = [];
  for (const [ex, pairs] of Object.entries(config.pairs || {})) for (const p of Object.keys(pairs || {})) keys.push(`${ex}/${p}`);
  return keys.sort();
}

export async function render(view, ctx) {
  const keys = await pairKeys();
  const key = ctx.params[0] || keys[0];
  if (!key) {
    replace(view, h('h1', null, 'Pair'), h('p', null, 'No pairs configured yet. Add one in ', h('a', { href: '#/settings' }, 'Settings'), '.'));
    return;
  }
  const { exchange, pair } = splitKey(key);
  const [quote, base] = pair.split('-');
  const { LWC, makeChart, colors } = await import('./chart.js');

  const picker = h('select', { id: 'pair-picker', 'aria-label': 'Pair', onchange: () => ctx.navigate('#/pair/' + encodeURIComponent(picker.value)) },
    (keys.includes(key) ? keys : [key, ...keys]).map(k => h('option', { value: k, selected: k === key }, k)));
  const legend = h('div', { class: 'legend mono', id: 'legend', 'aria-live': 'off' });
  const chartBox = h('div', { class: 'chart tall', id: 'candles', role: 'img', 'aria-label': `Candles of ${key}` });
  const chartNote = h('p', { class: 'muted', id: 'chart-note' });
  const linesList = h('ul', { id: 'price-lines', class: 'lines', 'aria-label': 'Orders drawn on the chart' });
  const openBox = h('div', { id: 'open-orders' });
  const openError = h('p', { class: 'error', id: 'open-error', role: 'alert' });
  const ticket = h('div', { class: 'panel', id: 'ticket-panel' });

  replace(view,
    h('div', { class: 'row' }, h('h1', null, 'Pair'), picker),
    h('div', { class: 'grid2' },
      h('section', { 'aria-label': 'Chart' }, legend, chartBox, chartNote, linesList),
      h('section', { 'aria-labelledby': 'ticket-title' }, h('h2', { id: 'ticket-title' }, 'Order ticket'), ticket)),
    h('section', { 'aria-labelledby': 'open-title' }, h('h2', { id: 'open-title' }, 'Open orders'), openError, openBox));

  // --- chart
  const tz = ctx.tz;
  const timeFmt = new Intl.DateTimeFormat('en-GB', { timeZone: tz, hour: '2-digit', minute: '2-digit', hour12: false });
  const dayFmt = new Intl.DateTimeFormat('en-GB', { timeZone: tz, day: 'numeric', month: 'short' });
  const chart = makeChart(chartBox, {
    localization: { timeFormatter: (t) => dateTime(t * 1000, tz) },
    timeScale: { timeVisible: true, tickMarkFormatter: (t, type) => (type <= 2 ? dayFmt : timeFmt).format(new Date(t * 1000)) },
  });
  let c = colors();
  const candles = chart.addSeries(LWC.CandlestickSeries, {
    upColor: c.pos, downColor: c.neg, wickUpColor: c.pos, wickDownColor: c.neg, borderVisible: false,
  });
  const ema = chart.addSeries(LWC.LineSeries, { color: c.accent2, lineWidth: 1, priceLineVisible: false, lastValueVisible: false, crosshairMarkerVisible: false });
  const bbStyle = { color: c.muted, lineWidth: 1, lineStyle: 2, priceLineVisible: false, lastValueVisible: false, crosshairMarkerVisible: false };
  const bbUpper = chart.addSeries(LWC.LineSeries, bbStyle);
  const bbLower = chart.addSeries(LWC.LineSeries, bbStyle);
  const markers = LWC.createSeriesMarkers(candles, []);
  let times = [];
  let fillsAt = new Map();
  let priceLines = [];
  let bars = new Map();

  async function loadChart() {
    let data;
    try {
      ({ data } = await post('/chart/data', { exchange, pair }));
    } catch (err) {
      chartNote.textContent = `No market data: ${err.message}`;
      candles.setData([]);
      return;
    }
    chartNote.textContent = '';
    times = data.time.map(t => Math.floor(t / 1000));
    bars = new Map();
    candles.setData(times.map((t, i) => {
      const b = { time: t, open: data.open[i], high: data.high[i], low: data.low[i], close: data.close[i] };
      bars.set(t, b);
      return b;
    }));
    const line = (vals) => times.map((t, i) => (vals[i] == null ? { time: t } : { time: t, value: vals[i] }));
    const ind = data.indicators || {};
    ema.setData(line(ind.ema?.values || []));
    ema.applyOptions({ title: ind.ema ? `EMA ${ind.ema.period}` : '' });
    bbUpper.setData(line(ind.bollinger?.upper || []));
    bbLower.setData(line(ind.bollinger?.lower || []));
    bbUpper.applyOptions({ title: ind.bollinger ? `BB ${ind.bollinger.period}` : '' });
    await loadMarks();
  }

  // Marks are fills; each is drawn on the candle that contains it.
  async function loadMarks() {
    if (times.length === 0) return;
    const interval = times.length > 1 ? Math.max(1, Math.round((times[1] - times[0]) / 60)) : 5;
    let marks = [];
    try {
      marks = await get('/chart/marks', { exchange, pair, interval, startTime: times[0], endTime: Math.max(times[times.length - 1] + interval * 60, Math.ceil(Date.now() / 1000) + 60) });
    } catch { /* no marks: the candles still stand */ }
    fillsAt = new Map();
    const list = [];
    for (const m of marks || []) {
      let lo = 0, hi = times.length - 1;
      while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (times[mid] <= m.time) lo = mid; else hi = mid - 1; }
      const t = times[lo];
      const buy = /buy/i.test((m.tooltip || [])[0] || m.label || '');
      list.push({ time: t, position: buy ? 'belowBar' : 'aboveBar', shape: buy ? 'arrowUp' : 'arrowDown', color: buy ? c.pos : c.neg, text: buy ? '▲' : '▼' });
      if (!fillsAt.has(t)) fillsAt.set(t, []);
      fillsAt.get(t).push((m.tooltip || []).join(' · '));
    }
    list.sort((a, b) => a.time - b.time);
    markers.setMarkers(list);
    chartBox.dataset.fills = String(list.length);
  }

  chart.subscribeCrosshairMove((p) => {
    const b = p.time != null ? bars.get(p.time) : null;
    if (!b) { legend.textContent = `${key} · ${tz}`; return; }
    const fills = fillsAt.get(p.time) || [];
    legend.textContent = `${dateTime(p.time * 1000, tz)}  O ${num(b.open, 8)} H ${num(b.high, 8)} L ${num(b.low, 8)} C ${num(b.close, 8)}` +
      (fills.length ? `  ·  fills: ${fills.join(' | ')}` : '');
  });
  legend.textContent = `${key} · ${tz}`;

  // --- open orders (table and price lines)
  let open = [];
  async function loadOpen() {
    try {
      ({ data: open } = await get('/orders/open', { key }));
    } catch (err) {
      replace(openBox, h('p', { class: 'error', role: 'alert' }, err.message));
      return;
    }
    for (const l of priceLines) candles.removePriceLine(l);
    priceLines = [];
    const items = [];
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
        const title = `${o.side} ${what}${num(o.amount, 8)}`;
        priceLines.push(candles.createPriceLine({ price, color: o.side === 'buy' ? c.pos : c.neg, lineWidth: 1, lineStyle: 1, axisLabelVisible: true, title }));
        items.push(h('li', { dataset: { id: String(o.id) } }, `${o.type} ${title} @ ${num(price, 8)}`));
      }
    }
    replace(linesList, items);
    if (open.length === 0) {
      replace(openBox, h('p', { class: 'muted', id: 'no-open' }, 'No open orders on this pair.'));
      return;
    }
    replace(openBox, h('div', { class: 'table-wrap' }, h('table', { id: 'open-table' },
      h('thead', null, h('tr', null, ['Time', 'Side', 'Type', 'State', 'Price', 'Stop', 'Amount', 'Filled', ''].map((l, i) => h('th', { scope: 'col', class: i >= 4 && i < 8 ? 'num' : null }, l)))),
      h('tbody', null, open.map(o => h('tr', { dataset: { id: String(o.id) } },
        h('td', null, dateTime(o.time, tz)), h('td', { class: o.side === 'buy' ? 'pos' : 'neg' }, o.side), h('td', null, o.type),
        h('td', null, o.state + (o.cancelRequested ? ' (cancelling)' : '')),
        h('td', { class: 'num' }, num(o.rate || o.price || o.limitPrice, 8)), h('td', { class: 'num' }, o.stopPrice ? num(o.stopPrice, 8) : '–'),
        h('td', { class: 'num' }, num(o.amount, 8)), h('td', { class: 'num' }, num(o.filled, 8)),
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

  // --- ticket
  const state = { side: 'buy', kind: 'limit' };
  const inputs = {};
  const errors = {};
  const formError = h('p', { class: 'error', id: 'ticket-error', role: 'alert', hidden: true });
  const result = h('p', { class: 'ok', id: 'ticket-result', role: 'status' });
  const fieldsBox = h('div');
  const confirmBox = h('div', { id: 'ticket-confirm', hidden: true, class: 'confirm' });
  const review = h('button', { type: 'submit', class: 'primary', id: 'ticket-review' }, 'Review order');

  function fieldName(f) { return f.replace('?', ''); }
  function drawFields() {
    const k = kinds[state.kind];
    replace(fieldsBox, k.fields.map(f => {
      const name = fieldName(f);
      inputs[name] = inputs[name] || h('input', { id: 't-' + name, name, type: 'number', step: 'any', inputmode: 'decimal', 'aria-describedby': 't-' + name + '-error' });
      errors[name] = errors[name] || h('div', { class: 'field-error', id: 't-' + name + '-error', role: 'alert' });
      return h('div', null, h('label', { for: 't-' + name }, fieldLabels[f] + (name === 'amt' ? ` (${base})` : ` (${quote})`)), inputs[name], errors[name]);
    }));
  }
  function clearErrors() {
    for (const e of Object.values(errors)) e.textContent = '';
    formError.hidden = true;
    for (const i of Object.values(inputs)) i.removeAttribute('aria-invalid');
  }
  function body() {
    const data = { exch: exchange, pair };
    for (const f of kinds[state.kind].fields) {
      const name = fieldName(f);
      const v = inputs[name].value.trim();
      if (v === '' && f.endsWith('?')) continue;
      data[name] = v === '' ? null : Number(v);
    }
    return data;
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
      const d = body();
      const k = kinds[state.kind];
      const parts = k.fields.map(fieldName).filter(n => d[n] != null).map(n => `${fieldLabels[n] || n} ${num(d[n], 8)}`);
      replace(confirmBox,
        h('p', { id: 'ticket-summary' }, `${state.side === 'buy' ? 'Buy' : 'Sell'} ${k.label.toLowerCase()} on ${key}: ${parts.join(', ') || 'no values'}`),
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
      await Promise.all([loadOpen(), loadChart()]);
    } catch (err) {
      hideConfirm();
      const f = fieldOf(err.message, kinds[state.kind].fields.map(fieldName));
      if (f) {
        errors[f].textContent = err.message;
        inputs[f].setAttribute('aria-invalid', 'true');
        inputs[f].focus();
      } else {
        formError.textContent = err.message;
        formError.hidden = false;
      }
    }
  }
  drawFields();
  replace(ticket, form);

  await Promise.all([loadChart(), loadOpen()]);

  const refresh = debounce(() => { loadOpen(); loadMarks(); }, 300);
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
  };
  window.addEventListener('themechange', onTheme);
  return () => { off?.(); clearInterval(timer); window.removeEventListener('themechange', onTheme); chart.destroy(); };
}
