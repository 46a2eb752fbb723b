// Bots: this instance's overview beside other Tradeledger instances', and
// their sum in one reporting currency, for two or three instances without
// ClickHouse (with it, the Fleet page reads them all: fleet.js).
//
// Another instance is its URL (its origin) and a token of scope read,
// kept in this browser only (localStorage; the server never sees them). A
// token that can write (trade or admin) is refused when added, and again
// each time the page reads with it (auth/scope tells a token its scope):
// a page that holds tokens must not hold one that can change anything. The
// other instance must allow this page's origin (its --cors-origins), and
// this server must list that instance in its own --cors-origins, which its
// Content-Security-Policy lets the page connect to.
//
// The sum is in this instance's reporting currency; an instance reporting
// in another currency is listed apart, not converted: no rate between the
// two logs is known here, and a figure is never guessed.

import { h, replace } from './dom.js';
import { post, remote } from './api.js';
import { withUnit, count, percent, tone } from './fmt.js';

const STORE = 'tradeledger.bots';

function loadBots() {
  try { return JSON.parse(localStorage.getItem(STORE) || '[]'); } catch { return []; }
}
function saveBots(list) { localStorage.setItem(STORE, JSON.stringify(list)); }

// origin returns the origin of a URL the user typed, or throws.
function origin(url) {
  const u = new URL(url.trim());
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('use an http:// or https:// address');
  return u.origin;
}

// checkReadOnly returns nothing when token is a read token of base, and
// throws with what is wrong otherwise.
async function checkReadOnly(base, token) {
  let st;
  try {
    st = await remote(base, token, 'GET', '/auth/scope');
  } catch (err) {
    if (err.status === 404) throw new Error(`${base} does not say what this token may do (an older Tradeledger): refused`);
    throw err;
  }
  if (!st || !st.scope) throw new Error(`${base} does not say what this token may do: refused`);
  if (st.scope !== 'read') {
    throw new Error(`this token can write (scope ${st.scope}): refused. Create a read-only one there with: tradeledger token create --name dashboard --scope read`);
  }
}

const periods = [['today', 'Today'], ['weekAgo', '7 days'], ['monthAgo', '30 days'], ['total', 'Total']];

export async function render(view, ctx) {
  const past = ctx.asOf;
  const body = () => ({ timezone: ctx.tz, keys: ['All'], ...(past ? { dateRange: { startDate: 0, endDate: past } } : {}) });
  const grid = h('div', { class: 'bots', id: 'bots' });
  const sumBox = h('section', { class: 'panel', id: 'bots-sum', 'aria-labelledby': 'sum-title' });
  const url = h('input', { id: 'bot-url', type: 'url', placeholder: 'http://192.168.1.20:3000', autocomplete: 'off' });
  const name = h('input', { id: 'bot-name', autocomplete: 'off', placeholder: 'bot 2' });
  const token = h('input', { id: 'bot-token', type: 'password', autocomplete: 'off', spellcheck: 'false' });
  const error = h('p', { class: 'field-error', id: 'bot-error', role: 'alert' });
  const add = h('button', { type: 'submit', class: 'primary', id: 'bot-add' }, 'Add');

  const form = h('form', {
    id: 'bot-form', class: 'panel',
    onsubmit: async (e) => {
      e.preventDefault();
      error.textContent = '';
      let base;
      try { base = origin(url.value); } catch (err) { error.textContent = `URL: ${err.message}`; url.focus(); return; }
      if (base === location.origin) { error.textContent = 'That is this instance.'; return; }
      if (!token.value.trim()) { error.textContent = 'Token: a read token of that instance is required.'; token.focus(); return; }
      add.disabled = true;
      try {
        await checkReadOnly(base, token.value.trim());
        const list = loadBots().filter(b => b.url !== base);
        list.push({ url: base, name: name.value.trim() || base.replace(/^https?:\/\//, ''), token: token.value.trim() });
        saveBots(list);
        url.value = ''; name.value = ''; token.value = '';
        await draw();
      } catch (err) {
        error.textContent = err.message;
      } finally {
        add.disabled = false;
      }
    },
  },
  h('h2', null, 'Add an instance'),
  h('p', { class: 'muted small' }, 'Its URL and a token of scope read (', h('code', null, 'tradeledger token create --name dashboard --scope read'),
    ' there). Both stay in this browser. That instance must list this dashboard\'s origin (', h('code', null, location.origin),
    ') in its --cors-origins, and this server must list that instance in its own.'),
  h('div', { class: 'row' },
    h('div', { class: 'grow' }, h('label', { for: 'bot-url' }, 'URL'), url),
    h('div', null, h('label', { for: 'bot-name' }, 'Name (optional)'), name),
    h('div', { class: 'grow' }, h('label', { for: 'bot-token' }, 'Read token'), token),
    add),
  error);

  // With ClickHouse the Fleet page reads every instance sharing its
  // database, converted at each one's rates, without tokens or CORS: this
  // page stays for two or three instances without it.
  const fleetNote = h('p', { class: 'muted', id: 'bots-fleet', hidden: true }, 'This server writes to ClickHouse: the ',
    h('a', { href: '#/fleet' }, 'Fleet'), ' page shows every instance sharing its database, each converted at its own rates, with no token to keep here. This page puts two or three instances side by side without ClickHouse.');
  fetch('/healthz', { cache: 'no-store' }).then((r) => r.json()).then((hz) => { fleetNote.hidden = hz.sinkLag === undefined; }).catch(() => {});
  replace(view, h('h1', null, 'Bots'), fleetNote, sumBox, grid, form);

  function card(b, r) {
    const id = b.self ? 'bot-self' : 'bot-' + b.url.replace(/\W+/g, '-');
    if (r.error) {
      return h('section', { class: 'bot card', id, dataset: { url: b.url || '', state: 'error' } },
        h('h2', null, b.name), h('p', { class: 'error', role: 'alert' }, r.error),
        b.self ? null : removeButton(b));
    }
    const o = r.data, unit = o.unit || '';
    const t = o.total || {};
    return h('section', { class: 'bot card', id, dataset: { url: b.url || '', unit, state: 'ok' } },
      h('h2', null, b.name, b.self ? h('span', { class: 'muted small' }, ' (this instance)') : null),
      b.self ? null : h('p', { class: 'muted small mono' }, b.url),
      h('dl', null, (past ? [['total', 'Total']] : periods).map(([k, label]) => [
        h('dt', null, label),
        h('dd', { class: tone(o[k]?.pnl ?? 0), dataset: { period: k } }, withUnit(o[k]?.pnl ?? 0, unit, { sign: true }))]),
      h('dt', null, 'Trades'), h('dd', { dataset: { period: 'trades' } }, count(t.numberOfTrades ?? 0)),
      h('dt', null, 'Win rate'), h('dd', null, t.winning + t.losing > 0 ? percent(t.winRate) : '–')),
      o.perQuote ? h('p', { class: 'muted small' }, `converted to ${unit} at that instance's rates`) : null,
      b.self ? null : removeButton(b));
  }

  function removeButton(b) {
    return h('button', {
      type: 'button', class: 'danger remove-bot', 'aria-label': `Remove ${b.name}`,
      onclick: () => { saveBots(loadBots().filter(x => x.url !== b.url)); draw(); },
    }, 'Remove');
  }

  async function read(b) {
    try {
      if (b.self) return { data: await post('/pnl/overview', body()) };
      await checkReadOnly(b.url, b.token);
      return { data: await remote(b.url, b.token, 'POST', '/pnl/overview', body()) };
    } catch (err) {
      return { error: err.message };
    }
  }

  function drawSum(results) {
    const ok = results.filter(([, r]) => r.data);
    const self = results[0][1].data;
    const unit = self?.unit || ok[0]?.[1].data.unit || '';
    const same = ok.filter(([, r]) => r.data.unit === unit);
    const other = ok.filter(([, r]) => r.data.unit !== unit);
    const sum = (k) => same.reduce((s, [, r]) => s + (r.data[k]?.pnl ?? 0), 0);
    const trades = same.reduce((s, [, r]) => s + (r.data.total?.numberOfTrades ?? 0), 0);
    replace(sumBox,
      h('h2', { id: 'sum-title' }, `All ${same.length} instance${same.length === 1 ? '' : 's'}, in ${unit || '–'}`),
      h('dl', { class: 'sum' }, (past ? [['total', 'Total']] : periods).map(([k, label]) => [
        h('dt', null, label), h('dd', { class: tone(sum(k)), dataset: { period: k } }, withUnit(sum(k), unit, { sign: true }))]),
      h('dt', null, 'Trades'), h('dd', { dataset: { period: 'trades' } }, count(trades))),
      other.length ? h('p', { class: 'muted small', id: 'bots-unconverted' }, 'Not in the sum (reported in another currency, no rate between the logs here): ' +
        other.map(([b, r]) => `${b.name}: ${withUnit(r.data.total?.pnl ?? 0, r.data.unit, { sign: true })}`).join(' · ') + '.') : null,
      results.some(([, r]) => r.error) ? h('p', { class: 'muted small' }, 'Instances that could not be read are left out.') : null);
    sumBox.dataset.total = String(sum('total'));
  }

  async function draw() {
    const bots = [{ self: true, name: location.host, url: '' }, ...loadBots()];
    replace(grid, bots.map(b => h('section', { class: 'bot card' }, h('h2', null, b.name), h('p', { class: 'muted' }, 'Loading…'))));
    const results = await Promise.all(bots.map(async b => [b, await read(b)]));
    replace(grid, results.map(([b, r]) => card(b, r)));
    drawSum(results);
    view.dataset.bots = String(results.length);
  }

  await draw();
}
