// Orders: every order the log holds (GET orders/all), whatever became of
// it — resting, filled, cancelled, rejected, expired — and the orders of
// pairs no longer configured; filtered by state, side, pair and dates,
// newest first, paged, each order's fills under it; a CSV export of what
// the filter selects. As of a past time (ctx.asOf): the orders placed by
// then, each as it stood then (its fills up to that time; its state then,
// from when it ended), and the state filter, which reads today's states,
// is off.

import { h, replace } from './dom.js';
import { get } from './api.js';
import { debounce } from './live.js';
import { money, withUnit, count, tone, dateTime, dayStart, markets } from './fmt.js';
import { setupState, nextSteps } from './steps.js';

const PAGE = 50;
const EXPORT_PAGE = 200;

const states = [
  ['', 'Every state'], ['open', 'Open'], ['filled', 'Filled'], ['cancelled', 'Cancelled'],
  ['rejected', 'Rejected'], ['expired', 'Expired'],
];
const openStates = new Set(['requested', 'accepted', 'triggered']);
// Imported orders' ids start here (domain.ImportedOrderIDs, 2^51): this
// service numbers its own below them.
const IMPORTED = 2 ** 51;

function quoteOf(key) { return key.slice(key.indexOf('/') + 1).split('-')[0]; }

// asItStood returns order o as it stood at ms (its fills by then, its
// state then), or o itself when ms is null.
function asItStood(o, ms) {
  if (!ms) return o;
  const fills = o.fills.filter(f => f.time <= ms);
  const ended = o.closed && o.closed <= ms;
  const filled = fills.reduce((s, f) => s + f.amount, 0);
  const cost = fills.reduce((s, f) => s + f.amount * f.price, 0);
  const fees = {};
  for (const f of fills) fees[f.feeAsset] = (fees[f.feeAsset] || 0) + f.fee;
  const pnls = fills.filter(f => f.pnl != null);
  return {
    ...o, fills, fees, filled,
    averagePrice: filled > 0 ? cost / filled : null,
    pnl: pnls.length ? pnls.reduce((s, f) => s + f.pnl, 0) : null,
    state: ended ? o.state : o.state === 'rejected' ? 'rejected' : 'accepted',
    cancelRequested: false,
  };
}

// stateText says an order's state in words, with a partly filled one told
// apart.
function stateText(o) {
  const part = o.filled > 0 && o.filled < o.amount;
  switch (o.state) {
    case 'requested': return 'sent, no answer yet';
    case 'accepted': return part ? 'open, partly filled' : 'open';
    case 'triggered': return 'stop triggered';
    case 'cancelled': return part ? 'cancelled, partly filled' : 'cancelled';
    default: return o.state;
  }
}

// none marks a cell with nothing to say ('–'), which a narrow screen's
// card leaves out.
function none(s) { return s === '–' ? ' none' : ''; }

// unitSpan is a figure's unit, set smaller after it.
function unitSpan(unit) { return h('span', { class: 'u' }, ' ' + unit); }

// fig keeps a figure and its unit on one line (the table's text wraps
// between figures, never inside one).
function fig(...parts) { return h('span', { class: 'fig' }, parts); }

function feesText(fees) {
  const list = Object.entries(fees || {}).filter(([, v]) => v !== 0);
  return list.length ? list.map(([a, v]) => withUnit(v, a)).join(' + ') : '–';
}

// feesCell lists an order's fees, each asset's on its own line.
function feesCell(fees) {
  const list = Object.entries(fees || {}).filter(([, v]) => v !== 0);
  return list.length ? list.map(([a, v], i) => [i ? h('br') : null, fig(withUnit(v, a))]) : '–';
}

// stateWord is an order's state in the words of the state filter (open,
// filled, cancelled, rejected, expired): the CSV's state column, as the
// page says it.
function stateWord(state) {
  return openStates.has(state) ? 'open' : state;
}

export async function render(view, ctx) {
  const tz = ctx.tz;
  const past = ctx.asOf;
  let pairs = []; // every pair with an order (the server's list)
  const stateSel = h('select', { id: 'f-state', disabled: !!past }, states.map(([v, l]) => h('option', { value: v }, l)));
  const side = h('select', { id: 'f-side' }, [['', 'Both sides'], ['buy', 'Buys'], ['sell', 'Sells']].map(([v, l]) => h('option', { value: v }, l)));
  const pairSel = h('select', { id: 'f-pair' });
  const from = h('input', { type: 'date', id: 'f-from' });
  const to = h('input', { type: 'date', id: 'f-to' });
  const status = h('p', { id: 'orders-status', role: 'status', class: 'muted' });
  const countsBox = h('p', { id: 'orders-counts', class: 'muted small' });
  const tableBox = h('div');
  const emptyBox = h('div');
  const prev = h('button', { type: 'button', id: 'prev', onclick: () => show(page - 1) }, '← Newer');
  const next = h('button', { type: 'button', id: 'next', onclick: () => show(page + 1) }, 'Older →');
  const csv = h('button', { type: 'button', id: 'csv', onclick: () => exportCSV() }, 'Export CSV');

  const form = h('form', { id: 'order-filters', class: 'panel filters', onsubmit: (e) => { e.preventDefault(); show(0); } },
    h('div', null, h('label', { for: 'f-state' }, 'State'), stateSel),
    h('div', null, h('label', { for: 'f-side' }, 'Side'), side),
    h('div', null, h('label', { for: 'f-pair' }, 'Pair'), pairSel),
    h('div', null, h('label', { for: 'f-from' }, `From (${tz})`), from),
    h('div', null, h('label', { for: 'f-to' }, 'To (inclusive)'), to),
    h('button', { type: 'submit', class: 'primary', id: 'apply' }, 'Apply'),
    past ? h('p', { class: 'muted small note' }, 'As of a past time the state filter is off: it reads the orders\' states of today.') : null);

  replace(view, h('h1', null, 'Orders'), emptyBox, form, countsBox,
    h('div', { class: 'row toolbar' }, prev, next, csv, status), tableBox);

  let page = 0;
  let mk = new Map(); // pair key → fmt.Market
  const expanded = new Set();

  function query(p, size) {
    const q = { page: p, pageSize: size };
    if (stateSel.value && !past) q.state = stateSel.value;
    if (side.value) q.side = side.value;
    if (pairSel.value) q['keys[]'] = [pairSel.value];
    const fromMs = from.value ? dayStart(from.value, tz) : null;
    // the day after `to`, at 00:00
    let toMs = to.value ? dayStart(new Date(Date.parse(to.value) + 86400000).toISOString().slice(0, 10), tz) : null;
    if (past && (toMs == null || toMs > past + 1)) toMs = past + 1;
    if (fromMs != null) q.from = fromMs;
    if (toMs != null) q.to = toMs;
    return q;
  }

  function drawPairs(list) {
    if (list.join() === pairs.join()) return;
    pairs = list;
    const cur = pairSel.value;
    replace(pairSel, h('option', { value: '' }, 'Every pair'), pairs.map(k => h('option', { value: k, selected: k === cur }, k)));
  }

  function drawCounts(counts) {
    const open = ['requested', 'accepted', 'triggered'].reduce((s, k) => s + (counts[k] || 0), 0);
    const parts = [['open', open], ['filled', counts.filled], ['cancelled', counts.cancelled], ['rejected', counts.rejected], ['expired', counts.expired]]
      .filter(([, n]) => n > 0).map(([k, n]) => `${count(n)} ${k}`);
    countsBox.textContent = past ? '' : parts.length ? `Of these: ${parts.join(' · ')} (today's states).` : '';
  }

  function orderRows(o) {
    const m = mk.get(o.key);
    const q = quoteOf(o.key);
    const open = expanded.has(o.id);
    const fillsButton = o.fills.length ? h('button', {
      type: 'button', class: 'link fills-toggle', 'aria-expanded': String(open), 'aria-label': `Fills of order ${o.id}`,
      onclick: () => { if (expanded.has(o.id)) expanded.delete(o.id); else expanded.add(o.id); redraw(); },
    }, `${open ? '▾' : '▸'} ${o.fills.length} fill${o.fills.length === 1 ? '' : 's'}`) : h('span', { class: 'muted' }, 'no fill');
    const limit = o.type === 'stoplimit' ? (o.limitPrice ?? o.price) : o.price;
    const avgDiffers = o.averagePrice != null && (o.type === 'market' || m.price(o.averagePrice) !== m.price(limit));
    const rows = [h('tr', { class: 'order', dataset: { id: String(o.id), side: o.side, state: o.state } },
      h('td', { 'data-label': 'Time' }, fig(dateTime(o.time, tz)), h('span', { class: 'sub mono', title: o.id >= IMPORTED ? 'order id (imported)' : 'order id' }, '#' + o.id),
        h('a', { href: '/api/v1/audit/proof/order?id=' + o.id, download: `order-${o.id}.proof.json`, class: 'sub', dataset: { proof: String(o.id) } }, 'download proof')),
      // A narrow table may break a key after its exchange.
      h('td', { 'data-label': 'Pair', class: 'key' }, fig(o.key.slice(0, o.key.indexOf('/') + 1)), h('wbr'), fig(o.key.slice(o.key.indexOf('/') + 1))),
      h('td', { 'data-label': 'Side', class: o.side === 'buy' ? 'pos' : 'neg' }, o.side),
      h('td', { 'data-label': 'Type' }, o.type, o.stopPrice != null ? h('span', { class: 'sub' }, `stop ${m.price(o.stopPrice)}`) : null),
      h('td', { 'data-label': 'State', 'data-col': 'state', class: 'state-' + o.state, title: o.reason || null }, stateText(o)),
      h('td', { class: 'num', 'data-label': 'Price', 'data-col': 'price' },
        o.type === 'market' ? 'market' : fig(m.price(limit), unitSpan(q)),
        avgDiffers ? h('span', { class: 'sub', 'data-col': 'avg' }, fig(`avg ${m.price(o.averagePrice)} ${q}`)) : null),
      h('td', { class: 'num', 'data-label': 'Amount', 'data-col': 'amount' }, fig(m.amount(o.amount), unitSpan(m.base)),
        o.filled > 0 && o.filled < o.amount ? h('span', { class: 'sub', 'data-col': 'filled' }, fig(`filled ${m.amount(o.filled)} ${m.base}`)) : null),
      h('td', { class: 'num' + none(feesText(o.fees)), 'data-label': 'Fees', 'data-col': 'fees' }, feesCell(o.fees)),
      h('td', { class: 'num ' + (o.pnl != null ? tone(o.pnl) : 'none'), 'data-label': 'PNL', 'data-col': 'pnl' }, o.pnl != null ? fig(withUnit(o.pnl, q, { sign: true })) : '–'),
      h('td', { 'data-label': 'Fills', class: 'fills' + (o.fills.length ? '' : ' none') }, fillsButton))];
    // Why a rejected or expired order ended, on a line of its own (a
    // cancelled one's reason is its state's tooltip).
    if (o.reason && (o.state === 'rejected' || o.state === 'expired')) {
      rows.push(h('tr', { class: 'why', dataset: { order: String(o.id) } },
        h('td', { colspan: 10, 'data-label': 'Why' }, h('div', { class: 'why-text' }, o.reason))));
    }
    if (open) {
      for (const f of o.fills) {
        rows.push(h('tr', { class: 'fill', dataset: { order: String(o.id), fill: f.id } },
          h('td', { 'data-label': 'Fill' }, dateTime(f.time, tz)),
          h('td', { colspan: 4, class: 'muted', 'data-label': 'Fill id' }, 'fill ', h('span', { class: 'mono' }, f.id), ` · ${withUnit(f.price * f.amount, q)}`),
          h('td', { class: 'num', 'data-label': 'Price', 'data-col': 'price' }, fig(m.price(f.price), unitSpan(q))),
          h('td', { class: 'num', 'data-label': 'Amount', 'data-col': 'amount' }, fig(m.amount(f.amount), unitSpan(m.base))),
          h('td', { class: 'num', 'data-label': 'Fee', 'data-col': 'fees' }, fig(withUnit(f.fee, f.feeAsset))),
          h('td', { class: 'num ' + (f.pnl != null ? tone(f.pnl) : ''), 'data-label': 'PNL', 'data-col': 'pnl' }, f.pnl != null ? fig(withUnit(f.pnl, q, { sign: true })) : '–'),
          h('td')));
      }
    }
    return h('tbody', { class: open ? 'open' : null }, rows);
  }

  let last = null;
  function redraw() {
    if (!last) return;
    const list = last.data.map(o => asItStood(o, past));
    replace(tableBox, list.length === 0 ? h('p', { class: 'muted', id: 'no-orders' }, 'No orders match.') :
      h('div', { class: 'table-wrap' }, h('table', { id: 'orders-table', class: 'stack orders' },
        h('thead', null, h('tr', null, ['Time', 'Pair', 'Side', 'Type', 'State', 'Price', 'Amount', 'Fees', 'PNL', 'Fills']
          .map((l, i) => h('th', { scope: 'col', class: i >= 5 && i <= 8 ? 'num' : null }, l)))),
        list.map(orderRows))));
  }

  async function show(p) {
    page = Math.max(0, p);
    delete document.body.dataset.ordersReady;
    const r = await get('/orders/all', query(page, PAGE));
    drawPairs(r.pairs || []);
    drawCounts(r.counts || {});
    const refs = {};
    for (const o of r.data) refs[o.key] ??= o.averagePrice || o.price;
    mk = await markets([...new Set(r.data.map(o => o.key))], refs);
    last = r;
    const shown = r.data.length;
    prev.disabled = page === 0;
    next.disabled = (page + 1) * PAGE >= r.total;
    status.textContent = shown ? `Showing ${page * PAGE + 1}–${page * PAGE + shown} of ${count(r.total)}` : 'No orders match.';
    redraw();
    if (r.total === 0 && (r.pairs || []).length === 0 && !past) {
      const s = await setupState();
      replace(emptyBox, nextSteps('No orders yet.', s));
    } else {
      replace(emptyBox);
    }
    document.body.dataset.ordersReady = 'true';
  }

  async function exportCSV() {
    csv.disabled = true;
    try {
      const all = [];
      for (let p = 0; ; p++) {
        const r = await get('/orders/all', query(p, EXPORT_PAGE));
        all.push(...r.data.map(o => asItStood(o, past)));
        if ((p + 1) * EXPORT_PAGE >= r.total || r.data.length === 0) break;
      }
      const esc = (v) => { const s = String(v ?? ''); return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s; };
      // Numbers as numbers: a column of fees per asset charged (fee_USDT,
      // fee_BNB …), the state in the page's words (open, filled,
      // cancelled, rejected, expired).
      const feeAssets = [...new Set(all.flatMap(o => Object.keys(o.fees || {})))].sort();
      const lines = [['time', 'time_' + tz.replace(/\W/g, '_'), 'key', 'side', 'type', 'state', 'amount', 'price', 'stop_price',
        'filled', 'average_price', ...feeAssets.map(a => 'fee_' + a), 'pnl', 'fills', 'reason', 'id'].join(',')];
      for (const o of all) {
        lines.push([o.time, dateTime(o.time, tz), o.key, o.side, o.type, stateWord(o.state), o.amount, o.price, o.stopPrice ?? '',
          o.filled, o.averagePrice ?? '', ...feeAssets.map(a => (o.fees || {})[a] || 0),
          o.pnl ?? '', o.fills.length, o.reason || '', o.id].map(esc).join(','));
      }
      const url = URL.createObjectURL(new Blob([lines.join('\n') + '\n'], { type: 'text/csv' }));
      const a = h('a', { href: url, download: csvName(), hidden: true });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 1000);
    } finally {
      csv.disabled = false;
    }
  }

  // csvName names the export by what it holds: its dates (the filter's,
  // in the chosen zone; "start" and the day of the export, or of the
  // as-of time, for an open end) and the filters set.
  function csvName() {
    const today = dateTime(past || Date.now(), tz).slice(0, 10);
    const parts = ['tradeledger-orders', from.value || 'start', 'to', to.value || today];
    if (stateSel.value && !past) parts.push(stateSel.value);
    if (side.value) parts.push(side.value + 's');
    if (pairSel.value) parts.push(pairSel.value.replace(/[^A-Za-z0-9-]+/g, '-'));
    if (past) parts.push('as-of', dateTime(past, tz).slice(0, 16).replace(/[: ]/g, '-'));
    return parts.join('-') + '.csv';
  }

  await show(0);
  // New orders and their changes show as they happen (today only).
  const refresh = debounce(() => { if (page === 0) show(0).catch(() => {}); }, 500);
  const off = past ? null : ctx.live?.on(ev => { if (ev.stream?.startsWith('order-')) refresh(); });
  return () => off?.();
}
