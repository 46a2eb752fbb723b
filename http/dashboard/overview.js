// Overview: PNL by period, win rate, best and worst trade, the cumulative
// PNL line over daily bars, daily figures and the per-pair table, all from
// POST pnl/overview in the chosen time zone. Every amount carries its
// currency; totals converted from several currencies say so. As of a past
// time (ctx.asOf) the figures are what the books said then (asOf=): the
// periods end on that day and the unrealized PNL is of the lots held then.

import { h, replace } from './dom.js';
import { get, post, atAsOf } from './api.js';
import { debounce } from './live.js';
import { money, withUnit, count, percent, tone, dateTime, dayStart, zoneTime } from './fmt.js';
import { timeChart } from './timechart.js';
import { setupState, nextSteps, importedPanel } from './steps.js';

const periods = [
  ['today', 'Today'], ['yesterday', 'Yesterday'], ['weekAgo', '7 days'],
  ['monthAgo', '30 days'], ['yearAgo', 'Year'], ['total', 'Total'],
];

const pairColumns = [
  { key: 'key', label: 'Pair', text: true },
  { key: 'strategy', label: 'Strategy', text: true },
  { key: 'pnl', label: 'PNL' },
  { key: 'trades', label: 'Trades' },
  // Gunbot's cumulative buy value counts the fees paid on buys, so this is
  // not the daily table's volume (fill values alone): named apart.
  { key: 'volume', label: 'Bought + sold', title: 'value of the buys, their fees included, plus the value of the sells' },
  { key: 'unrealized', label: 'Unrealized' },
];

function quoteOf(key) { return key.slice(key.indexOf('/') + 1).split('-')[0]; }

function metric(id, label, value, unit, { extra, converted } = {}) {
  const num = typeof value === 'number';
  return h('div', { class: 'card', id: 'm-' + id, dataset: { value: value == null ? '' : String(value), converted: converted ? 'true' : null } },
    h('div', { class: 'label' }, label,
      converted ? h('span', { class: 'tag', title: `converted to ${unit} at rates from the log` }, 'converted') : null),
    h('div', { class: 'value ' + (num ? tone(value) : '') },
      num ? money(value, unit, { sign: true }) : (value ?? '–'),
      unit && num ? h('span', { class: 'unit' }, ' ' + unit) : null),
    extra ? h('div', { class: 'sub' }, extra) : null);
}

export async function render(view, ctx) {
  performance.mark('overview-start');
  let unit = '';
  const charts = [];
  const state = { sort: 'pnl', dir: -1 };
  const past = ctx.asOf;

  // Pairs of several quote currencies: the API answers "All" in one
  // reporting currency (unit), each quote's own total beside it (perQuote)
  // and what had no rate apart (unconverted). The picker then offers that
  // total or one quote alone. A reader that cannot convert (ClickHouse)
  // refuses "All" with a 400: then one quote at a time, learnt from the
  // configuration's pairs.
  let quote = localStorage.getItem('quote') || '';
  let quotes = [];
  let allUnit = ''; // the reporting currency, when "All" can be answered
  const load = () => post(atAsOf('/pnl/overview', past), { timezone: ctx.tz, keys: ['All'], ...(quote ? { quote } : {}) });
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
  let data = await loadFirst();
  performance.mark('overview-data');

  const converted = () => !!data.perQuote && !quote;
  const cards = h('section', { class: 'cards', 'aria-label': 'PNL by period' });
  const chartBox = h('div', { class: 'chart', id: 'pnl-chart', role: 'img', 'aria-label': 'Cumulative PNL line over daily PNL bars' });
  const chartLegend = h('div', { class: 'legend mono', id: 'pnl-legend', 'aria-live': 'off' });
  const dailyBox = h('div');
  const pairsBox = h('div');
  const emptyBox = h('div');

  function drawCards() {
    const t = data.total || {};
    const closed = t.winning + t.losing + t.breakeven > 0;
    const conv = converted();
    const shown = past ? periods.map(([k, l]) => [k, k === 'total' ? `Total to ${dateTime(past, ctx.tz).slice(0, 10)}` : l]) : periods;
    replace(cards,
      shown.map(([k, label]) => metric(k, label, data[k]?.pnl ?? 0, unit, { converted: conv })),
      metric('winrate', 'Win rate', t.numberOfTrades && closed ? percent(t.winRate) : '–', null,
        { extra: `${count(t.winning ?? 0)} won · ${count(t.losing ?? 0)} lost` }),
      metric('best', 'Best trade', t.heroTrade && closed ? t.heroTrade.pnl : null, unit,
        { extra: t.heroTrade?.time ? dateTime(t.heroTrade.time, ctx.tz) : null, converted: conv }),
      metric('worst', 'Worst trade', t.fuckupTrade && closed ? t.fuckupTrade.pnl : null, unit,
        { extra: t.fuckupTrade?.time ? dateTime(t.fuckupTrade.time, ctx.tz) : null, converted: conv }));
  }

  // The PNL chart: a bar per day (its PNL, left axis) under the
  // cumulative line (right axis), on a time axis proportional to time
  // (timechart.js): days without trades take their room, a long pause is
  // cut out and marked.
  let chart;
  function drawChart() {
    if (!chart) {
      chart = timeChart(chartBox, {
        tz: ctx.tz, minPad: 12 * 3600e3, minStep: 86400e3, empty: 'No trades yet.',
        legend: (d) => {
          const f = (v) => withUnit(v, unit, { sign: true });
          chartLegend.textContent = d ? `${d.date}  daily ${f(d.pnl)}  cumulative ${f(d.cumulativePnl)}` : `days in ${ctx.tz}, ${unit}`;
        },
      });
      charts.push(chart);
    }
    const c = colors();
    const f = (v) => money(v, unit);
    chart.setScales({ left: { format: f, unit: `daily, ${unit}` }, right: { format: f, unit: `cumulative, ${unit}`, fromZero: true } });
    const days = data.dailyHistory || [];
    const spans = days.map(d => {
      const t = dayStart(d.date, ctx.tz);
      const [y, m, dd] = d.date.split('-').map(Number);
      return [t, zoneTime(y, m, dd + 1, 0, 0, 0, ctx.tz)];
    });
    chartLegend.textContent = `days in ${ctx.tz}, ${unit}`;
    chart.setData([
      { kind: 'bars', scale: 'left', hover: false, points: days.map((d, i) => ({ t: spans[i][0], t1: spans[i][1], v: d.pnl, color: d.pnl >= 0 ? c.pos : c.neg })) },
      { kind: 'line', scale: 'right', color: c.accent, width: 2, dots: true, points: days.map((d, i) => ({ t: (spans[i][0] + spans[i][1]) / 2, v: d.cumulativePnl, item: d })) },
    ]);
    chartBox.dataset.unit = unit;
  }

  function drawDaily() {
    const days = (data.dailyHistory || []).slice(-60).reverse();
    const u = unit ? ` (${unit}${converted() ? ', converted' : ''})` : '';
    replace(dailyBox, h('details', { open: true, class: 'daily' },
      h('summary', null, `Daily figures (${ctx.tz}${days.length === 60 ? ', last 60 days' : ''})`),
      h('div', { class: 'table-wrap' }, h('table', { id: 'daily', class: 'stack' },
        h('thead', null, h('tr', null, ['Date', 'Trades', `Volume${u}`, `PNL${u}`, `Cumulative${u}`].map((l, i) => h('th', { scope: 'col', class: i ? 'num' : null }, l)))),
        h('tbody', null, days.map(d => h('tr', { dataset: { date: d.date } },
          h('td', { 'data-label': 'Date' }, d.date), h('td', { class: 'num', 'data-label': 'Trades' }, count(d.numberOfTrades)),
          h('td', { class: 'num', 'data-label': `Volume (${unit})` }, money(d.totalVolume, unit)),
          h('td', { class: 'num ' + tone(d.pnl), 'data-col': 'pnl', 'data-label': `PNL (${unit})` }, money(d.pnl, unit, { sign: true })),
          h('td', { class: 'num ' + tone(d.cumulativePnl), 'data-label': `Cumulative (${unit})` }, money(d.cumulativePnl, unit, { sign: true })))))))));
  }

  // Pair figures are in each pair's own quote currency, whatever the
  // total's: each carries its unit.
  function pairRows() {
    const pnl = new Map((data.pnlsPerPair || []).map(p => [p.key, p.pnl]));
    return (data.detailedPerPair || []).map(d => ({
      key: d.key, strategy: d.strategy, quote: quoteOf(d.key), pnl: pnl.get(d.key) ?? d.cumulative_pnl,
      trades: (d.buy_count || 0) + (d.sell_count || 0),
      volume: (d.cumulative_buy_value || 0) + (d.cumulative_sell_value || 0),
      unrealized: d.unrealized_pnl || 0,
    }));
  }

  function drawPairs() {
    const rows = pairRows();
    const cols = pairColumns;
    const col = cols.find(c => c.key === state.sort) || cols[2];
    // Amounts of different currencies do not compare: a column of them
    // sorts by currency first.
    rows.sort((a, b) => (col.text ? String(a[col.key]).localeCompare(String(b[col.key]))
      : col.key === 'trades' ? a.trades - b.trades : (a.quote.localeCompare(b.quote) || a[col.key] - b[col.key])) * state.dir);
    const cell = (r, key) => {
      const v = r[key];
      switch (key) {
        case 'pnl': case 'unrealized':
          return h('td', { class: 'num ' + tone(v), 'data-col': key, 'data-label': key === 'pnl' ? 'PNL' : 'Unrealized' }, withUnit(v, r.quote, { sign: true }));
        case 'trades': return h('td', { class: 'num', 'data-col': key, 'data-label': 'Trades' }, count(v));
        case 'volume': return h('td', { class: 'num', 'data-col': key, 'data-label': 'Bought + sold' }, withUnit(v, r.quote));
        case 'strategy': return h('td', { 'data-label': 'Strategy' }, v || '–');
      }
      return h('td', { class: 'key' }, h('a', { href: '#/pair/' + encodeURIComponent(r.key) }, r.key));
    };
    replace(pairsBox, h('div', { class: 'table-wrap' }, h('table', { id: 'pairs', class: 'stack' },
      h('caption', null, 'Pairs (sort by a column heading); figures in each pair\'s quote currency'),
      h('thead', null, h('tr', null, cols.map(c => h('th', {
        scope: 'col', class: c.text ? null : 'num',
        'aria-sort': state.sort === c.key ? (state.dir > 0 ? 'ascending' : 'descending') : null,
      }, h('button', {
        type: 'button', class: 'sort', dataset: { sort: c.key }, title: c.title || null,
        onclick: () => {
          if (state.sort === c.key) state.dir = -state.dir;
          else { state.sort = c.key; state.dir = c.text ? 1 : -1; }
          drawPairs();
          pairsBox.querySelector(`button[data-sort="${c.key}"]`).focus();
        },
      }, c.label, state.sort === c.key ? (state.dir > 0 ? ' ▲' : ' ▼') : ''))))),
      h('tbody', null, rows.map(r => h('tr', { dataset: { key: r.key } }, cols.map(c => cell(r, c.key))))))));
  }

  // Over several quotes: how the totals were converted, and the amounts
  // with no rate known at their time, which are never guessed but listed
  // apart, each in its own currency.
  // Fees charged in another asset (BNB …) that had no rate at their fill's
  // time are in no figure: listed apart, each in its asset.
  const conversionBox = h('p', { class: 'muted small', id: 'conversion' });
  const feesBox = h('p', { class: 'muted small', id: 'unconverted-fees' });
  function drawConversion() {
    const fees = Object.entries(data.unconvertedFees || {}).sort(([a], [b]) => a.localeCompare(b));
    feesBox.hidden = fees.length === 0;
    replace(feesBox, fees.length === 0 ? null
      : `Fees without a rate at their time, in no figure here: ${fees.map(([a, v]) => withUnit(v, a)).join(' · ')}.`);
    conversionBox.hidden = !data.perQuote;
    if (!data.perQuote) return;
    const rest = Object.entries(data.unconverted || {}).sort(([a], [b]) => a.localeCompare(b));
    replace(conversionBox, `Totals converted to ${data.unit} at rates from the log; pair figures in each pair's own quote currency.`,
      rest.length === 0 ? null : h('span', { id: 'unconverted' }, ` Not converted (no rate at the time): ` +
        rest.map(([cur, u]) => `${withUnit(u.pnl, cur, { sign: true })} over ${count(u.numberOfTrades)} trade${u.numberOfTrades === 1 ? '' : 's'}`).join(' · ') + '.'));
  }

  // With nothing traded yet: what to do next, and no empty figures. An
  // imported core that was never started says so first, with what it
  // will trade and the button that starts it.
  async function drawEmpty() {
    const t = data.total || {};
    const empty = !(t.numberOfTrades > 0) && !past;
    content.hidden = empty;
    const s = past ? null : await setupState();
    const imported = s && importedPanel(s, ctx.tz);
    if (imported) { replace(emptyBox, imported); return; }
    if (!empty) { if (!emptyBox.querySelector('#imported-started')) replace(emptyBox); return; }
    replace(emptyBox, nextSteps('No trades yet, so there is no PNL to show.', s, { onStarted: () => drawEmpty() }));
  }

  function drawAll() {
    unit = data.unit || '';
    unitLabel.textContent = unit ? `in ${unit}${converted() ? ' (converted)' : ''}, days in ${ctx.tz}` : '';
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
        drawAll();
      },
    }, options.map(([value, label]) => h('option', { value, selected: value === quote }, label)))) : null;
  const unitLabel = h('span', { class: 'muted small', id: 'unit' });
  const content = h('div', { id: 'overview-figures' },
    cards,
    conversionBox,
    feesBox,
    h('section', { 'aria-labelledby': 'chart-title' }, h('h2', { id: 'chart-title' }, 'PNL over time'), chartLegend, chartBox),
    dailyBox,
    h('section', { 'aria-labelledby': 'pairs-title' }, h('h2', { id: 'pairs-title' }, 'Pairs'), pairsBox));
  replace(view,
    h('div', { class: 'row' }, h('h1', null, 'Overview ', unitLabel), quotePicker),
    emptyBox,
    content);
  drawAll();
  performance.mark('overview-ready');
  performance.measure('overview', 'app-start', 'overview-ready');
  performance.measure('overview-draw', 'overview-data', 'overview-ready');
  await drawEmpty();

  // Fills change the figures: refresh when the log says so (not in the
  // past: those figures do not change).
  const refresh = debounce(async () => {
    try { data = await load(); drawAll(); drawEmpty(); } catch { /* the next event retries */ }
  }, 500);
  const off = past ? null : ctx.live?.on(ev => { if (ev.type === 'OrderFilled') refresh(); });
  const onTheme = () => drawChart(); // bar and line colours follow the theme
  function colors() {
    const css = (n) => getComputedStyle(document.documentElement).getPropertyValue(n).trim();
    return { pos: css('--pos'), neg: css('--neg'), accent: css('--accent') };
  }
  window.addEventListener('themechange', onTheme);
  return () => { off?.(); window.removeEventListener('themechange', onTheme); charts.forEach(c => c.destroy()); };
}
