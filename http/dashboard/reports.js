// Reports: the books an accountant reads (GET reports/statement and
// reports/realized): for a period, a lot matching method and a reporting
// currency, the statement per pair (opening + acquired − disposed =
// closing), the realized gains with every disposal's lots, a page at a
// time, and each export as a download. The zone is the header's (it sets
// the period's days and the holding days); as of a past time (the header's
// picker) the books are read as they stood then.

import { h, replace } from './dom.js';
import { get, query, withAsOf } from './api.js';
import { money, withUnit, count, tone, dateTime, zoneParts, markets } from './fmt.js';

const methods = [
  ['', 'As configured'], ['fifo', 'FIFO: oldest lot first'], ['lifo', 'LIFO: newest lot first'],
  ['hifo', 'HIFO: dearest lot first'], ['lofo', 'LOFO: cheapest lot first'], ['average', 'Average cost'],
];
const exportFormats = [
  ['fills', 'Fills (every field)'], ['koinly', 'Koinly'], ['cointracking', 'CoinTracking'],
  ['cointracker', 'CoinTracker'], ['realized', 'Realized gains'],
];
const PAGE = 25;

// fig is a figure and its unit (set smaller), kept on one line: a table
// that must fit wraps between figures, never inside one.
function fig(value, unit) {
  return h('span', { class: 'fig' }, value, unit ? h('span', { class: 'u' }, ' ' + unit) : null);
}

// keyText is a pair key that a narrow table may break after its exchange.
function keyText(key) {
  const i = key.indexOf('/') + 1;
  return [h('span', { class: 'fig' }, key.slice(0, i)), h('wbr'), h('span', { class: 'fig' }, key.slice(i))];
}

function ymd(ms, tz) {
  const p = zoneParts(ms, tz);
  const z = (n, w = 2) => String(n).padStart(w, '0');
  return `${z(p.year, 4)}-${z(p.month)}-${z(p.day)}`;
}

export async function render(view, ctx) {
  const tz = ctx.tz;
  const now = ctx.asOf || Date.now();
  const saved = JSON.parse(sessionStorage.getItem('reports') || '{}');
  const from = h('input', { type: 'date', id: 'r-from', required: true, value: saved.from || `${ymd(now, tz).slice(0, 4)}-01-01` });
  const to = h('input', { type: 'date', id: 'r-to', required: true, value: saved.to || ymd(now, tz) });
  const method = h('select', { id: 'r-method' }, methods.map(([v, l]) => h('option', { value: v, selected: v === (saved.method || '') }, l)));
  const currency = h('input', { id: 'r-currency', value: saved.currency || '', placeholder: 'configured', size: 8, maxlength: 32, autocomplete: 'off' });
  const error = h('p', { class: 'error', id: 'r-error', role: 'alert', hidden: true });
  const statementBox = h('div', { id: 'statement-box' });
  const totalsBox = h('div', { id: 'realized-totals' });
  const realizedBox = h('div', { id: 'realized-box' });
  const status = h('p', { id: 'realized-status', class: 'muted', role: 'status' });
  const prev = h('button', { type: 'button', id: 'r-prev', onclick: () => showPage(page - 1) }, '← Earlier');
  const next = h('button', { type: 'button', id: 'r-next', onclick: () => showPage(page + 1) }, 'Later →');
  const downloads = h('ul', { id: 'exports', class: 'downloads' });
  const summary = h('p', { id: 'r-summary', class: 'muted small' });

  const form = h('form', { id: 'report-form', class: 'panel filters', onsubmit: (e) => { e.preventDefault(); showAll(); } },
    h('div', null, h('label', { for: 'r-from' }, `From (${tz})`), from),
    h('div', null, h('label', { for: 'r-to' }, 'To (inclusive)'), to),
    h('div', null, h('label', { for: 'r-method' }, 'Cost basis'), method),
    h('div', null, h('label', { for: 'r-currency' }, 'Reporting currency'), currency),
    h('button', { type: 'submit', class: 'primary', id: 'r-show' }, 'Show'),
    h('p', { class: 'muted small note' }, 'Holding days and the period\'s days are counted in the time zone chosen at the top; a "none" currency reports in each pair\'s quote only.'));

  replace(view, h('h1', null, 'Reports'), form, error, summary,
    h('section', { 'aria-labelledby': 'st-title' }, h('h2', { id: 'st-title' }, 'Statement'), statementBox),
    h('section', { 'aria-labelledby': 'rg-title' }, h('h2', { id: 'rg-title' }, 'Realized gains'), totalsBox,
      h('div', { class: 'row toolbar' }, prev, next, status), realizedBox),
    h('section', { 'aria-labelledby': 'ex-title' }, h('h2', { id: 'ex-title' }, 'Exports'),
      h('p', { class: 'muted small' }, 'CSV files of the same period and method; the tax tools\' dates are in UTC, as their import pages ask.'), downloads));

  let page = 0;
  let disposals = 0;
  // The pairs' markets (fmt.js: their amounts' precision), loaded for the
  // keys of each answer before it is drawn.
  let mks = new Map();
  const mk = (key) => mks.get(key);
  async function loadMarkets(st, r) {
    const refs = {};
    for (const l of st?.lines || []) {
      const q = Number(l.acquired.quantity) || Number(l.disposed.quantity) || Number(l.closing.quantity);
      refs[l.key] ??= q ? (Number(l.acquired.cost) || Number(l.disposed.proceeds) || Number(l.closing.costBasis)) / q : 0;
    }
    for (const d of r?.rows || []) refs[d.key] ??= Number(d.matched) ? Number(d.proceeds) / Number(d.matched) : 0;
    const missing = Object.keys(refs).filter(k => !mks.has(k));
    if (missing.length) for (const [k, v] of await markets(missing, refs)) mks.set(k, v);
  }

  // params are the request's parameters: the form's, the zone, and the
  // as-of time for the routes that take it.
  function params(route) {
    const p = { from: from.value, to: to.value, timezone: tz, method: method.value, currency: currency.value.trim() };
    return withAsOf(route, p, ctx.asOf);
  }

  function fail(err) {
    error.textContent = err.message;
    error.hidden = false;
  }

  function drawStatement(st) {
    const lines = st.lines || [];
    summary.textContent = `Cost basis ${st.method.toUpperCase()}, ${dateTime(st.from, tz).slice(0, 10)} to ${st.to ? dateTime(st.to - 1, tz).slice(0, 10) : 'now'} (${tz})` +
      (ctx.asOf ? `, the books as of ${dateTime(ctx.asOf, tz)}` : '') + '.';
    if (lines.length === 0) {
      replace(statementBox, h('p', { class: 'muted', id: 'statement-empty' }, 'No fill before the end of this period.'));
      return;
    }
    // Quantities in the pair's precision, money in its currency's, each
    // with its unit: a row's BTC and USDT never look alike.
    const q = (l, n) => fig(mk(l.key).amount(n), l.asset);
    const m = (l, n, opts) => fig(money(n, l.quote, opts), l.quote);
    replace(statementBox, h('div', { class: 'table-wrap' }, h('table', { id: 'statement', class: 'stack fits' },
      h('caption', null, 'Per pair, in its quote currency: quantities and cost of the lots held; opening + acquired − disposed = closing'),
      h('thead', null, h('tr', null, ['Pair', 'Opening', 'Acquired', 'Disposed', 'Proceeds', 'Fees', 'Realized', 'Closing', 'Unrealized']
        .map((t, i) => h('th', { scope: 'col', class: i ? 'num' : null }, t)))),
      h('tbody', null, lines.map(l => h('tr', { dataset: { key: l.key } },
        h('td', { class: 'key' }, keyText(l.key)),
        h('td', { class: 'num', 'data-label': 'Opening', 'data-col': 'opening' }, q(l, l.opening.quantity), h('span', { class: 'sub' }, fig(money(l.opening.costBasis, l.quote), l.quote))),
        h('td', { class: 'num', 'data-label': 'Acquired', 'data-col': 'acquired' }, q(l, l.acquired.quantity), h('span', { class: 'sub' }, fig(money(l.acquired.cost, l.quote), l.quote))),
        h('td', { class: 'num', 'data-label': 'Disposed', 'data-col': 'disposed' }, q(l, l.disposed.quantity), h('span', { class: 'sub' }, fig(money(l.disposed.costBasis, l.quote), l.quote))),
        h('td', { class: 'num', 'data-label': 'Proceeds', 'data-col': 'proceeds' }, m(l, l.disposed.proceeds)),
        h('td', { class: 'num', 'data-label': 'Fees', 'data-col': 'fees' }, m(l, l.fees),
          l.unconvertedFees.length ? h('span', { class: 'sub' }, '+ ' + l.unconvertedFees.map(f => withUnit(f.amount, f.asset)).join(', ')) : null),
        h('td', { class: 'num ' + tone(l.realizedGain), 'data-label': 'Realized', 'data-col': 'realized' }, m(l, l.realizedGain, { sign: true })),
        h('td', { class: 'num', 'data-label': 'Closing', 'data-col': 'closing' }, q(l, l.closing.quantity), h('span', { class: 'sub' }, fig(money(l.closing.costBasis, l.quote), l.quote))),
        h('td', { class: 'num ' + tone(l.unrealizedGain), 'data-label': 'Unrealized', 'data-col': 'unrealized' }, l.unrealizedGain == null ? '–' : m(l, l.unrealizedGain, { sign: true }))))))),
    st.inCurrency ? h('p', { class: 'small', id: 'statement-currency' },
      `In ${st.inCurrency.currency}: realized `, h('strong', { class: tone(st.inCurrency.total.realizedGain) }, withUnit(st.inCurrency.total.realizedGain, st.inCurrency.currency, { sign: true })),
      `, fees ${withUnit(st.inCurrency.total.fees, st.inCurrency.currency)}, closing value ${withUnit(st.inCurrency.total.closingValue, st.inCurrency.currency)}, unrealized ${withUnit(st.inCurrency.total.unrealizedGain, st.inCurrency.currency, { sign: true })}.`,
      st.inCurrency.unconverted.length ? ` Without a rate to ${st.inCurrency.currency}, not in these: ${st.inCurrency.unconverted.join(', ')}.` : '') : null);
  }

  function drawTotals(r) {
    const rows = r.totals || [];
    const cur = r.inCurrency;
    replace(totalsBox, rows.length === 0 ? null : h('div', { class: 'table-wrap' }, h('table', { id: 'realized-assets', class: 'stack fits' },
      h('caption', null, `Per asset, in its quote; long term: held more than ${count(r.holdingPeriodDays)} days`),
      h('thead', null, h('tr', null, ['Asset', 'Disposals', 'Proceeds', 'Cost basis', 'Fees', 'Short term', 'Long term', 'Gain']
        .map((t, i) => h('th', { scope: 'col', class: i ? 'num' : null }, t)))),
      h('tbody', null, rows.map(t => h('tr', { dataset: { asset: t.asset, quote: t.quote } },
        h('td', { class: 'key' }, `${t.asset} (${t.quote})`),
        h('td', { class: 'num', 'data-label': 'Disposals' }, count(t.disposals)),
        h('td', { class: 'num', 'data-label': 'Proceeds' }, fig(money(t.proceeds, t.quote), t.quote)),
        h('td', { class: 'num', 'data-label': 'Cost basis' }, fig(money(t.costBasis, t.quote), t.quote)),
        h('td', { class: 'num', 'data-label': 'Fees' }, fig(money(t.fees, t.quote), t.quote),
          t.unconvertedFees.length ? h('span', { class: 'sub' }, '+ ' + t.unconvertedFees.map(f => withUnit(f.amount, f.asset)).join(', ')) : null),
        h('td', { class: 'num ' + tone(t.shortTermGain), 'data-label': 'Short term', 'data-col': 'short' }, fig(money(t.shortTermGain, t.quote, { sign: true }), t.quote)),
        h('td', { class: 'num ' + tone(t.longTermGain), 'data-label': 'Long term', 'data-col': 'long' }, fig(money(t.longTermGain, t.quote, { sign: true }), t.quote)),
        h('td', { class: 'num ' + tone(t.gain), 'data-label': 'Gain', 'data-col': 'gain' }, fig(money(t.gain, t.quote, { sign: true }), t.quote))))))),
    cur ? h('p', { class: 'small', id: 'realized-currency' }, `In ${cur.currency}: gain `,
      h('strong', { class: tone(cur.total.gain) }, withUnit(cur.total.gain, cur.currency, { sign: true })),
      ` (short term ${withUnit(cur.total.shortTermGain, cur.currency, { sign: true })}, long term ${withUnit(cur.total.longTermGain, cur.currency, { sign: true })}) on proceeds of ${withUnit(cur.total.proceeds, cur.currency)}.`,
      cur.unconverted.length ? ` Without a rate to ${cur.currency}: ` + cur.unconverted.map(u => `${withUnit(u.gain, u.quote, { sign: true })} of ${u.asset}`).join(', ') + ', not in these.' : '') : null);
  }

  function lotRows(d) {
    return d.lots.map(u => h('tr', { class: 'lot' },
      h('td', { 'data-label': 'Lot' }, `bought ${dateTime(u.acquiredAt, tz)}`),
      h('td', { 'data-label': 'Buy order', class: 'small mono', title: 'the buy order\'s id' }, u.acquired && u.acquired !== 'order' ? u.acquired : '#' + u.buyOrderId),
      h('td', { class: 'num', 'data-label': 'Quantity' }, fig(mk(d.key).amount(u.quantity), d.asset)),
      h('td', { class: 'num', 'data-label': 'Proceeds' }, fig(money(u.proceeds, d.quote), d.quote)),
      h('td', { class: 'num', 'data-label': 'Cost basis' }, fig(money(u.costBasis, d.quote), d.quote)),
      h('td', { class: 'num', 'data-label': 'Fee' }, fig(money(u.fee, d.quote), d.quote)),
      h('td', { class: 'num ' + tone(u.gain), 'data-label': 'Gain' }, fig(money(u.gain, d.quote, { sign: true }), d.quote)),
      h('td', { 'data-label': 'Held' }, `${count(u.holdingDays)} d, ${u.term}`)));
  }

  function drawRealized(r) {
    disposals = r.disposals;
    const pages = Math.max(1, Math.ceil(disposals / PAGE));
    status.textContent = disposals === 0 ? 'No disposal in this period.'
      : `Disposals ${count(page * PAGE + 1)}–${count(page * PAGE + r.rows.length)} of ${count(disposals)} (page ${page + 1} of ${pages})`;
    prev.disabled = page === 0;
    next.disabled = page + 1 >= pages;
    replace(realizedBox, r.rows.length === 0 ? null : h('div', { class: 'table-wrap' }, h('table', { id: 'realized', class: 'stack orders' },
      h('caption', null, `Each sell and the lots it consumed (${r.method.toUpperCase()}), oldest first`),
      h('thead', null, h('tr', null, ['Sold', 'Pair', 'Quantity', 'Proceeds', 'Cost basis', 'Fee', 'Gain', 'Held']
        .map((t, i) => h('th', { scope: 'col', class: i > 1 && i < 7 ? 'num' : null }, t)))),
      r.rows.map(d => h('tbody', { dataset: { order: String(d.orderId) } },
        h('tr', { class: 'order' },
          h('td', { 'data-label': 'Sold' }, dateTime(d.disposedAt, tz)),
          h('td', { 'data-label': 'Pair' }, keyText(d.key),
            d.kind && d.kind !== 'order' ? h('span', { class: 'sub', 'data-col': 'kind' }, d.kind === 'external' ? 'external trade' : d.kind) : null),
          h('td', { class: 'num', 'data-label': 'Quantity' }, fig(mk(d.key).amount(d.matched), d.asset),
            Number(d.unmatched.quantity) > 0 ? h('span', { class: 'sub' }, `+ ${mk(d.key).amount(d.unmatched.quantity)} ${d.asset} never bought`) : null,
            Number(d.unknownCost?.quantity) > 0 ? h('span', { class: 'sub', 'data-col': 'unknown-cost' }, `+ ${mk(d.key).amount(d.unknownCost.quantity)} ${d.asset} of unknown cost`) : null),
          h('td', { class: 'num', 'data-label': 'Proceeds' }, fig(money(d.proceeds, d.quote), d.quote)),
          h('td', { class: 'num', 'data-label': 'Cost basis' }, fig(money(d.costBasis, d.quote), d.quote)),
          h('td', { class: 'num', 'data-label': 'Fee' }, d.fee.valued ? fig(money(d.matchedFee, d.quote), d.quote) : [fig(money(d.fee.amount, d.fee.asset), d.fee.asset), ' (no rate)']),
          h('td', { class: 'num ' + tone(d.gain), 'data-label': 'Gain', 'data-col': 'gain' }, fig(money(d.gain, d.quote, { sign: true }), d.quote),
            d.gainKnown === false ? h('span', { class: 'sub', title: 'part of what it sold has no known cost (or proceeds): its gain is not counted' }, 'partial') : null),
          h('td', { class: 'muted' }, `${d.lots.length} lot${d.lots.length === 1 ? '' : 's'}`)),
        lotRows(d))))));
  }

  function drawExports() {
    replace(downloads, exportFormats.map(([f, label]) => h('li', null,
      h('a', { class: 'button', id: 'x-' + f, href: `/api/v1/export/${f}.csv?${query(params('/export/' + f + '.csv'))}`, download: '' }, label))));
  }

  async function showPage(p) {
    page = Math.max(0, p);
    document.body.dataset.reportsReady = 'false';
    realizedBox.setAttribute('aria-busy', 'true');
    try {
      const r = await get('/reports/realized', { ...params('/reports/realized'), page, pageSize: PAGE });
      await loadMarkets(null, r);
      drawRealized(r);
    } catch (err) {
      fail(err);
    } finally {
      realizedBox.removeAttribute('aria-busy');
      document.body.dataset.reportsReady = 'true';
    }
  }

  async function showAll() {
    document.body.dataset.reportsReady = 'false';
    error.hidden = true;
    sessionStorage.setItem('reports', JSON.stringify({ from: from.value, to: to.value, method: method.value, currency: currency.value.trim() }));
    page = 0;
    drawExports();
    try {
      const [st, r] = await Promise.all([get('/reports/statement', params('/reports/statement')),
        get('/reports/realized', { ...params('/reports/realized'), page, pageSize: PAGE })]);
      await loadMarkets(st, r);
      drawStatement(st);
      drawTotals(r);
      drawRealized(r);
    } catch (err) {
      fail(err);
    }
    document.body.dataset.reportsReady = 'true';
  }

  await showAll();
}
