// Orders: the order history across pairs (orders/page/multi), newest first,
// filtered by pairs, side and date range, paged, with a CSV export of what
// the filter shows. The API filters by pair only: side and dates are
// filtered here, reading the server's pages (newest first) only as far
// back as the range's start.

import { h, replace, num, dateTime } from './dom.js';
import { get } from './api.js';

const PAGE = 50;
const SERVER_PAGE = 1000;

const columns = [
  ['time', 'Time'], ['key', 'Pair'], ['type', 'Side'], ['rate', 'Price'], ['amount', 'Amount'],
  ['cost', 'Cost'], ['fees', 'Fees'], ['pnl', 'PNL'], ['id', 'Order id'],
];

// dayStart returns the ms of 00:00 of `date` (YYYY-MM-DD) in zone tz.
function dayStart(date, tz) {
  const [y, m, d] = date.split('-').map(Number);
  let t = Date.UTC(y, m - 1, d);
  // Two corrections settle the zone's offset (DST included).
  for (let i = 0; i < 2; i++) {
    const p = Object.fromEntries(new Intl.DateTimeFormat('en-US', { timeZone: tz, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' })
      .formatToParts(new Date(t)).map(x => [x.type, x.value]));
    const shown = Date.UTC(+p.year, p.month - 1, +p.day, +p.hour, +p.minute, +p.second);
    t += Date.UTC(y, m - 1, d) - shown;
  }
  return t;
}

export async function render(view, ctx) {
  const { config } = await get('/config/full');
  const keys = [];
  for (const [ex, pairs] of Object.entries(config.pairs || {})) for (const p of Object.keys(pairs || {})) keys.push(`${ex}/${p}`);
  keys.sort();
  const tz = ctx.tz;

  const pairBoxes = keys.map(k => h('input', { type: 'checkbox', value: k, checked: true, id: 'f-pair-' + k }));
  const side = h('select', { id: 'f-side' }, [['', 'Both sides'], ['buy', 'Buys'], ['sell', 'Sells']].map(([v, l]) => h('option', { value: v }, l)));
  const from = h('input', { type: 'date', id: 'f-from' });
  const to = h('input', { type: 'date', id: 'f-to' });
  const status = h('p', { id: 'orders-status', role: 'status', class: 'muted' });
  const tableBox = h('div');
  const prev = h('button', { type: 'button', id: 'prev', onclick: () => show(page - 1) }, '← Newer');
  const next = h('button', { type: 'button', id: 'next', onclick: () => show(page + 1) }, 'Older →');
  const csv = h('button', { type: 'button', id: 'csv', onclick: () => exportCSV() }, 'Export CSV');

  const form = h('form', { id: 'order-filters', class: 'panel', onsubmit: (e) => { e.preventDefault(); reset(); } },
    h('fieldset', { class: 'pairs' }, h('legend', null, 'Pairs'),
      keys.length ? keys.map((k, i) => h('label', { class: 'inline', for: 'f-pair-' + k }, pairBoxes[i], ' ', k)) : h('span', { class: 'muted' }, 'No pairs configured.')),
    h('div', { class: 'row' },
      h('div', null, h('label', { for: 'f-side' }, 'Side'), side),
      h('div', null, h('label', { for: 'f-from' }, `From (${tz})`), from),
      h('div', null, h('label', { for: 'f-to' }, 'To (inclusive)'), to),
      h('button', { type: 'submit', class: 'primary', id: 'apply' }, 'Apply')));

  replace(view, h('h1', null, 'Orders'), form,
    h('div', { class: 'row toolbar' }, prev, next, csv, status), tableBox);

  // The filtered stream: rows found so far, and where the server paging is.
  let filter, rows, serverPage, done, page, total;

  function currentFilter() {
    return {
      keys: pairBoxes.filter(b => b.checked).map(b => b.value),
      side: side.value,
      from: from.value ? dayStart(from.value, tz) : null,
      // the day after `to`, at 00:00
      to: to.value ? dayStart(new Date(Date.parse(to.value) + 86400000).toISOString().slice(0, 10), tz) : null,
    };
  }

  async function fetchMore() {
    if (done) return;
    if (filter.keys.length === 0) { done = true; return; }
    const r = await get('/orders/page/multi', { 'keys[]': filter.keys, page: serverPage++, pageSize: SERVER_PAGE });
    total = r.total;
    for (const o of r.data) {
      if (filter.to != null && o.time >= filter.to) continue;
      if (filter.from != null && o.time < filter.from) { done = true; break; }
      if (filter.side && o.type !== filter.side) continue;
      rows.push(o);
    }
    if (r.data.length < SERVER_PAGE) done = true;
  }

  async function show(p) {
    page = Math.max(0, p);
    while (!done && rows.length < (page + 1) * PAGE + 1) await fetchMore();
    const slice = rows.slice(page * PAGE, (page + 1) * PAGE);
    prev.disabled = page === 0;
    next.disabled = done && rows.length <= (page + 1) * PAGE;
    status.textContent = slice.length
      ? `Showing ${page * PAGE + 1}–${page * PAGE + slice.length}${done ? ` of ${rows.length}` : ''} (of ${total} records of these pairs)`
      : 'No orders match.';
    replace(tableBox, h('div', { class: 'table-wrap' }, h('table', { id: 'orders-table' },
      h('thead', null, h('tr', null, columns.map(([k, l]) => h('th', { scope: 'col', class: ['rate', 'amount', 'cost', 'fees', 'pnl'].includes(k) ? 'num' : null }, l)))),
      h('tbody', null, slice.map(o => h('tr', { dataset: { id: String(o.id), side: o.type } },
        h('td', null, dateTime(o.time, tz)), h('td', null, o.key || o.pair),
        h('td', { class: o.type === 'buy' ? 'pos' : 'neg' }, o.type),
        h('td', { class: 'num' }, num(o.rate, 8)), h('td', { class: 'num' }, num(o.amount, 8)),
        h('td', { class: 'num' }, num(o.cost, 8)), h('td', { class: 'num' }, num(o.fees, 8)),
        h('td', { class: 'num ' + (o.pnl > 0 ? 'pos' : o.pnl < 0 ? 'neg' : '') }, o.type === 'sell' ? num(o.pnl, 8) : '–'),
        h('td', { class: 'mono' }, String(o.id), ' ',
          h('a', { href: '/api/v1/audit/proof/order?id=' + o.id, download: `order-${o.id}.proof.json`, class: 'small', dataset: { proof: String(o.id) } }, 'download proof'))))))));
  }

  async function reset() {
    filter = currentFilter();
    rows = []; serverPage = 0; done = false; total = 0;
    delete document.body.dataset.ordersReady;
    await show(0);
    document.body.dataset.ordersReady = 'true';
  }

  async function exportCSV() {
    csv.disabled = true;
    try {
      while (!done) await fetchMore();
      const esc = (v) => { const s = String(v ?? ''); return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s; };
      const lines = [['time', 'time_' + tz.replace(/\W/g, '_'), 'key', 'side', 'rate', 'amount', 'cost', 'fees', 'pnl', 'id'].join(',')];
      for (const o of rows) lines.push([o.time, dateTime(o.time, tz), o.key || o.pair, o.type, o.rate, o.amount, o.cost, o.fees, o.pnl, o.id].map(esc).join(','));
      const url = URL.createObjectURL(new Blob([lines.join('\n') + '\n'], { type: 'text/csv' }));
      const a = h('a', { href: url, download: 'orders.csv', hidden: true });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 1000);
      await show(page);
    } finally {
      csv.disabled = false;
    }
  }

  await reset();
}
