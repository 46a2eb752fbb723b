// Settings: system start/stop; paper or real trading; pairs (add, remove,
// enable, strategy); strategies (add, remove); exchange keys (masked as the
// API shows them: a new key is typed, sent once, and never shown back).

import { h, replace } from './dom.js';
import { get, post } from './api.js';
import { setupState, importedPanel, overrideList } from './steps.js';

const MASK = '********';
const KEY_FIELDS = ['key', 'secret'];
const ALGORITHMS = ['gain', 'stepgrid', 'manual'];

// systemState asks the server whether the bot core runs.
async function systemState() {
  const { running } = await get('/system/status');
  return running ? 'running' : 'stopped';
}

export async function render(view, ctx) {
  let config;
  const status = h('p', { id: 'settings-status', role: 'status', class: 'muted' });
  const say = (msg, ok = true) => { status.textContent = msg; status.className = ok ? 'ok' : 'error'; };
  const sections = {
    system: h('section', { class: 'panel', 'aria-labelledby': 's-system' }),
    mode: h('section', { class: 'panel', 'aria-labelledby': 's-mode' }),
    pairs: h('section', { class: 'panel', 'aria-labelledby': 's-pairs' }),
    strategies: h('section', { class: 'panel', 'aria-labelledby': 's-strategies' }),
    keys: h('section', { class: 'panel', 'aria-labelledby': 's-keys' }),
  };
  replace(view, h('h1', null, 'Settings'), status, Object.values(sections));

  async function reload() {
    ({ config } = await get('/config/full'));
    connectors = null; // the server may choose again after a change
    drawMode(); drawPairs(); drawStrategies(); drawKeys();
  }

  // act runs a change, reports its outcome and redraws; errors go to `where`
  // (the form's own message line) as the server worded them.
  async function act(what, fn, where) {
    if (where) where.textContent = '';
    try {
      await fn();
      await reload();
      say(what);
      return true;
    } catch (err) {
      if (where) where.textContent = err.message;
      say(`${what.replace(/\.$/, '')} failed: ${err.message}`, false);
      return false;
    }
  }

  async function update(mutate) {
    const doc = structuredClone(config);
    mutate(doc);
    await post('/config/update', { data: doc });
  }

  // --- system (an imported core that was never started says so, with
  // what a start will trade)
  const state = h('strong', { id: 'system-state' }, '…');
  const importedBox = h('div');
  replace(sections.system, h('h2', { id: 's-system' }, 'System'),
    h('p', null, 'The bot core is ', state, '.'),
    h('div', { class: 'row' },
      h('button', { type: 'button', id: 'system-start', onclick: () => act('System started.', async () => { await post('/system/start'); state.textContent = 'running'; replace(importedBox); }) }, 'Start'),
      h('button', { type: 'button', id: 'system-stop', class: 'danger', onclick: () => act('System stopped.', async () => { await post('/system/stop'); state.textContent = 'stopped'; }) }, 'Stop')),
    importedBox);
  systemState().then(s => { state.textContent = s; }).catch(() => { state.textContent = 'unknown'; });
  setupState().then(s => {
    const panel = importedPanel(s, ctx.tz, { inSettings: true });
    replace(importedBox, panel);
  }).catch(() => {});

  // --- paper or real
  // connectors: exchange → {connector, reason} as the running server chose
  // them (/healthz lists them); filled in by drawMode's request.
  let connectors = null;
  function drawMode() {
    const sim = config.bot?.SIMULATOR !== false;
    const box = h('input', { type: 'checkbox', id: 'simulator', checked: sim });
    const err = h('p', { class: 'field-error', role: 'alert' });
    const trades = (ex) => {
      const c = connectors?.[ex];
      if (!c) return h('td', null, connectors ? 'not traded (no connector chosen)' : '…');
      const paper = c.connector === 'paper';
      return h('td', { class: paper ? '' : 'neg', title: c.reason || '', 'data-label': 'Trades now' },
        paper ? 'on paper (simulated)' : `for real (${c.connector})`, h('span', { class: 'muted small' }, c.reason ? ` · ${c.reason}` : ''));
    };
    replace(sections.mode, h('h2', { id: 's-mode' }, 'Paper or real trading'),
      h('div', { class: 'table-wrap' }, h('table', { id: 'exchange-modes', class: 'stack' },
        h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Exchange'), h('th', { scope: 'col' }, 'Trades now'))),
        h('tbody', null, Object.keys(config.exchanges || {}).sort().map(ex => h('tr', { dataset: { exchange: ex } },
          h('td', { class: 'key' }, ex), trades(ex)))))),
      h('form', {
        class: 'row', onsubmit: (e) => {
          e.preventDefault();
          if (!box.checked && sim && !confirmReal.checked) { err.textContent = 'Tick the confirmation to trade with real money.'; return; }
          act(box.checked ? 'Trading on paper.' : 'Trading for real.', () => update(d => { d.bot = { ...d.bot, SIMULATOR: box.checked }; }), err);
        },
      },
      h('label', { class: 'inline', for: 'simulator' }, box, ' All exchanges trade on paper (bot.SIMULATOR)'),
      h('label', { class: 'inline', for: 'confirm-real' }, confirmReal, ' I mean real orders with real money'),
      h('button', { type: 'submit', id: 'save-mode' }, 'Save')), err,
      h('p', { class: 'muted small' }, 'bot.SIMULATOR switches every exchange; an exchange whose own settings say simulator: true stays on paper. "Trades now" is what the running server uses for each exchange.'));
    if (connectors === null) {
      fetch('/healthz', { cache: 'no-store' }).then(r => r.json()).then(hz => {
        connectors = Object.fromEntries((hz.exchanges || []).map(x => [x.exchange, x]));
        drawMode();
      }).catch(() => { connectors = {}; drawMode(); });
    }
  }
  const confirmReal = h('input', { type: 'checkbox', id: 'confirm-real' });

  // --- pairs
  function drawPairs() {
    const rows = [];
    for (const [ex, pairs] of Object.entries(config.pairs || {})) for (const [p, v] of Object.entries(pairs || {})) rows.push({ ex, p, v });
    rows.sort((a, b) => `${a.ex}/${a.p}`.localeCompare(`${b.ex}/${b.p}`));
    const strategies = Object.keys(config.strategies || {}).sort();
    const exSel = h('select', { id: 'new-pair-exchange' }, Object.keys(config.exchanges || {}).sort().map(e => h('option', { value: e }, e)));
    const pairIn = h('input', { id: 'new-pair', placeholder: 'USDT-BTC', autocomplete: 'off', pattern: '[A-Za-z0-9]+-[A-Za-z0-9]+' });
    const stratSel = h('select', { id: 'new-pair-strategy' }, strategies.map(s => h('option', { value: s, selected: s === 'manual' }, s)));
    const err = h('p', { class: 'field-error', id: 'pair-error', role: 'alert' });
    replace(sections.pairs, h('h2', { id: 's-pairs' }, 'Pairs'),
      h('div', { class: 'table-wrap' }, h('table', { id: 'pairs-settings', class: 'stack' },
        h('thead', null, h('tr', null, ['Pair', 'Strategy', 'Overrides', 'Enabled', ''].map(l => h('th', { scope: 'col' }, l)))),
        h('tbody', null, rows.map(({ ex, p, v }) => {
          const key = `${ex}/${p}`;
          return h('tr', { dataset: { key } },
            h('td', { 'data-label': 'Pair', class: 'key' }, h('a', { href: '#/pair/' + encodeURIComponent(key) }, key)),
            h('td', { 'data-label': 'Strategy' }, h('select', {
              'aria-label': `Strategy of ${key}`,
              onchange: (e) => act(`${key} uses ${e.target.value}.`, () => update(d => { d.pairs[ex][p].strategy = e.target.value; })),
            }, strategies.map(s => h('option', { value: s, selected: s === v.strategy }, s)))),
            // What the pair sets for itself over its strategy's
            // parameters: trading follows these.
            h('td', { class: 'params', 'data-label': 'Overrides', 'data-col': 'overrides' }, overrideList(v.override)),
            h('td', { 'data-label': 'Enabled' }, h('input', {
              type: 'checkbox', class: 'enabled', checked: v.enabled !== false, 'aria-label': `Enable ${key}`,
              onchange: (e) => act(`${key} ${e.target.checked ? 'enabled' : 'disabled'}.`, () => update(d => { d.pairs[ex][p].enabled = e.target.checked; })),
            })),
            h('td', null, h('button', {
              type: 'button', class: 'danger remove', 'aria-label': `Remove ${key}`,
              onclick: () => act(`${key} removed.`, () => post('/config/pair/remove', { exchange: ex, pair: p })),
            }, 'Remove')));
        })))),
      h('form', {
        id: 'add-pair', class: 'row',
        onsubmit: (e) => { e.preventDefault(); act(`${exSel.value}/${pairIn.value.trim()} added.`, () => post('/config/pair/add', { exchange: exSel.value, pair: pairIn.value.trim(), settings: { strategy: stratSel.value, enabled: true } }), err); },
      },
      h('div', null, h('label', { for: 'new-pair-exchange' }, 'Exchange'), exSel),
      h('div', null, h('label', { for: 'new-pair' }, 'Pair (QUOTE-BASE)'), pairIn),
      h('div', null, h('label', { for: 'new-pair-strategy' }, 'Strategy'), stratSel),
      h('button', { type: 'submit', id: 'add-pair-button', class: 'primary' }, 'Add pair')), err);
  }

  // --- strategies
  function drawStrategies() {
    const names = Object.keys(config.strategies || {}).sort();
    const nameIn = h('input', { id: 'new-strategy', autocomplete: 'off', placeholder: 'my-grid' });
    const algo = h('select', { id: 'new-strategy-algo' }, ALGORITHMS.map(a => h('option', { value: a }, a)));
    const err = h('p', { class: 'field-error', id: 'strategy-error', role: 'alert' });
    replace(sections.strategies, h('h2', { id: 's-strategies' }, 'Strategies'),
      h('div', { class: 'table-wrap' }, h('table', { id: 'strategies', class: 'stack' },
        h('thead', null, h('tr', null, ['Name', 'Algorithm', 'Parameters', ''].map(l => h('th', { scope: 'col' }, l)))),
        h('tbody', null, names.map(n => {
          const s = config.strategies[n] || {};
          return h('tr', { dataset: { name: n } },
            h('td', { 'data-label': 'Name' }, n), h('td', { 'data-label': 'Algorithm' }, String(s.STRATEGY ?? '–')),
            h('td', { class: 'params', 'data-label': 'Parameters' }, params(s)),
            h('td', null, h('button', {
              type: 'button', class: 'danger remove', 'aria-label': `Remove strategy ${n}`,
              onclick: () => act(`Strategy ${n} removed.`, () => post('/config/strategy/remove', { name: n }), err),
            }, 'Remove')));
        })))),
      h('form', {
        id: 'add-strategy', class: 'row',
        onsubmit: (e) => { e.preventDefault(); act(`Strategy ${nameIn.value.trim()} added.`, () => post('/config/strategy/add', { name: nameIn.value.trim(), settings: { STRATEGY: algo.value } }), err); },
      },
      h('div', null, h('label', { for: 'new-strategy' }, 'Name'), nameIn),
      h('div', null, h('label', { for: 'new-strategy-algo' }, 'Algorithm'), algo),
      h('button', { type: 'submit', id: 'add-strategy-button', class: 'primary' }, 'Add strategy')), err);
  }

  // --- exchange keys
  // The secret fields an exchange has stored show as set, whatever their
  // names (key and secret as this API writes them, masterkey and
  // mastersecret as Gunbot's configuration names them, which an import
  // keeps); a new value replaces the field of that name.
  function drawKeys() {
    const exchanges = Object.keys(config.exchanges || {}).sort();
    replace(sections.keys, h('h2', { id: 's-keys' }, 'Exchange keys'),
      h('p', { class: 'muted small' }, 'Stored keys are never shown (the server answers them as ', MASK, '). Type a new value to replace one; leave a field empty to keep it.'),
      exchanges.map(ex => {
        const cur = config.exchanges[ex] || {};
        const stored = Object.keys(cur).filter(f => cur[f] === MASK).sort();
        const fields = stored.length ? stored : KEY_FIELDS;
        const inputs = Object.fromEntries(fields.map(f => [f, h('input', { type: 'password', id: `k-${ex}-${f}`, autocomplete: 'off', spellcheck: 'false' })]));
        const err = h('p', { class: 'field-error', role: 'alert' });
        return h('form', {
          class: 'keys', dataset: { exchange: ex },
          onsubmit: (e) => {
            e.preventDefault();
            const changes = Object.fromEntries(fields.filter(f => inputs[f].value !== '').map(f => [f, inputs[f].value]));
            if (Object.keys(changes).length === 0) { err.textContent = 'Type a new key or secret first.'; return; }
            for (const f of fields) inputs[f].value = '';
            act(`Keys of ${ex} saved.`, () => update(d => { Object.assign(d.exchanges[ex], changes, { isEncrypted: false }); }), err);
          },
        },
        h('h3', null, ex),
        h('div', { class: 'row' }, fields.map(f => h('div', null,
          h('label', { for: `k-${ex}-${f}` }, `${f} (${cur[f] === MASK ? 'set' : 'not set'})`), inputs[f])),
        h('button', { type: 'submit', class: 'save-keys' }, 'Save keys')), err);
      }));
  }

  await reload();
  // #/settings/add-pair (an empty page's "Add a pair") goes to that form.
  if (ctx.params[0] === 'add-pair') {
    const input = view.querySelector('#new-pair');
    input?.scrollIntoView({ block: 'center' });
    input?.focus();
  }
}

// params shows a strategy's parameters as name=value items that wrap.
function params(s) {
  const list = Object.entries(s).filter(([k]) => k !== 'STRATEGY');
  if (list.length === 0) return '–';
  return h('ul', { class: 'params' }, list.map(([k, v]) => h('li', { class: 'mono small' }, `${k}=${typeof v === 'object' ? JSON.stringify(v) : v}`)));
}
