// Next steps: what an empty page says to do, with the button to do it.
// A data dir with no pair needs one added (Settings); a stopped system
// collects no market data and trades nothing until it is started.

import { h } from './dom.js';
import { get, post } from './api.js';
import { dateTime, count } from './fmt.js';

// setupState reads what a new user may still have to do: pairs (enabled
// ones, by key), whether the system runs (null when unknown) and, for a
// stopped core whose configuration an import made, when (importedAt, ms).
export async function setupState() {
  const [{ config }, status] = await Promise.all([get('/config/full'), get('/system/status').catch(() => null)]);
  const pairs = [];
  for (const [ex, list] of Object.entries(config.pairs || {})) {
    for (const [p, v] of Object.entries(list || {})) if (v?.enabled !== false) pairs.push(`${ex}/${p}`);
  }
  return { pairs: pairs.sort(), running: status ? status.running : null, importedAt: status?.importedAt || null, config };
}

// overrideList shows a pair's overrides (strategy parameters it sets for
// itself) as name=value items.
export function overrideList(override) {
  const list = Object.entries(override || {});
  if (list.length === 0) return '–';
  return h('ul', { class: 'params' }, list.map(([k, v]) => h('li', { class: 'mono small' }, `${k}=${typeof v === 'object' ? JSON.stringify(v) : v}`)));
}

// importedPanel is the block of a stopped core whose configuration an
// import made (state.importedAt; null otherwise): an import never starts
// trading, so it says so, lists what a start would trade — each enabled
// pair with its strategy, the pair's overrides and whether it trades on
// paper or with real money — and offers the one button that starts it.
// onStarted runs after a successful start. In Settings (inSettings), whose
// System section has the Start button, it lists what a start trades
// without a button of its own.
export function importedPanel(state, tz, { onStarted, inSettings = false } = {}) {
  if (!state.importedAt || state.running !== false) return null;
  const cfg = state.config;
  const error = h('p', { class: 'error', role: 'alert' });
  const paper = (ex) => cfg.bot?.SIMULATOR !== false || cfg.exchanges?.[ex]?.simulator === true;
  const rows = state.pairs.map((key) => {
    const i = key.indexOf('/');
    const ex = key.slice(0, i), pair = key.slice(i + 1);
    const p = cfg.pairs[ex][pair] || {};
    const strategy = cfg.strategies?.[p.strategy] || {};
    return h('tr', { dataset: { key } },
      h('td', { class: 'key', 'data-label': 'Pair' }, key),
      h('td', { 'data-label': 'Strategy' }, `${p.strategy || '–'}${strategy.STRATEGY && strategy.STRATEGY !== p.strategy ? ` (${strategy.STRATEGY})` : ''}`),
      h('td', { class: 'params', 'data-label': 'Overrides', 'data-col': 'overrides' }, overrideList(p.override)),
      h('td', { 'data-label': 'Trades', class: paper(ex) ? null : 'neg' }, paper(ex) ? 'on paper' : 'with real money'));
  });
  const start = startButton('imported-start', rows.length ? `Start trading ${count(rows.length)} pair${rows.length === 1 ? '' : 's'}` : 'Start the core',
    state, error, () => { panel.replaceWith(h('p', { class: 'ok', id: 'imported-started' }, 'Started: the core trades these pairs now.')); return onStarted?.(); });
  const panel = h(inSettings ? 'div' : 'section', { class: inSettings ? 'imported' : 'panel imported', id: 'imported-stopped', 'aria-labelledby': 'imported-title' },
    h(inSettings ? 'h3' : 'h2', { id: 'imported-title' }, 'Imported, not trading yet'),
    h('p', null, `This configuration was imported on ${dateTime(state.importedAt, tz)} (${tz}). An import never starts trading: `,
      !rows.length ? 'it has no enabled pair, so a start would trade nothing.'
        : inSettings ? 'look at what it will trade (the pairs below), then Start.' : 'look at what it will trade, then start it.'),
    rows.length ? h('div', { class: 'table-wrap' }, h('table', { class: 'stack', id: 'imported-pairs' },
      h('thead', null, h('tr', null, ['Pair', 'Strategy', 'Overrides', 'Trades'].map(l => h('th', { scope: 'col' }, l)))),
      h('tbody', null, rows))) : null,
    inSettings ? null : h('div', { class: 'row toolbar' }, start, h('a', { href: '#/settings' }, 'Change pairs and strategies in Settings')),
    error);
  return panel;
}

// startButton is the button (id, label) that starts the system
// (system/start), marks state running and calls started; a refusal shows
// in error and leaves the button to try again.
function startButton(id, label, state, error, started) {
  const button = h('button', {
    type: 'button', class: 'primary', id,
    onclick: async () => {
      button.disabled = true;
      error.textContent = '';
      try {
        await post('/system/start');
        state.running = true;
        await started();
      } catch (err) {
        button.disabled = false;
        error.textContent = err.message;
      }
    },
  }, label);
  return button;
}

// nextSteps returns a block for an empty state: message (what is empty),
// then what to do about it given state (setupState): add a pair, start the
// system, each with its button; onStarted runs after a successful start.
export function nextSteps(message, state, { onStarted } = {}) {
  const error = h('p', { class: 'error', role: 'alert' });
  const items = [];
  if (state.pairs.length === 0) {
    items.push(h('li', null, 'Add a pair to trade (an exchange and a QUOTE-BASE pair such as USDT-BTC). ',
      h('a', { class: 'button primary', href: '#/settings/add-pair', id: 'next-add-pair' }, 'Add a pair')));
  }
  if (state.running === false) {
    const start = startButton('next-start', 'Start the system', state, error,
      () => { start.replaceWith(h('span', { class: 'ok', id: 'next-started' }, 'Started.')); return onStarted?.(); });
    items.push(h('li', null, 'Start the system: it then collects market data for the enabled pairs and trades. ', start));
  }
  return h('div', { class: 'empty panel', id: 'next-steps' },
    h('p', null, message),
    items.length ? h('ul', { class: 'steps' }, items) : null,
    error);
}
