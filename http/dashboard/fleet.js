// Fleet: every Tradeledger instance writing to the ClickHouse database
// this one writes to (serve --clickhouse, each with its own --instance),
// read by this server (GET fleet/overview): each instance's figures over
// all time and the fleet's total in one currency. The server converts each
// instance's fills at the rates that instance logged; what had no rate is
// listed apart in its own currency, never added to the total. Without
// ClickHouse the page says what to run, and points to the Bots page (two
// or three instances side by side through read tokens).
//
// Whether this server has ClickHouse is read from /healthz (sinkLag is
// there only with a sink), so that the page never asks a route that would
// answer 503.

import { h, replace } from './dom.js';
import { get, query } from './api.js';
import { money, withUnit, count, percent, tone, dateTime } from './fmt.js';

const STORE = 'tradeledger.fleet.currency';

// unconvertedText lists an entry's figures without a rate, per currency.
function unconvertedText(u) {
  const cs = Object.keys(u || {}).sort();
  if (!cs.length) return '–';
  return cs.map((c) => {
    const x = u[c];
    let s = `${withUnit(x.pnl, c, { sign: true })} (${count(x.numberOfTrades)} trade${x.numberOfTrades === 1 ? '' : 's'})`;
    if (x.unrealizedPnl) s += `, unrealized ${withUnit(x.unrealizedPnl, c, { sign: true })}`;
    return s;
  }).join(' · ');
}

// unconvertedCell is unconvertedText with each amount kept on one line.
function unconvertedCell(u) {
  const cs = Object.keys(u || {}).sort();
  if (!cs.length) return '–';
  return cs.flatMap((c, i) => {
    const x = u[c];
    return [i ? ' · ' : null, h('span', { class: 'fig' }, withUnit(x.pnl, c, { sign: true })),
      ` (${count(x.numberOfTrades)} trade${x.numberOfTrades === 1 ? '' : 's'})`,
      x.unrealizedPnl ? [', unrealized ', h('span', { class: 'fig' }, withUnit(x.unrealizedPnl, c, { sign: true }))] : null];
  });
}

const statusText = {
  current: 'current',
  rewriting: 'rows being rewritten (upgrade): not in the total',
  newer: 'written by a newer release: not in the total',
  none: 'no rows of this method: not in the total',
};

export async function render(view, ctx) {
  const health = await fetch('/healthz', { cache: 'no-store' }).then((r) => r.json()).catch(() => ({}));
  if (health.sinkLag === undefined) {
    replace(view, h('h1', null, 'Fleet'),
      h('section', { class: 'panel', id: 'fleet-unavailable' },
        h('p', null, 'The fleet is read from the ClickHouse database every instance writes to, and this server has none.'),
        h('p', { class: 'muted' }, 'Start each instance with ', h('code', null, 'serve --clickhouse clickhouse://host:9000/tradeledger --instance NAME'),
          ' (one database, a name each); any of them then shows the whole fleet here, in one currency.'),
        h('p', { class: 'muted' }, 'Two or three instances without ClickHouse: the ', h('a', { href: '#/bots' }, 'Bots'),
          ' page puts them side by side with read tokens.')));
    view.dataset.fleet = 'unavailable';
    return;
  }

  const input = h('input', {
    id: 'fleet-currency', autocomplete: 'off', spellcheck: 'false', size: 8, maxlength: 20,
    pattern: '[A-Za-z0-9]+', placeholder: 'USDT', value: localStorage.getItem(STORE) || '',
  });
  const error = h('p', { class: 'field-error', id: 'fleet-error', role: 'alert' });
  const cards = h('section', { class: 'cards', 'aria-label': 'The fleet\'s total' });
  const tableBox = h('div');
  const notes = h('div');
  const form = h('form', {
    class: 'toolbar', id: 'fleet-form',
    onsubmit: async (e) => {
      e.preventDefault();
      const c = input.value.trim().toUpperCase();
      if (c && !/^[A-Z0-9]+$/.test(c)) { error.textContent = 'Currency: letters and digits only (e.g. USDT).'; input.focus(); return; }
      if (c) localStorage.setItem(STORE, c); else localStorage.removeItem(STORE);
      await draw();
    },
  },
  h('label', { for: 'fleet-currency' }, 'Currency'), input,
  h('button', { type: 'submit', class: 'primary' }, 'Show'), error);

  replace(view, h('h1', null, 'Fleet'),
    h('p', { class: 'muted' }, 'Every instance writing to this server\'s ClickHouse database, over all time, in one currency: each one\'s fills converted at the rates its own log recorded; what had no rate is listed apart in its currency, never added.'),
    form, cards, tableBox, notes);

  // metric is a card of the total: an amount in unit, or a text (unit
  // null).
  function metric(id, label, value, unit, extra) {
    return h('div', { class: 'card', id: 'f-' + id, dataset: { value: value == null ? '' : String(value) } },
      h('div', { class: 'label' }, label),
      unit
        ? h('div', { class: 'value ' + tone(value) }, money(value, unit, { sign: true }), h('span', { class: 'unit' }, ' ' + unit))
        : h('div', { class: 'value' }, value ?? '–'),
      extra ? h('div', { class: 'sub' }, extra) : null);
  }

  // fig keeps a figure on one line (the table's text wraps between them).
  const fig = (s) => h('span', { class: 'fig' }, s);

  function row(x, cur, total) {
    const cells = [
      h('td', { class: 'key', 'data-col': 'name', 'data-label': 'Instance' }, total ? `Fleet (${count(x.instances)} instance${x.instances === 1 ? '' : 's'})` : x.name),
      h('td', { 'data-col': 'status', 'data-label': 'Status' }, total ? '' : statusText[x.status] || x.status),
      h('td', { class: 'num', 'data-col': 'pairs', 'data-label': 'Pairs' }, count(x.pairs ?? 0)),
      h('td', { class: 'num ' + tone(x.pnl), 'data-col': 'pnl', 'data-label': 'Realized' }, fig(withUnit(x.pnl, cur, { sign: true }))),
      h('td', { class: 'num ' + tone(x.unrealizedPnl), 'data-col': 'unrealized', 'data-label': 'Unrealized' }, fig(withUnit(x.unrealizedPnl, cur, { sign: true }))),
      h('td', { class: 'num', 'data-col': 'fees', 'data-label': 'Fees' }, fig(withUnit(x.fees, cur))),
      h('td', { class: 'num', 'data-col': 'trades', 'data-label': 'Trades' }, count(x.numberOfTrades)),
      h('td', { class: 'num', 'data-col': 'winrate', 'data-label': 'Win rate' }, fig(x.winning + x.losing + x.breakeven > 0 ? percent(x.winRate) : '–')),
      h('td', { 'data-col': 'unconverted', 'data-label': `Not in ${cur}` }, unconvertedCell(x.unconverted)),
      h('td', { 'data-col': 'updated', 'data-label': 'Updated' }, total || !x.updatedAt ? '' : dateTime(x.updatedAt, ctx.tz)),
    ];
    return h('tr', { dataset: total ? { total: 'yes' } : { instance: x.name, status: x.status }, class: total ? 'total' : (x.status === 'current' ? null : 'muted') }, cells);
  }

  async function draw() {
    error.textContent = '';
    const c = localStorage.getItem(STORE) || '';
    let o;
    try {
      o = await get('/fleet/overview', c ? { currency: c } : undefined);
    } catch (err) {
      error.textContent = err.message;
      return;
    }
    const cur = o.currency, t = o.total;
    input.value = cur;
    replace(cards,
      metric('pnl', 'Realized', t.pnl, cur),
      metric('unrealized', 'Unrealized', t.unrealizedPnl, cur),
      metric('trades', 'Trades', count(t.numberOfTrades), null, `${count(t.instances)} instance${t.instances === 1 ? '' : 's'}, ${count(t.pairs)} pairs`),
      metric('winrate', 'Win rate', t.winning + t.losing + t.breakeven > 0 ? percent(t.winRate) : '–', null, `${count(t.winning)} won · ${count(t.losing)} lost`));
    replace(tableBox, o.instances.length
      ? h('div', { class: 'table-wrap' }, h('table', { id: 'fleet', class: 'stack fits', dataset: { currency: cur } },
        h('caption', { class: 'muted small' }, `In ${cur}, method ${o.method}; times in ${ctx.tz}.`),
        h('thead', null, h('tr', null, ['Instance', 'Status', 'Pairs', `Realized (${cur})`, `Unrealized (${cur})`, `Fees (${cur})`, 'Trades', 'Win rate', `Not in ${cur}`, 'Updated']
          .map((l, i) => h('th', { scope: 'col', class: i >= 2 && i <= 7 ? 'num' : null }, l)))),
        h('tbody', null, o.instances.map((x) => row(x, cur, false))),
        h('tfoot', null, row(t, cur, true))))
      : h('p', { class: 'muted', id: 'fleet-empty' }, 'No instance has written to this database yet.'));
    const q = query({ currency: cur });
    replace(notes,
      Object.keys(t.unconverted || {}).length
        ? h('p', { class: 'muted small', id: 'fleet-unconverted' }, `Not in the total (no rate into ${cur} at the fills' time, in their own currency): ${unconvertedText(t.unconverted)}.`)
        : null,
      t.unconvertedFees
        ? h('p', { class: 'muted small', id: 'fleet-unconverted-fees' }, 'Fees without a rate, in no figure: ' +
          Object.keys(t.unconvertedFees).sort().map((a) => withUnit(t.unconvertedFees[a], a)).join(' · ') + '.')
        : null,
      h('p', { class: 'small' }, 'Download as CSV: ',
        ['overview', 'realized', 'fills'].flatMap((e, i) => [i ? ' · ' : null,
          h('a', { href: `/api/v1/fleet/export/${e}.csv?${q}`, download: '', id: `fleet-csv-${e}` }, e)])),
      h('p', { class: 'muted small' }, 'Two or three instances without ClickHouse: the ', h('a', { href: '#/bots' }, 'Bots'), ' page.'));
    view.dataset.fleet = cur;
  }

  await draw();
}
