// Balances: balances per exchange (POST balances; as of a past time, what
// the exchanges had last reported by then) and the value of the
// assets over time as an area chart (POST assets/total) in a currency of
// the configured pairs' quotes. Amounts go by their asset, times by the
// chosen zone (the chart's axis and its legend too); the assets a total
// leaves out for want of a price are listed under it.

import { h, replace } from './dom.js';
import { get, post, atAsOf } from './api.js';
import { debounce } from './live.js';
import { money, withUnit, dateTime } from './fmt.js';
import { timeChart } from './timechart.js';
import { setupState, nextSteps } from './steps.js';

export async function render(view, ctx) {
  const tz = ctx.tz;
  const { config } = await get('/config/full');
  const exchanges = Object.keys(config.exchanges || {}).sort();
  // The quotes of the configured pairs; the one most pairs use is the
  // default currency to value in.
  const perQuote = new Map();
  for (const pairs of Object.values(config.pairs || {})) for (const p of Object.keys(pairs || {})) perQuote.set(p.split('-')[0], (perQuote.get(p.split('-')[0]) || 0) + 1);
  if (perQuote.size === 0) perQuote.set('USDT', 1);
  const quotes = new Set(perQuote.keys());
  const stored = localStorage.getItem('valuedIn');
  const remembered = quotes.has(stored) ? stored : [...perQuote.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0][0];

  const tableBox = h('div', { id: 'balances-box' });
  const exSelect = h('select', { id: 'b-exchange', onchange: () => drawHistory() }, exchanges.map(e => h('option', { value: e }, e)));
  const baseSelect = h('select', {
    id: 'b-base', onchange: () => { localStorage.setItem('valuedIn', baseSelect.value); drawHistory(); },
  }, [...quotes].sort().map(q => h('option', { value: q, selected: q === remembered }, q)));
  const legend = h('div', { class: 'legend mono', id: 'assets-legend', 'aria-live': 'off' });
  const chartBox = h('div', { class: 'chart', id: 'assets-chart', role: 'img', 'aria-label': `Asset value over time (times in ${tz})` });
  const note = h('p', { id: 'assets-note', class: 'muted', role: 'status' });
  const unpricedBox = h('p', { id: 'unpriced', class: 'muted small' });

  replace(view, h('h1', null, 'Balances'), tableBox,
    h('section', { 'aria-labelledby': 'assets-title' }, h('h2', { id: 'assets-title' }, 'Asset value over time'),
      h('div', { class: 'row' },
        h('div', null, h('label', { for: 'b-exchange' }, 'Exchange'), exSelect),
        h('div', null, h('label', { for: 'b-base' }, 'Valued in'), baseSelect)),
      legend, chartBox, note, unpricedBox));

  async function drawBalances() {
    const list = await post(atAsOf('/balances', ctx.asOf));
    const byEx = new Map();
    for (const b of list || []) {
      if (!byEx.has(b.Exchange)) byEx.set(b.Exchange, []);
      byEx.get(b.Exchange).push(b);
    }
    if (byEx.size === 0) {
      const s = await setupState();
      replace(tableBox, nextSteps('No balances observed yet: the system reads them from each exchange while it runs.', s, { onStarted: () => setTimeout(refresh, 1500) }));
      return;
    }
    replace(tableBox, [...byEx.entries()].map(([ex, rows]) => h('section', { 'aria-label': ex },
      h('h2', null, ex),
      h('div', { class: 'table-wrap' }, h('table', { class: 'balances stack', dataset: { exchange: ex } },
        h('thead', null, h('tr', null, ['Asset', 'Available', 'On order', 'Total'].map((l, i) => h('th', { scope: 'col', class: i ? 'num' : null }, l)))),
        h('tbody', null, rows.map(b => h('tr', { dataset: { asset: b.Asset } },
          h('td', { 'data-label': 'Asset' }, b.Asset),
          h('td', { class: 'num', 'data-label': 'Available' }, withUnit(b['Available Qty'], b.Asset)),
          h('td', { class: 'num', 'data-label': 'On order' }, withUnit(b['On Order'], b.Asset)),
          h('td', { class: 'num', 'data-label': 'Total', 'data-col': 'total' }, withUnit(Number(b['Available Qty']) + Number(b['On Order']), b.Asset))))))))));
  }

  // The value over time, on a time axis proportional to time
  // (timechart.js): a point per balance snapshot, a long pause cut out and
  // marked, the axis from 0 (a total that barely moves is not drawn as
  // swings).
  let latest = null;
  const showPoint = (pt) => {
    legend.textContent = pt ? `${dateTime(pt.timestamp, tz)}  ${withUnit(pt.amount, baseSelect.value)}` : `times in ${tz}`;
  };
  const chart = timeChart(chartBox, {
    tz, empty: 'No valued snapshots yet.',
    scales: { left: { format: (v) => money(v, baseSelect.value), unit: baseSelect.value, fromZero: true } },
    legend: (pt) => showPoint(pt || latest),
  });
  showPoint(null);
  const accent = () => getComputedStyle(document.documentElement).getPropertyValue('--accent').trim();

  async function drawHistory() {
    if (!exSelect.value) { note.textContent = 'No exchange configured.'; return; }
    const base = baseSelect.value;
    let points = [];
    try {
      points = await post('/assets/total', { exchange: exSelect.value, base, start: 0, end: ctx.asOf || Date.now() });
    } catch (err) {
      note.textContent = err.message;
      chart.setData([]);
      return;
    }
    chart.setScales({ left: { format: (v) => money(v, base), unit: base, fromZero: true } });
    chart.setData([{ kind: 'area', scale: 'left', color: accent(), width: 2, points: (points || []).map(p => ({ t: p.timestamp, v: Number(p.amount), item: p })) }]);
    const lastPoint = points?.[points.length - 1];
    latest = lastPoint || null;
    showPoint(latest);
    note.textContent = lastPoint
      ? `${points.length} point${points.length === 1 ? '' : 's'}; latest ${withUnit(lastPoint.amount, base)} at ${dateTime(lastPoint.timestamp, tz)} (${tz})`
      : 'No valued snapshots yet.';
    const left = lastPoint?.unpriced || [];
    unpricedBox.textContent = left.length
      ? `Not in the total (no price in ${base} from this exchange's fills): ${left.join(', ')}.` : '';
    unpricedBox.hidden = left.length === 0;
    chartBox.dataset.points = String(points?.length || 0);
    // Nothing to draw: the note says so, without an empty frame above it.
    chartBox.hidden = !(points?.length);
    legend.hidden = chartBox.hidden;
  }

  await Promise.all([drawBalances(), drawHistory()]);
  const refresh = debounce(() => { drawBalances().catch(() => {}); drawHistory(); }, 1000);
  const off = ctx.live?.on((e) => { if (e.type === 'BalancesObserved' || e.type === 'OrderFilled') refresh(); });
  const onTheme = () => drawHistory(); // the line's colour follows the theme
  window.addEventListener('themechange', onTheme);
  return () => { off?.(); window.removeEventListener('themechange', onTheme); chart.destroy(); };
}
