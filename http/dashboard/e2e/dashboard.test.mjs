// Browser tests of the dashboard: each scenario asserts on the DOM
// (readiness flags, counts, text), never on pixels; screenshots of each page
// are written to ./screenshots (or $SCREENSHOTS) for review.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, launch, newPage, ready, login, screenshot, apiClient, untilCycling, PASSWORD } from './harness.mjs';

let server, browser, api;

before(async () => {
  server = await startServer({ fixture: 'testdata/dashboard-history' });
  browser = await launch();
  api = await apiClient(server.url, server.wallet);
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

const text = (page, sel) => page.locator(sel).innerText();

test('a bad password shows an error and nothing else', async () => {
  const page = await newPage(browser);
  await login(page, server.url, 'not the password');
  await page.waitForSelector('#login-error:not([hidden])');
  assert.equal(await text(page, '#login-error'), 'invalid password');
  assert.equal(await page.locator('nav').count(), 0, 'no navigation without a login');
  assert.equal(await page.locator('#view').count(), 0);
  const cookies = await page.context().cookies();
  assert.deepEqual(cookies.map((c) => c.name), [], 'no cookie for a refused login');
  await screenshot(page, 'login-error');
  assert.deepEqual(page.problems, ['401 POST /api/v1/dashboard/login']);
  await page.context().close();
});

test('log in: HttpOnly SameSite=Strict session, CSRF cookie readable, no token in storage', async () => {
  const page = await newPage(browser);
  await login(page, server.url);
  await ready(page, 'overview');
  const cookies = Object.fromEntries((await page.context().cookies()).map((c) => [c.name, c]));
  assert.equal(cookies.tl_session.httpOnly, true);
  assert.equal(cookies.tl_session.sameSite, 'Strict');
  assert.equal(cookies.tl_csrf.httpOnly, false);
  assert.equal(cookies.tl_csrf.sameSite, 'Strict');
  const seen = await page.evaluate(() => ({ cookie: document.cookie, storage: JSON.stringify(localStorage) }));
  assert.ok(!seen.cookie.includes('tl_session'), 'the session cookie is not readable by scripts');
  assert.ok(!seen.storage.includes(cookies.tl_session.value));
  // A write without the CSRF header is refused even with the cookie.
  const status = await page.evaluate(async () => (await fetch('/api/v1/config/strategy/add', {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"name":"csrf-probe"}' })).status);
  assert.equal(status, 403);
  page.problems.splice(page.problems.indexOf('403 POST /api/v1/config/strategy/add'), 1);
  // The page's first load, compressed.
  const bytes = await page.evaluate(() => performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'))
    .filter((e) => !e.name.includes('/api/')).reduce((n, e) => n + e.transferSize, 0));
  console.log(`first load transferred: ${bytes} bytes`);
  assert.ok(bytes > 0 && bytes <= 300 * 1024, `first load ${bytes} bytes`);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

async function dailyRows(page) {
  return page.$$eval('#daily tbody tr', (trs) => Object.fromEntries(trs.map((tr) => [tr.dataset.date, tr.querySelector('[data-col=pnl]').textContent])));
}

test('overview shows the hand-computed PNL in two time zones', async () => {
  const page = await newPage(browser);
  await login(page, server.url);
  await ready(page, 'overview');
  assert.equal(await page.inputValue('#tz'), 'UTC', 'the browser zone is the default');
  assert.equal(await text(page, '#m-total .value'), '+105.00 USDT');
  assert.equal(await text(page, '#m-winrate .value'), '66.67 %');
  assert.equal(await text(page, '#m-best .value'), '+100.00 USDT');
  assert.equal(await text(page, '#m-worst .value'), '-5.00 USDT');
  assert.deepEqual(await dailyRows(page), { '2024-03-11': '+100.00', '2024-03-10': '-5.00', '2024-03-09': '+10.00', '2024-03-08': '0.00' });
  // Per-pair table, sorted by pnl (descending) and then by trades.
  assert.deepEqual(await page.$$eval('#pairs tbody tr', (trs) => trs.map((t) => t.dataset.key)), ['binance/USDT-ETH', 'binance/USDT-BTC']);
  assert.equal(await text(page, '#pairs tr[data-key="binance/USDT-BTC"] [data-col=pnl]'), '+5.00');
  await page.click('button[data-sort=trades]');
  assert.deepEqual(await page.$$eval('#pairs tbody tr', (trs) => trs.map((t) => t.dataset.key)), ['binance/USDT-BTC', 'binance/USDT-ETH']);
  assert.equal(await page.getAttribute('#pairs th:nth-child(4)', 'aria-sort'), 'descending');
  assert.ok(await page.locator('#pnl-chart canvas').count() > 0, 'the chart is drawn');
  const tti = await page.evaluate(() => performance.getEntriesByName('overview')[0]?.duration);
  console.log(`overview drawn ${Math.round(tti)} ms after the app started, login included (6 fills)`);
  await screenshot(page, 'overview-light');

  await page.selectOption('#tz', 'Asia/Tokyo');
  await ready(page, 'overview');
  assert.deepEqual(await dailyRows(page), { '2024-03-11': '+100.00', '2024-03-10': '+5.00', '2024-03-09': '0.00', '2024-03-08': '0.00' });
  assert.equal(await text(page, '#m-total .value'), '+105.00 USDT');

  await page.click('#theme');
  assert.equal(await page.getAttribute('html', 'data-theme'), 'dark');
  await screenshot(page, 'overview-dark');
  await page.setViewportSize({ width: 375, height: 800 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `no sideways scrolling at 375 px (${overflow} px too wide)`);
  await screenshot(page, 'overview-375');
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test('pair: place a limit order from the ticket, see it open and as a price line, cancel it; a refused order shows the message at the field', async () => {
  await api('POST', '/system/start'); // pairs trade (and have candles) only while the system runs
  await untilCycling(api, 'binance/USDT-BTC');
  const page = await newPage(browser);
  await login(page, server.url);
  await ready(page, 'overview');
  await page.click('#pairs a[href="#/pair/binance%2FUSDT-BTC"]');
  await ready(page, 'pair');
  assert.equal(await page.inputValue('#pair-picker'), 'binance/USDT-BTC');
  assert.ok(await page.locator('#candles canvas').count() > 0, 'the candles are drawn');
  assert.equal(await text(page, '#chart-note'), '', 'market data is there');
  await page.waitForSelector('#no-open');

  // A limit buy far below the market stays open.
  await page.selectOption('#t-kind', 'limit');
  await page.fill('#t-amt', '0.001');
  await page.fill('#t-price', '1000');
  await page.click('#ticket-review');
  assert.equal(await text(page, '#ticket-summary'), 'Buy limit on binance/USDT-BTC: Amount 0.001, Price 1,000.00');
  assert.equal(await page.locator('#open-table').count(), 0, 'nothing is sent before the confirmation');
  await page.click('#ticket-confirm-button');
  await page.waitForSelector('#open-table tbody tr');
  assert.match(await text(page, '#ticket-result'), /^Order sent \(id \d+\)$/);
  assert.equal(await page.locator('#open-table tbody tr').count(), 1);
  assert.deepEqual(await page.$$eval('#price-lines li', (l) => l.map((x) => x.textContent)), ['limit buy 0.001 @ 1,000.00']);
  await screenshot(page, 'pair');

  await page.click('#open-table button.cancel');
  await page.waitForSelector('#no-open');
  assert.equal(await page.locator('#price-lines li').count(), 0);

  // The server refuses a negative amount: its message shows at the field.
  await page.fill('#t-amt', '-1');
  await page.click('#ticket-review');
  await page.click('#ticket-confirm-button');
  await page.waitForSelector('#t-amt[aria-invalid=true]');
  assert.equal(await text(page, '#t-amt-error'), 'field "amt" must be greater than 0');
  assert.equal(await text(page, '#t-price-error'), '');
  assert.equal(await page.locator('#open-table').count(), 0);

  // An order placed by another client appears through the live stream.
  const { id } = await api('POST', '/trade/sell', { data: { exch: 'binance', pair: 'USDT-BTC', amt: 0.002, price: 1000000 } });
  await page.waitForSelector(`#open-table tr[data-id="${id}"]`);
  await api('POST', '/trade/cancel', { data: { exch: 'binance', pair: 'USDT-BTC', id: String(id), price: 1000000, type: 'limit' } });
  await page.waitForSelector('#no-open');

  // A market buy fills at once and shows as a ▲ marker on its candle.
  assert.equal(await page.getAttribute('#candles', 'data-fills'), '0');
  await page.selectOption('#t-kind', 'market');
  await page.fill('#t-amt', '0.001');
  await page.click('#ticket-review');
  await page.click('#ticket-confirm-button');
  await page.waitForSelector('#candles[data-fills="1"]');
  assert.deepEqual(page.problems, ['400 POST /api/v1/trade/buy'], 'the refused order and nothing else failed');
  await page.context().close();
});

test('orders: filter by pair, side and dates, export what the filter shows as CSV', async () => {
  const page = await newPage(browser);
  await login(page, server.url);
  await ready(page, 'overview');
  await page.goto(server.url + '/#/orders');
  await ready(page, 'orders');
  await page.waitForSelector('body[data-orders-ready=true]');
  assert.ok(await page.locator('#orders-table tbody tr').count() >= 6, 'every fill of the fixture is listed');
  await page.uncheck('#f-pair-binance\\/USDT-ETH');
  await page.selectOption('#f-side', 'sell');
  await page.fill('#f-from', '2024-03-09');
  await page.fill('#f-to', '2024-03-10');
  await page.click('#apply');
  await page.waitForSelector('#orders-status:text-matches("^Showing 1–2 of 2 ")');
  const rows = await page.$$eval('#orders-table tbody tr', (trs) => trs.map((t) => [...t.cells].slice(0, 4).map((c) => c.textContent)));
  assert.deepEqual(rows, [
    ['2024-03-10 12:00:00', 'binance/USDT-BTC', 'sell', '57,500.00'],
    ['2024-03-09 23:30:00', 'binance/USDT-BTC', 'sell', '62,000.00'],
  ]);
  assert.equal(await text(page, '#orders-status'), 'Showing 1–2 of 2 (of 5 records of these pairs)');
  await screenshot(page, 'orders');
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#csv')]);
  const { readFile } = await import('node:fs/promises');
  const csv = (await readFile(await download.path(), 'utf8')).trim().split('\n');
  assert.equal(csv.length, 3, 'a header and the two rows shown');
  assert.match(csv[0], /^time,time_UTC,key,side,rate,amount,cost,fees,pnl,id$/);
  assert.match(csv[1], /^1710072000000,2024-03-10 12:00:00,binance\/USDT-BTC,sell,57500,0\.01,575,0,-5,\d+$/);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test('audit: browse and filter the log, verify it and copy the digest, live tail of another client\'s order', async () => {
  const page = await newPage(browser);
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
  await login(page, server.url);
  await ready(page, 'overview');
  await page.goto(server.url + '/#/audit');
  await ready(page, 'audit');
  assert.ok(await page.locator('#events tbody tr').count() >= 30, 'the first page of events');
  await page.fill('#a-type', 'OrderFilled');
  await page.click('#a-apply');
  await page.waitForFunction(() => [...document.querySelectorAll('#events tbody tr')].every((tr) => tr.dataset.type === 'OrderFilled'));
  assert.ok(await page.locator('#events tbody tr').count() >= 6);
  // Secrets are redacted as the API does: no password hash in the page.
  await page.fill('#a-type', 'PasswordSet');
  await page.click('#a-apply');
  await page.waitForFunction(() => document.querySelector('#events tbody tr')?.dataset.type === 'PasswordSet');
  assert.match(await text(page, '#events tbody tr'), /\(redacted\)/);
  assert.doesNotMatch(await page.locator('#events').textContent(), /argon2id/);

  await page.click('#verify');
  await page.waitForSelector('#verify-result[data-done]');
  assert.equal(await page.getAttribute('#verify-result', 'data-done'), 'ok');
  assert.match(await text(page, '#verify-ok'), /^✔ Log verified: \d+ events in \d+ streams/);
  const digest = await text(page, '#digest');
  assert.match(digest, /^[0-9a-f]{64}$/);
  assert.equal(digest, (await api('GET', '/audit/verify')).headsDigest, 'the digest the API gives');
  await page.click('#copy-digest');
  await page.waitForSelector('#copied:text("Copied.")');
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), digest);

  await page.fill('#a-type', '');
  await page.check('#tail-on');
  const { id } = await api('POST', '/trade/buy', { data: { exch: 'binance', pair: 'USDT-ETH', amt: 0.01, price: 10 } });
  await page.waitForSelector('#tail li[data-type=OrderAccepted]');
  assert.match(await page.locator('#tail').textContent(), /OrderRequested by admin/);
  await screenshot(page, 'audit');
  await api('POST', '/trade/cancel', { data: { exch: 'binance', pair: 'USDT-ETH', id: String(id), price: 10, type: 'limit' } });
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test('balances: per exchange, and the asset value history', async () => {
  const page = await newPage(browser);
  await login(page, server.url);
  await ready(page, 'overview');
  await page.click('nav a[data-page=balances]');
  await ready(page, 'balances');
  const assets = await page.$$eval('table.balances[data-exchange=binance] tbody tr', (trs) => trs.map((t) => t.dataset.asset));
  assert.deepEqual(assets, ['BTC', 'ETH', 'USDC', 'USDT']);
  assert.ok(Number(await page.getAttribute('#assets-chart', 'data-points')) >= 1, 'at least one valued snapshot');
  assert.match(await text(page, '#assets-note'), /^\d+ points?; latest [\d,.]+ USDT at /);
  await screenshot(page, 'balances');
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test('settings: add a strategy and a pair, disable it, keys masked, start and stop', async () => {
  const page = await newPage(browser);
  await login(page, server.url);
  await ready(page, 'overview');
  await page.click('nav a[data-page=settings]');
  await ready(page, 'settings');
  await page.waitForSelector('#system-state:text("running")');
  // Which connector each exchange trades on, as the running server chose it.
  await page.waitForSelector('#exchange-modes tr[data-exchange=binance] td:nth-child(2):text("on paper (simulated)")');
  assert.match(await text(page, '#exchange-modes tr[data-exchange=binance] td:nth-child(2)'), /bot\.SIMULATOR is true/);

  await page.fill('#new-strategy', 'e2e-grid');
  await page.selectOption('#new-strategy-algo', 'stepgrid');
  await page.click('#add-strategy-button');
  await page.waitForSelector('#strategies tr[data-name=e2e-grid]');
  assert.equal(await text(page, '#strategies tr[data-name=e2e-grid] td:nth-child(2)'), 'stepgrid');

  await page.fill('#new-pair', 'USDT-SOL');
  await page.selectOption('#new-pair-strategy', 'e2e-grid');
  await page.click('#add-pair-button');
  await page.waitForSelector('#pairs-settings tr[data-key="binance/USDT-SOL"]');
  let cfg = (await api('GET', '/config/full')).config;
  assert.deepEqual(cfg.pairs.binance['USDT-SOL'], { strategy: 'e2e-grid', enabled: true, override: {} });
  await page.uncheck('#pairs-settings tr[data-key="binance/USDT-SOL"] input.enabled');
  await page.waitForSelector('#settings-status:text("binance/USDT-SOL disabled.")');
  cfg = (await api('GET', '/config/full')).config;
  assert.equal(cfg.pairs.binance['USDT-SOL'].enabled, false);

  // A strategy in use cannot go: the server's message shows at its form.
  await page.click('#strategies tr[data-name=e2e-grid] button.remove');
  await page.waitForSelector('#strategy-error:not(:empty)');
  assert.match(await text(page, '#strategy-error'), /USDT-SOL/);

  // A new key is sent once and never shown back.
  await page.fill('#k-binance-key', 'e2e-api-key-4f1c');
  await page.fill('#k-binance-secret', 'e2e-api-secret-9d2e');
  await page.click('form.keys[data-exchange=binance] button.save-keys');
  await page.waitForSelector('#settings-status:text("Keys of binance saved.")');
  assert.equal(await text(page, 'label[for=k-binance-key]'), 'key (set)');
  const html = await page.content();
  assert.ok(!html.includes('e2e-api-key-4f1c') && !html.includes('e2e-api-secret-9d2e'), 'the key is not in the page');
  assert.equal(await page.inputValue('#k-binance-key'), '');
  cfg = (await api('GET', '/config/full')).config;
  assert.equal(cfg.exchanges.binance.key, '********');
  await screenshot(page, 'settings');

  await page.click('#system-stop');
  await page.waitForSelector('#system-state:text("stopped")');
  await page.click('#system-start');
  await page.waitForSelector('#system-state:text("running")');
  assert.deepEqual(page.problems, ['409 POST /api/v1/config/strategy/remove']);
  await page.context().close();
});

test('files: create, edit and delete a strategy file; write autoconfig.json and read its backup', async () => {
  const page = await newPage(browser);
  await login(page, server.url);
  await ready(page, 'overview');
  await page.click('nav a[data-page=files]');
  await ready(page, 'files');

  await page.click('#file-new');
  await page.fill('#file-name', 'e2e.js');
  await page.fill('#file-editor', '// first\nmodule.exports = {};\n');
  await page.click('#file-save');
  await page.waitForSelector('#strategy-files li[data-file="e2e.js"]');
  // Edit: open it fresh, change it, save, and read it back after a reload.
  await page.reload();
  await ready(page, 'files');
  await page.click('#strategy-files li[data-file="e2e.js"] button');
  await page.waitForSelector('#file-editor[data-loaded="e2e.js"]');
  assert.equal(await page.inputValue('#file-editor'), '// first\nmodule.exports = {};\n');
  await page.fill('#file-editor', '// edited in the dashboard\nmodule.exports = { edited: true };\n');
  await page.click('#file-save');
  await page.waitForSelector('#files-status:text("e2e.js saved.")');
  assert.equal(await (await fetch(server.url + '/api/v1/files/strategy/get', { method: 'POST' })).status, 401, 'files need a login');
  const content = await page.evaluate(async () => (await fetch('/api/v1/files/strategy/get', {
    method: 'POST', headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': document.cookie.match(/tl_csrf=([^;]*)/)[1] },
    body: JSON.stringify({ filename: 'e2e.js' }) })).text());
  assert.equal(content, '// edited in the dashboard\nmodule.exports = { edited: true };\n');
  await screenshot(page, 'files');

  await page.click('#file-delete');
  assert.equal(await text(page, '#file-error'), 'Tick "really delete" first.');
  await page.check('#confirm-delete');
  await page.click('#file-delete');
  await page.waitForSelector('#files-status:text("e2e.js deleted.")');
  assert.equal(await page.locator('#strategy-files li[data-file="e2e.js"]').count(), 0);

  await page.fill('#autoconfig-editor', '{"pairs": {"e2e": 1}}');
  await page.click('#autoconfig-write');
  await page.waitForSelector('#files-status:text-matches("autoconfig.json written")');
  await page.fill('#autoconfig-editor', '{"pairs": {"e2e": 2}}');
  await page.click('#autoconfig-write');
  await page.waitForSelector('#backups[data-count="1"]');
  await page.fill('#autoconfig-editor', '');
  await page.click('#backup-show');
  await page.waitForFunction(() => document.querySelector('#autoconfig-editor').value !== '');
  assert.deepEqual(JSON.parse(await page.inputValue('#autoconfig-editor')), { pairs: { e2e: 1 } });
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

const allPages = ['overview', 'pair', 'orders', 'balances', 'settings', 'files', 'audit'];

test('every page in dark at 375 px: no sideways scrolling, screenshots', async () => {
  const page = await newPage(browser, { viewport: { width: 375, height: 812 }, colorScheme: 'dark' });
  await login(page, server.url);
  await ready(page, 'overview');
  assert.equal(await page.evaluate(() => getComputedStyle(document.body).backgroundColor), 'rgb(15, 18, 22)', 'dark from the system setting');
  for (const name of allPages) {
    await page.goto(server.url + '/#/' + name);
    await ready(page, name);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `${name}: ${overflow} px too wide at 375 px`);
    await screenshot(page, `${name}-dark-375`);
  }
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test('the keyboard alone: log in, move between pages, sort a table', async () => {
  const page = await newPage(browser);
  await page.goto(server.url + '/');
  await ready(page, 'login');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'password', 'the password field has the focus');
  await page.keyboard.type(PASSWORD);
  await page.keyboard.press('Enter');
  await ready(page, 'overview');
  // Tab to the Orders link.
  for (let i = 0; i < 20 && (await page.evaluate(() => document.activeElement.dataset?.page)) !== 'orders'; i++) await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.dataset.page), 'orders');
  await page.keyboard.press('Enter');
  await ready(page, 'orders');
  await page.goto(server.url + '/#/overview');
  await ready(page, 'overview');
  await page.focus('button[data-sort=volume]');
  await page.keyboard.press('Enter');
  assert.equal(await page.getAttribute('#pairs th:nth-child(5)', 'aria-sort'), 'descending');
  assert.equal(await page.evaluate(() => document.activeElement.dataset.sort), 'volume', 'the focus stays on the heading');
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test('live: a lost connection says so and resumes after the last event it saw', async () => {
  const page = await newPage(browser);
  await login(page, server.url);
  await ready(page, 'overview');
  await page.goto(server.url + '/#/audit');
  await ready(page, 'audit');
  await page.waitForSelector('#live[data-state=live]');
  await page.check('#tail-on');
  await server.restart(async () => {
    await page.waitForSelector('#live[data-state=lost]');
    assert.equal(await text(page, '#live'), 'connection lost · resuming…');
  });
  await page.waitForSelector('#live[data-state=resumed]', { timeout: 20000 });
  const { id } = await api('POST', '/trade/buy', { data: { exch: 'binance', pair: 'USDT-ETH', amt: 0.01, price: 11 } });
  await page.waitForSelector(`#tail li[data-type=OrderAccepted]`);
  assert.match(await page.locator('#tail').textContent(), new RegExp(`order-${id} OrderRequested`));
  await api('POST', '/trade/cancel', { data: { exch: 'binance', pair: 'USDT-ETH', id: String(id), price: 11, type: 'limit' } });
  // The restart itself shows as failed requests and an aborted stream.
  assert.ok(page.problems.every((p) => /events\/stream|ERR_CONNECTION_REFUSED|net::/.test(p)), page.problems.join('\n'));
  await page.context().close();
});

// Last: it leaves a second quote currency in the log.
test('overview with pairs of two quote currencies: all in the reporting currency, or one quote, picked', async () => {
  // A buy on a BTC-quoted pair: from now on "All" spans two currencies. The
  // reporting currency is USDT (the quote with the most fills); a buy closes
  // no trade, so nothing is left unconverted and the total stays the USDT
  // pairs' hand-computed one.
  await api('POST', '/config/pair/add', { exchange: 'binance', pair: 'BTC-ETH', settings: { strategy: 'manual', enabled: true } });
  await api('POST', '/trade/buy/market', { data: { exch: 'binance', pair: 'BTC-ETH', amt: 0.01 } });
  const page = await newPage(browser);
  await login(page, server.url);
  await ready(page, 'overview');
  assert.deepEqual(await page.$$eval('#quote option', (o) => o.map((x) => [x.value, x.textContent])),
    [['', 'All, in USDT'], ['BTC', 'BTC'], ['USDT', 'USDT']]);
  assert.equal(await text(page, '#unit'), 'in USDT, days in UTC');
  assert.equal(await text(page, '#m-total .value'), '+105.00 USDT');
  assert.match(await text(page, '#conversion'), /^Totals in USDT at rates from the log/);
  assert.equal(await page.locator('#unconverted').count(), 0);
  await page.selectOption('#quote', 'BTC');
  await page.waitForSelector('#unit:text("in BTC, days in UTC")');
  assert.equal(await page.locator('#conversion').isHidden(), true);
  await page.selectOption('#quote', 'USDT');
  await page.waitForSelector('#unit:text("in USDT, days in UTC")');
  assert.equal(await text(page, '#m-total .value'), '+105.00 USDT');
  // The choice is remembered.
  await page.reload();
  await ready(page, 'overview');
  assert.equal(await page.inputValue('#quote'), 'USDT');
  assert.equal(await text(page, '#unit'), 'in USDT, days in UTC');
  assert.deepEqual(page.problems, []);
  await page.context().close();
});
