// Overview: PNL by period, win rate, best and worst trade, the cumulative
// PNL line over daily bars, daily figures and the per-pair table, all from
// POST pnl/overview in the chosen time zone.

import { h, replace, num, signed, tone, dateTime, splitKey } from './dom.js';
import { get, post } from './api.js';
import { debounce } from './live.js';

const periods = [
  ['today', 'Today'], ['yesterday', 'Yesterday'], ['weekAgo', '7 days'],
  ['monthAgo', '30 days'], ['yearAgo', 'Year'], ['total', 'Total'],
];

const pairColumns = [
  { key: 'key', label: 'Pair', text: true },
  { key: 'strategy', label: 'Strategy', text: true },
  { key: 'pnl', label: 'PNL' },
  { key: 'trades', label: 'Trades' },
  { key: 'volume', label: 'Volume' },
  { key: 'unrealized', label: 'Unrealized' },
];

function metric(id, label, value, unit, extra) {
  return h('div', { class: 'card', id: 'm-' + id, dataset: { value: value == null ? '' : String(value) } },
    h('div', { class: 'label' }, label),
    h('div', { class: 'value ' + (typeof value === 'number' ? tone(value) : '') },
      typeof value === 'number' ? signed(value, 8) : (value ?? '–'),
      unit && typeof value === 'number' ? h('span', { class: 'unit' }, ' ' + unit) : null),
    extra ? h('div', { class: 'sub' }, extra) : null);
}

export async function render(view, ctx) {
  performance.mark('overview-start');
  let unit = '';
  const charts = [];
  const state = { sort: 'pnl', dir: -1 };

  // Pairs of several quote currencies: the API answers "All" in one
  // reporting currency (unit), each quote's own total beside it (perQuote)
  // and what had no rate apart (unconverted). The picker then offers that
  // total or one quote alone. A reader that cannot convert (ClickHouse)
  // refuses "All" with a 400: then one quote at a time, learnt from the
  // configuration's pairs.
  let quote = localStorage.getItem('quote') || '';
  let quotes = [];
  let allUnit = ''; // the reporting currency, when "All" can be answered
  const load = () => post('/pnl/overview', { timezone: ctx.tz, keys: ['All'], ...(quote ? { quote } : {}) });
  const quotesOf = async () => {
    const { config } = await get('/config/full');
    const set = new Set();
    for (const pairs of Object.values(config.pairs || {})) for (const p of Object.keys(pairs || {})) set.add(p.split('-')[0]);
    return [...set].sort();
  };
  const loadFirst = async () => {
    const remembered = quote;
    quote = '';
    try {
      const all = await load();
      quotes = Object.keys(all.perQuote || {}).sort();
      if (quotes.length < 2) { quotes = []; return all; }
      allUnit = all.unit;
      if (!quotes.includes(remembered)) return all;
      quote = remembered;
      return load();
    } catch (err) {
      if (err.status !== 400) throw err;
      quotes = await quotesOf();
      if (quotes.length < 2) throw err;
      quote = quotes.includes(remembered) ? remembered : quotes[0];
      return load();
    }
  };
  // The chart module loads while the figures are computed.
  const [first, chartMod] = await Promise.all([loadFirst(), import('./chart.js')]);
  let data = first;
  performance.mark('overview-data');

  const cards = h('section', { class: 'cards', 'aria-label': 'PNL by period' });
  const chartBox = h('div', { class: 'chart', id: 'pnl-chart', role: 'img', 'aria-label': 'Cumulative PNL line over daily PNL bars' });
  const dailyBox = h('div');
  const pairsBox = h('div');

  function drawCards() {
    const t = data.total || {};
    replace(cards,
      periods.map(([k, label]) => metric(k, label, data[k]?.pnl ?? 0, unit)),
      metric('winrate', 'Win rate', t.numberOfTrades ? `${t.winRate} %` : '–', null, `${t.winning ?? 0} won · ${t.losing ?? 0} lost`),
      metric('best', 'Best trade', t.heroTrade && t.winning + t.losing + t.breakeven > 0 ? t.heroTrade.pnl : null, unit,
        t.heroTrade?.time ? dateTime(t.heroTrade.time, ctx.tz) : null),
      metric('worst', 'Worst trade', t.fuckupTrade && t.winning + t.losing + t.breakeven > 0 ? t.fuckupTrade.pnl : null, unit,
        t.fuckupTrade?.time ? dateTime(t.fuckupTrade.time, ctx.tz) : null));
  }

  let chart, bars, line;
  function drawChart() {
    const { LWC, makeChart, colors } = chartMod;
    const c = colors();
    if (!chart) {
      chart = makeChart(chartBox, {
        leftPriceScale: { visible: true }, rightPriceScale: { visible: true },
        timeScale: { fixLeftEdge: true, fixRightEdge: true },
      });
      charts.push(chart);
      bars = chart.addSeries(LWC.HistogramSeries, { priceScaleId: 'left', title: 'daily', priceFormat: { type: 'price', precision: 2, minMove: 0.01 } });
      line = chart.addSeries(LWC.LineSeries, { priceScaleId: 'right', title: 'cumulative', lineWidth: 2, color: c.accent });
    }
    const days = data.dailyHistory || [];
    bars.setData(days.map(d => ({ time: d.date, value: d.pnl, color: (d.pnl >= 0 ? c.pos : c.neg) + '99' })));
    line.setData(days.map(d => ({ time: d.date, value: d.cumulativePnl })));
    line.applyOptions({ color: c.accent });
    chart.timeScale().fitContent();
  }

  function drawDaily() {
    const days = (data.dailyHistory || []).slice(-60).reverse();
    replace(dailyBox, h('details', { open: true, class: 'daily' },
      h('summary', null, `Daily figures (${ctx.tz}${days.length === 60 ? ', last 60 days' : ''})`),
      h('div', { class: 'table-wrap' }, h('table', { id: 'daily' },
        h('thead', null, h('tr', null, ['Date', 'Trades', 'Volume', 'PNL', 'Cumulative'].map((l, i) => h('th', { scope: 'col', class: i ? 'num' : null }, l)))),
        h('tbody', null, days.map(d => h('tr', { dataset: { date: d.date } },
          h('td', null, d.date), h('td', { class: 'num' }, d.numberOfTrades), h('td', { class: 'num' }, num(d.totalVolume, 8)),
          h('td', { class: 'num ' + tone(d.pnl), 'data-col': 'pnl' }, signed(d.pnl, 8)),
          h('td', { class: 'num ' + tone(d.cumulativePnl) }, signed(d.cumulativePnl, 8)))))))));
  }

  function pairRows() {
    const pnl = new Map((data.pnlsPerPair || []).map(p => [p.key, p.pnl]));
    return (data.detailedPerPair || []).map(d => ({
      key: d.key, strategy: d.strategy, pnl: pnl.get(d.key) ?? d.cumulative_pnl,
      trades: (d.buy_count || 0) + (d.sell_count || 0),
      volume: (d.cumulative_buy_value || 0) + (d.cumulative_sell_value || 0),
      unrealized: d.unrealized_pnl || 0,
    }));
  }

  function drawPairs() {
    const rows = pairRows();
    const col = pairColumns.find(c => c.key === state.sort);
    rows.sort((a, b) => (col.text ? String(a[state.sort]).localeCompare(String(b[state.sort])) : a[state.sort] - b[state.sort]) * state.dir);
    replace(pairsBox, h('div', { class: 'table-wrap' }, h('table', { id: 'pairs' },
      h('caption', null, 'Pairs (sort by a column heading)'),
      h('thead', null, h('tr', null, pairColumns.map(c => h('th', {
        scope: 'col', class: c.text ? null : 'num',
        'aria-sort': state.sort === c.key ? (state.dir > 0 ? 'ascending' : 'descending') : null,
      }, h('button', {
        type: 'button', class: 'sort', dataset: { sort: c.key },
        onclick: () => {
          if (state.sort === c.key) state.dir = -state.dir;
          else { state.sort = c.key; state.dir = c.text ? 1 : -1; }
          drawPairs();
          pairsBox.querySelector(`button[data-sort="${c.key}"]`).focus();
        },
      }, c.label, state.sort === c.key ? (state.dir > 0 ? ' ▲' : ' ▼') : ''))))),
      h('tbody', null, rows.map(r => h('tr', { dataset: { key: r.key } },
        h('td', null, h('a', { href: '#/pair/' + encodeURIComponent(r.key) }, r.key)),
        h('td', null, r.strategy || '–'),
        h('td', { class: 'num ' + tone(r.pnl), 'data-col': 'pnl' }, signed(r.pnl, 8)),
        h('td', { class: 'num', 'data-col': 'trades' }, r.trades),
        h('td', { class: 'num', 'data-col': 'volume' }, num(r.volume, 8)),
        h('td', { class: 'num ' + tone(r.unrealized), 'data-col': 'unrealized' }, signed(r.unrealized, 8))))))));
  }

  // Over several quotes: how the totals were converted, and the amounts
  // with no rate known at their time, which are never guessed but listed
  // apart, each in its own currency.
  const conversionBox = h('p', { class: 'muted small', id: 'conversion' });
  function drawConversion() {
    conversionBox.hidden = !data.perQuote;
    if (!data.perQuote) return;
    const rest = Object.entries(data.unconverted || {}).sort(([a], [b]) => a.localeCompare(b));
    replace(conversionBox, `Totals in ${data.unit} at rates from the log; pair figures in each pair's own quote currency.`,
      rest.length === 0 ? null : h('span', { id: 'unconverted' }, ` Not converted (no rate at the time): ` +
        rest.map(([cur, u]) => `${signed(u.pnl, 8)} ${cur} over ${u.numberOfTrades} trade${u.numberOfTrades === 1 ? '' : 's'}`).join(' · ') + '.'));
  }

  function drawAll() {
    unit = data.unit || '';
    drawConversion();
    drawCards();
    drawChart();
    drawDaily();
    drawPairs();
  }

  const options = [...(allUnit ? [['', `All, in ${allUnit}`]] : []), ...quotes.map(q => [q, q])];
  const quotePicker = quotes.length > 1 ? h('div', null, h('label', { for: 'quote' }, 'Quote currency'),
    h('select', {
      id: 'quote',
      onchange: async (e) => {
        quote = e.target.value;
        localStorage.setItem('quote', quote);
        data = await load();
        unitLabel.textContent = `in ${data.unit}, days in ${ctx.tz}`;
        drawAll();
      },
    }, options.map(([value, label]) => h('option', { value, selected: value === quote }, label)))) : null;
  const unitLabel = h('span', { class: 'muted small', id: 'unit' }, data.unit ? `in ${data.unit}, days in ${ctx.tz}` : '');
  replace(view,
    h('div', { class: 'row' }, h('h1', null, 'Overview ', unitLabel), quotePicker),
    cards,
    conversionBox,
    h('section', { 'aria-labelledby': 'chart-title' }, h('h2', { id: 'chart-title' }, 'PNL over time'), chartBox),
    dailyBox,
    h('section', { 'aria-labelledby': 'pairs-title' }, h('h2', { id: 'pairs-title' }, 'Pairs'), pairsBox));
  drawAll();
  performance.mark('overview-ready');
  performance.measure('overview', 'app-start', 'overview-ready');
  performance.measure('overview-draw', 'overview-data', 'overview-ready');

  // Fills change the figures: refresh when the log says so.
  const refresh = debounce(async () => {
    try { data = await load(); drawAll(); } catch { /* the next event retries */ }
  }, 500);
  const off = ctx.live?.on(ev => { if (ev.type === 'OrderFilled') refresh(); });
  const onTheme = () => drawChart(); // bar and line colours follow the theme
  window.addEventListener('themechange', onTheme);
  return () => { off?.(); window.removeEventListener('themechange', onTheme); charts.forEach(c => c.destroy()); };
}
