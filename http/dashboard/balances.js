// Balances: balances per exchange (POST balances) and the value of the
// assets over time as an area chart (POST assets/total), in a currency of
// the configured pairs' quotes.

import { h, replace, num, dateTime } from './dom.js';
import { get, post } from './api.js';
import { debounce } from './live.js';

export async function render(view, ctx) {
  const tz = ctx.tz;
  const { config } = await get('/config/full');
  const exchanges = Object.keys(config.exchanges || {}).sort();
  const quotes = new Set();
  for (const pairs of Object.values(config.pairs || {})) for (const p of Object.keys(pairs || {})) quotes.add(p.split('-')[0]);
  if (quotes.size === 0) quotes.add('USDT');

  const tableBox = h('div', { id: 'balances-box' });
  const exSelect = h('select', { id: 'b-exchange', onchange: () => drawHistory() }, exchanges.map(e => h('option', { value: e }, e)));
  const baseSelect = h('select', { id: 'b-base', onchange: () => drawHistory() }, [...quotes].sort().map(q => h('option', { value: q }, q)));
  const chartBox = h('div', { class: 'chart', id: 'assets-chart', role: 'img', 'aria-label': 'Asset value over time' });
  const note = h('p', { id: 'assets-note', class: 'muted', role: 'status' });

  replace(view, h('h1', null, 'Balances'), tableBox,
    h('section', { 'aria-labelledby': 'assets-title' }, h('h2', { id: 'assets-title' }, 'Asset value over time'),
      h('div', { class: 'row' },
        h('div', null, h('label', { for: 'b-exchange' }, 'Exchange'), exSelect),
        h('div', null, h('label', { for: 'b-base' }, 'Valued in'), baseSelect)),
      chartBox, note));

  async function drawBalances() {
    const list = await post('/balances');
    const byEx = new Map();
    for (const b of list || []) {
      if (!byEx.has(b.Exchange)) byEx.set(b.Exchange, []);
      byEx.get(b.Exchange).push(b);
    }
    replace(tableBox, byEx.size === 0 ? h('p', { class: 'muted' }, 'No balances observed yet (the system reads them while it runs).') :
      [...byEx.entries()].map(([ex, rows]) => h('section', { 'aria-label': ex },
        h('h2', null, ex),
        h('div', { class: 'table-wrap' }, h('table', { class: 'balances', dataset: { exchange: ex } },
          h('thead', null, h('tr', null, ['Asset', 'Available', 'On order', 'Total'].map((l, i) => h('th', { scope: 'col', class: i ? 'num' : null }, l)))),
          h('tbody', null, rows.map(b => h('tr', { dataset: { asset: b.Asset } },
            h('td', null, b.Asset), h('td', { class: 'num' }, num(b['Available Qty'], 8)), h('td', { class: 'num' }, num(b['On Order'], 8)),
            h('td', { class: 'num' }, num(Number(b['Available Qty']) + Number(b['On Order']), 8))))))))));
  }

  const { LWC, makeChart, colors } = await import('./chart.js');
  const chart = makeChart(chartBox, {
    localization: { timeFormatter: (t) => dateTime(t * 1000, tz) },
    timeScale: { timeVisible: true },
  });
  const c = colors();
  const area = chart.addSeries(LWC.AreaSeries, { lineColor: c.accent, topColor: c.accent + '55', bottomColor: c.accent + '05', lineWidth: 2 });

  async function drawHistory() {
    if (!exSelect.value) { note.textContent = 'No exchange configured.'; return; }
    let points = [];
    try {
      points = await post('/assets/total', { exchange: exSelect.value, base: baseSelect.value, start: 0, end: Date.now() });
    } catch (err) {
      note.textContent = err.message;
      area.setData([]);
      return;
    }
    const seen = new Map();
    for (const p of points || []) seen.set(Math.floor(p.timestamp / 1000), p.amount);
    area.setData([...seen.entries()].sort((a, b) => a[0] - b[0]).map(([time, value]) => ({ time, value })));
    chart.timeScale().fitContent();
    const lastPoint = points?.[points.length - 1];
    note.textContent = lastPoint ? `${points.length} point${points.length === 1 ? "" : "s"}; latest ${num(lastPoint.amount, 8)} ${baseSelect.value} at ${dateTime(lastPoint.timestamp, tz)}` : 'No valued snapshots yet.';
    chartBox.dataset.points = String(points?.length || 0);
  }

  await Promise.all([drawBalances(), drawHistory()]);
  const refresh = debounce(() => { drawBalances().catch(() => {}); drawHistory(); }, 1000);
  const off = ctx.live?.on((e) => { if (e.type === 'BalancesObserved' || e.type === 'OrderFilled') refresh(); });
  const onTheme = () => { const k = colors(); area.applyOptions({ lineColor: k.accent, topColor: k.accent + '55', bottomColor: k.accent + '05' }); };
  window.addEventListener('themechange', onTheme);
  return () => { off?.(); window.removeEventListener('themechange', onTheme); chart.destroy(); };
}
