// Balances: balances per exchange (POST balances; as of a past time, what
// the exchanges had last reported by then) and the value of the
// assets over time as an area chart (POST assets/total) in a currency of
// the configured pairs' quotes. Amounts go by their asset, times by the
// chosen zone (the chart's axis and its legend too); the assets a total
// leaves out for want of a price are listed under it.

import { h, replace } from './dom.js';
import { get, post, atAsOf } from './api.js';
import { debounce } from './live.js';
import { money, withUnit, dateTime, chartMoneyFormat } from './fmt.js';
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
          h('td', { class: 'num', 'data-label': 'Available' }, money(b['Available Qty'], b.Asset)),
          h('td', { class: 'num', 'data-label': 'On order' }, money(b['On Order'], b.Asset)),
          h('td', { class: 'num', 'data-label': 'Total', 'data-col': 'total' }, withUnit(Number(b['Available Qty']) + Number(b['On Order']), b.Asset))))))))));
  }

  const { LWC, makeChart, colors, zoneTimes } = await import('./chart.js');
  const chart = makeChart(chartBox, zoneTimes(tz));
  const c = colors();
  // A value axis from 0: a total that barely moves is not drawn as swings.
  const fromZero = (original) => {
    const r = original();
    if (r?.priceRange) r.priceRange.minValue = Math.min(0, r.priceRange.minValue);
    return r;
  };
  const area = chart.addSeries(LWC.AreaSeries, {
    lineColor: c.accent, topColor: c.accent + '55', bottomColor: c.accent + '05', lineWidth: 2, autoscaleInfoProvider: fromZero,
  });
  let byTime = new Map(); // chart time (s) → point

  // The legend shows the point under the crosshair, else the latest.
  let latest = null;
  const showPoint = (pt) => {
    legend.textContent = pt ? `${dateTime(pt.timestamp, tz)}  ${withUnit(pt.amount, baseSelect.value)}` : `times in ${tz}`;
  };
  chart.subscribeCrosshairMove((p) => showPoint((p.time != null ? byTime.get(p.time) : null) || latest));
  showPoint(null);

  async function drawHistory() {
    if (!exSelect.value) { note.textContent = 'No exchange configured.'; return; }
    const base = baseSelect.value;
    let points = [];
    try {
      points = await post('/assets/total', { exchange: exSelect.value, base, start: 0, end: ctx.asOf || Date.now() });
    } catch (err) {
      note.textContent = err.message;
      area.setData([]);
      return;
    }
    byTime = new Map();
    for (const p of points || []) byTime.set(Math.floor(p.timestamp / 1000), p);
    area.applyOptions({ priceFormat: chartMoneyFormat(base) });
    area.setData([...byTime.entries()].sort((a, b) => a[0] - b[0]).map(([time, p]) => ({ time, value: p.amount })));
    chart.timeScale().fitContent();
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
  }

  await Promise.all([drawBalances(), drawHistory()]);
  const refresh = debounce(() => { drawBalances().catch(() => {}); drawHistory(); }, 1000);
  const off = ctx.live?.on((e) => { if (e.type === 'BalancesObserved' || e.type === 'OrderFilled') refresh(); });
  const onTheme = () => { const k = colors(); area.applyOptions({ lineColor: k.accent, topColor: k.accent + '55', bottomColor: k.accent + '05' }); };
  window.addEventListener('themechange', onTheme);
  return () => { off?.(); window.removeEventListener('themechange', onTheme); chart.destroy(); };
}
