// The dashboard's shell: login, navigation (hash routes), timezone and
// theme, and the live connection (server-sent events). Each page is a
// module loaded when first shown; it exports render(view, ctx) and may
// return a cleanup function. When a page has drawn its data, the shell sets
// <body data-ready="<page>"> (the browser tests wait for it).

import { h, replace } from './dom.js';
import { get, post, onUnauthorized } from './api.js';
import { Live } from './live.js';

const pages = {
  overview: { label: 'Overview', load: () => import('./overview.js') },
  pair: { label: 'Pair', load: () => import('./pair.js') },
  orders: { label: 'Orders', load: () => import('./orders.js') },
  balances: { label: 'Balances', load: () => import('./balances.js') },
  settings: { label: 'Settings', load: () => import('./settings.js') },
  files: { label: 'Files', load: () => import('./files.js') },
  audit: { label: 'Audit', load: () => import('./audit.js') },
};

const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

const ctx = {
  tz: localStorage.getItem('tz') || browserZone,
  live: null,
  // params of the current route: #/pair/<key> → ['<key>']
  params: [],
  navigate(hash) { location.hash = hash; },
};

let cleanup = null;
let shell = null;
let renderSeq = 0;

function setTheme(theme) {
  if (theme) document.documentElement.dataset.theme = theme;
  else delete document.documentElement.dataset.theme;
}
setTheme(localStorage.getItem('theme'));

function currentTheme() {
  return document.documentElement.dataset.theme ||
    (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light');
}

function zones() {
  const all = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  const set = new Set(['UTC', browserZone, ctx.tz, ...all]);
  return [...set].sort();
}

function showLogin(message) {
  if (ctx.live) { ctx.live.close(); ctx.live = null; }
  if (cleanup) { cleanup(); cleanup = null; }
  shell = null;
  const error = h('p', { id: 'login-error', class: 'error', role: 'alert', hidden: !message }, message || '');
  const input = h('input', { id: 'password', type: 'password', name: 'password', autocomplete: 'current-password', required: true });
  const button = h('button', { type: 'submit', class: 'primary' }, 'Log in');
  const form = h('form', {
    class: 'login', 'aria-labelledby': 'login-title',
    onsubmit: async (e) => {
      e.preventDefault();
      button.disabled = true;
      error.hidden = true;
      try {
        await post('/dashboard/login', { password: input.value });
        input.value = '';
        start();
      } catch (err) {
        error.textContent = err.message;
        error.hidden = false;
        input.select();
      } finally {
        button.disabled = false;
      }
    },
  },
  h('h1', { id: 'login-title' }, 'Tradeledger'),
  h('label', { for: 'password' }, 'Password'),
  input, error, button);
  replace(document.body, h('main', { class: 'login-page' }, form));
  document.body.dataset.ready = 'login';
  input.focus();
}

function buildShell() {
  const nav = h('nav', { 'aria-label': 'Pages' },
    h('ul', null, Object.entries(pages).filter(([n]) => n !== 'pair').map(([name, p]) =>
      h('li', null, h('a', { href: '#/' + name, dataset: { page: name } }, p.label)))));
  const tz = h('select', {
    id: 'tz', 'aria-label': 'Time zone',
    onchange: () => { ctx.tz = tz.value; localStorage.setItem('tz', tz.value); route(); },
  }, zones().map(z => h('option', { value: z, selected: z === ctx.tz }, z)));
  const theme = h('button', {
    type: 'button', id: 'theme', 'aria-label': 'Switch theme',
    onclick: () => {
      const next = currentTheme() === 'dark' ? 'light' : 'dark';
      localStorage.setItem('theme', next);
      setTheme(next);
      theme.textContent = next === 'dark' ? '☀ Light' : '☾ Dark';
      window.dispatchEvent(new Event('themechange'));
    },
  }, currentTheme() === 'dark' ? '☀ Light' : '☾ Dark');
  const logout = h('button', {
    type: 'button', id: 'logout',
    onclick: async () => { try { await post('/dashboard/logout'); } catch {} showLogin(); },
  }, 'Log out');
  const liveStatus = h('span', { id: 'live', role: 'status', class: 'live' }, 'connecting…');
  const main = h('main', { id: 'view', tabindex: '-1' });
  replace(document.body,
    h('a', { class: 'skip', href: '#view', onclick: (e) => { e.preventDefault(); main.focus(); } }, 'Skip to content'),
    h('header', { class: 'top' },
      h('a', { class: 'brand', href: '#/overview' }, 'Tradeledger'),
      nav,
      h('div', { class: 'tools' }, liveStatus, tz, theme, logout)),
    main,
    h('footer', null,
      'Charts: ', h('a', { href: 'https://www.tradingview.com/', rel: 'noopener noreferrer' }, 'TradingView Lightweight Charts™'),
      ' (', h('a', { href: '/dashboard/vendor/lightweight-charts/NOTICE' }, 'notice'), ', ',
      h('a', { href: '/dashboard/vendor/lightweight-charts/LICENSE' }, 'license'), ')'));
  ctx.live = new Live('/api/v1/events/stream', (state) => {
    liveStatus.textContent = state.text;
    liveStatus.dataset.state = state.name;
  });
  return { main, nav };
}

async function route() {
  if (!shell) return;
  const seq = ++renderSeq;
  const [name = 'overview', ...params] = location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  const page = pages[name] ? name : 'overview';
  delete document.body.dataset.ready;
  if (cleanup) { cleanup(); cleanup = null; }
  for (const a of shell.nav.querySelectorAll('a')) {
    if (a.dataset.page === page) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  ctx.params = params;
  const view = shell.main;
  replace(view, h('p', { class: 'muted' }, 'Loading…'));
  document.title = `${pages[page].label} · Tradeledger`;
  try {
    const mod = await pages[page].load();
    if (seq !== renderSeq) return;
    const c = await mod.render(view, ctx);
    if (seq !== renderSeq) { if (typeof c === 'function') c(); return; }
    cleanup = typeof c === 'function' ? c : null;
    document.body.dataset.ready = page;
  } catch (err) {
    if (seq !== renderSeq) return;
    if (err.status === 401) return;
    replace(view, h('p', { class: 'error', role: 'alert' }, `Could not load ${pages[page].label}: ${err.message}`));
    document.body.dataset.ready = page;
    document.body.dataset.error = err.message;
  }
}

async function start() {
  try {
    await get('/auth/status');
    performance.mark('auth-ok');
  } catch (err) {
    if (err.status === 401) { showLogin(); return; }
    replace(document.body, h('main', { class: 'login-page' }, h('p', { class: 'error', role: 'alert' }, err.message)));
    return;
  }
  shell = buildShell();
  route();
}

onUnauthorized(() => showLogin('Your session ended; log in again.'));
window.addEventListener('hashchange', route);
performance.mark('app-start');
start();
