// The dashboard's shell: login, navigation (hash routes), time zone, the
// as-of time ("time travel"), theme, and the live connection (server-sent
// events). Each page is a module loaded when first shown; it exports
// render(view, ctx) and may return a cleanup function. When a page has
// drawn its data, the shell sets <body data-ready="<page>"> (the browser
// tests wait for it).

import { h, replace } from './dom.js';
import { get, post, onUnauthorized } from './api.js';
import { Live } from './live.js';
import { dateTime, zoneParts, zoneTime } from './fmt.js';

// asOf: what a page shows for a past time, or absent (it shows the
// present; api.js asOfRoutes lists the routes that answer as of a time).
const pages = {
  overview: { label: 'Overview', load: () => import('./overview.js'), asOf: 'PNL as the books stood then' },
  pair: { label: 'Pair', load: () => import('./pair.js') },
  orders: { label: 'Orders', load: () => import('./orders.js'), asOf: 'orders placed by then, as they stood then' },
  balances: { label: 'Balances', load: () => import('./balances.js'), asOf: 'balances as the exchanges last reported them by then' },
  reports: { label: 'Reports', load: () => import('./reports.js'), asOf: 'the books as they stood then' },
  reconcile: { label: 'Reconciliation', load: () => import('./reconcile.js'), asOf: 'the accounts as the log held them then' },
  settings: { label: 'Settings', load: () => import('./settings.js') },
  files: { label: 'Files', load: () => import('./files.js') },
  audit: { label: 'Audit', load: () => import('./audit.js') },
  fleet: { label: 'Fleet', load: () => import('./fleet.js') },
  // under: reached from that page's link, not from the menu.
  bots: { label: 'Bots', load: () => import('./bots.js'), under: 'fleet' },
};

const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

const ctx = {
  tz: localStorage.getItem('tz') || browserZone,
  live: null,
  // asOf: ms of the past time every page is shown at, or null (now).
  asOf: Number(sessionStorage.getItem('asOf')) || null,
  // params of the current route: #/pair/<key> → ['<key>']
  params: [],
  navigate(hash) { location.hash = hash; },
  // setAsOf moves the dashboard to a past time (ms) or back to now (null).
  setAsOf(ms) {
    ctx.asOf = ms || null;
    if (ctx.asOf) sessionStorage.setItem('asOf', String(ctx.asOf));
    else sessionStorage.removeItem('asOf');
    drawAsOf();
    route();
  },
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

// localInput is the value of a datetime-local input for ms in zone tz.
function localInput(ms, tz) {
  const p = zoneParts(ms, tz);
  const z = (n, w = 2) => String(n).padStart(w, '0');
  return `${z(p.year, 4)}-${z(p.month)}-${z(p.day)}T${z(p.hour)}:${z(p.minute)}`;
}

let asOfBox, asOfBanner;
// closeMenu folds the narrow screen's menu (set by buildShell).
let closeMenu = () => {};
// fitHeader keeps the header on one line (set by buildShell).
let fitHeader = () => {};

// drawAsOf shows the as-of picker's state and the banner while in the past.
function drawAsOf() {
  if (!asOfBox) return;
  const { summary, input } = asOfBox;
  summary.textContent = ctx.asOf ? `As of ${dateTime(ctx.asOf, ctx.tz).slice(0, 16)}` : 'As of now';
  summary.parentElement.classList.toggle('past', !!ctx.asOf);
  input.value = localInput(ctx.asOf || Date.now(), ctx.tz);
  asOfBanner.hidden = !ctx.asOf;
  document.body.classList.toggle('in-past', !!ctx.asOf);
  fitHeader();
  if (!ctx.asOf) return;
  const [name] = location.hash.replace(/^#\/?/, '').split('/');
  const page = pages[name] || pages.overview;
  replace(asOfBanner.text,
    h('strong', null, `As of ${dateTime(ctx.asOf, ctx.tz)} (${ctx.tz}). `),
    page.asOf ? `${page.label}: ${page.asOf}.`
      : `${page.label} shows the present: Overview, Orders, Balances and Reports answer for a past time.`);
}

function buildAsOf() {
  const input = h('input', { type: 'datetime-local', id: 'asof-input', step: 60, 'aria-label': 'Show the dashboard as of' });
  const error = h('p', { class: 'field-error', id: 'asof-error', role: 'alert' });
  const summary = h('summary', { id: 'asof-summary', title: 'Time travel: show the dashboard as of a past time' }, 'As of now');
  const details = h('details', { class: 'asof', id: 'asof' }, summary,
    h('form', {
      class: 'asof-form',
      onsubmit: (e) => {
        e.preventDefault();
        const m = input.value.match(/^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})/);
        if (!m) { error.textContent = 'Pick a date and time.'; return; }
        const ms = zoneTime(+m[1], +m[2], +m[3], +m[4], +m[5], 0, ctx.tz);
        if (ms > Date.now()) { error.textContent = 'That is in the future: pick a past time.'; return; }
        error.textContent = '';
        details.open = false;
        closeMenu();
        ctx.setAsOf(ms);
      },
    },
    h('label', { for: 'asof-input' }, `Show as of (${ctx.tz})`), input, error,
    h('div', { class: 'row' },
      h('button', { type: 'submit', class: 'primary', id: 'asof-go' }, 'Show'),
      h('button', { type: 'button', id: 'asof-now', onclick: () => { details.open = false; closeMenu(); ctx.setAsOf(null); } }, 'Now'))));
  asOfBox = { summary, input, details };
  return details;
}

function buildShell() {
  const nav = h('nav', { 'aria-label': 'Pages', id: 'nav' },
    h('ul', null, Object.entries(pages).filter(([n, p]) => n !== 'pair' && !p.under).map(([name, p]) =>
      h('li', null, h('a', { href: '#/' + name, dataset: { page: name } }, p.label)))));
  const tz = h('select', {
    id: 'tz', 'aria-label': 'Time zone',
    onchange: () => { ctx.tz = tz.value; localStorage.setItem('tz', tz.value); drawAsOf(); route(); },
  }, zones().map(z => h('option', { value: z, selected: z === ctx.tz }, z)));
  const theme = h('button', {
    type: 'button', id: 'theme', 'aria-label': 'Switch theme',
    onclick: () => {
      const next = currentTheme() === 'dark' ? 'light' : 'dark';
      localStorage.setItem('theme', next);
      setTheme(next);
      theme.textContent = next === 'dark' ? '☀' : '☾';
      theme.title = next === 'dark' ? 'Light theme' : 'Dark theme';
      window.dispatchEvent(new Event('themechange'));
    },
    title: currentTheme() === 'dark' ? 'Light theme' : 'Dark theme',
  }, currentTheme() === 'dark' ? '☀' : '☾');
  const logout = h('button', {
    type: 'button', id: 'logout',
    onclick: async () => { try { await post('/dashboard/logout'); } catch {} showLogin(); },
  }, 'Log out');
  const liveStatus = h('span', { id: 'live', role: 'status', class: 'live' }, 'connecting…');
  const main = h('main', { id: 'view', tabindex: '-1' });
  // On a narrow screen the pages and tools fold under one button.
  const menu = h('button', {
    type: 'button', id: 'menu', class: 'menu', 'aria-expanded': 'false', 'aria-controls': 'header-menu',
    onclick: () => {
      const open = menu.getAttribute('aria-expanded') !== 'true';
      menu.setAttribute('aria-expanded', String(open));
      header.classList.toggle('open', open);
    },
  }, h('span', { class: 'menu-label' }, 'Menu'));
  const header = h('header', { class: 'top' },
    h('div', { class: 'bar' },
      h('a', { class: 'brand', href: '#/overview' }, 'Tradeledger'),
      liveStatus, menu),
    h('div', { class: 'header-menu', id: 'header-menu' },
      nav,
      h('div', { class: 'tools' }, buildAsOf(), tz, theme, logout)));
  closeMenu = () => { menu.setAttribute('aria-expanded', 'false'); header.classList.remove('open'); };
  nav.addEventListener('click', (e) => { if (e.target.closest('a')) closeMenu(); });
  // A header that would wrap (more pages, a long as-of time, a narrower
  // window) folds its pages and tools under the menu, as on a phone.
  fitHeader = () => {
    header.classList.remove('compact');
    const middle = (el) => { const r = el.getBoundingClientRect(); return r.height ? (r.top + r.bottom) / 2 : null; };
    const line = middle(header.querySelector('.bar'));
    const parts = [...nav.querySelectorAll('li'), ...header.querySelectorAll('.tools > *')].map(middle).filter((m) => m != null);
    if (parts.some((m) => Math.abs(m - line) > 12)) header.classList.add('compact');
  };
  new ResizeObserver(() => { if (!header.classList.contains('open')) fitHeader(); }).observe(document.body);
  const bannerText = h('p', { class: 'asof-text' });
  asOfBanner = h('div', { class: 'asof-banner', id: 'asof-banner', role: 'status', hidden: true },
    bannerText, h('button', { type: 'button', id: 'asof-back', onclick: () => ctx.setAsOf(null) }, 'Back to now'));
  asOfBanner.text = bannerText;
  replace(document.body,
    h('a', { class: 'skip', href: '#view', onclick: (e) => { e.preventDefault(); main.focus(); } }, 'Skip to content'),
    header, asOfBanner,
    main,
    h('footer', null,
      'Charts: ', h('a', { href: 'https://www.tradingview.com/', rel: 'noopener noreferrer' }, 'TradingView Lightweight Charts™'),
      ' (', h('a', { href: '/dashboard/vendor/lightweight-charts/NOTICE' }, 'notice'), ', ',
      h('a', { href: '/dashboard/vendor/lightweight-charts/LICENSE' }, 'license'), ')'));
  ctx.live = new Live('/api/v1/events/stream', (state) => {
    liveStatus.textContent = state.text;
    liveStatus.title = state.text; // shown whole on hover where the header cuts it short
    liveStatus.dataset.state = state.name;
    if (!header.classList.contains('open')) fitHeader();
  });
  drawAsOf();
  return { main, nav };
}

async function route() {
  if (!shell) return;
  const seq = ++renderSeq;
  const [name = 'overview', ...params] = location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  const page = pages[name] ? name : 'overview';
  delete document.body.dataset.ready;
  delete document.body.dataset.error;
  if (cleanup) { cleanup(); cleanup = null; }
  for (const a of shell.nav.querySelectorAll('a')) {
    if (a.dataset.page === page || a.dataset.page === pages[page].under) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  ctx.params = params;
  drawAsOf();
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
