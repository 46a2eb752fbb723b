// Test harness: a real `tradeledger serve` (the built binary) on 127.0.0.1
// with a temp data dir, and Debian's chromium driven by playwright-core with
// every non-loopback request blocked.

import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
export const repo = resolve(here, '../../..');
export const bin = process.env.TRADELEDGER_BIN || join(repo, 'bin/tradeledger');
export const shots = process.env.SCREENSHOTS || join(here, 'screenshots');
export const PASSWORD = 'dashboard e2e password';

// startServer imports `fixture` (a Gunbot-style folder, or none) into a
// fresh data dir (with `importArgs`, such as --start) and starts serve on
// 127.0.0.1:0 with any extra serve `args`; it resolves once serve logs its
// address. importSummary is what the import printed.
export async function startServer({ fixture, args = [], importArgs = [] } = {}) {
  const data = mkdtempSync(join(tmpdir(), 'tl-e2e-'));
  const env = { ...process.env, TRADELEDGER_PASSWORD: PASSWORD };
  delete env.TRADELEDGER_LISTEN;
  let importSummary = '';
  if (fixture) {
    importSummary = execFileSync(bin, ['import', '--data', data, '--from', resolve(repo, fixture), ...importArgs],
      { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 28 }).trim();
  }
  let log = '';
  const serve = (listen, extra) => {
    const proc = spawn(bin, ['serve', '--data', data, '--listen', listen, '--files-listen', '', ...extra], {
      env, stdio: ['ignore', 'pipe', 'pipe'],
    });
    const url = new Promise((ok, fail) => {
      let mine = '';
      const onData = (chunk) => {
        log = (log + chunk).slice(-200000); // the tail, for failure messages
        mine += chunk;
        const m = mine.match(/"api":"(http:\/\/127\.0\.0\.1:\d+)"/);
        if (m) { ok(m[1]); mine = ''; }
      };
      proc.stdout.on('data', onData);
      proc.stderr.on('data', onData);
      proc.on('exit', (code) => fail(new Error(`serve exited (${code}) before listening:\n${log}`)));
    });
    return { proc, url };
  };
  const halt = async (proc) => {
    proc.kill('SIGTERM');
    await new Promise((ok) => (proc.exitCode != null ? ok() : proc.on('exit', ok)));
  };
  let { proc, url } = serve('127.0.0.1:0', args);
  url = await url;
  // The login key of API clients, whatever the import did with the fixture's.
  const wallet = execFileSync(bin, ['wallet', '--data', data], { env, encoding: 'utf8' }).trim();
  return {
    url, data, wallet, importSummary,
    log: () => log,
    // cli runs a tradeledger command on this data dir and returns its
    // standard output.
    cli: (...cmd) => execFileSync(bin, [...cmd, '--data', data], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim(),
    // restart stops serve and starts it again on the same address and data
    // dir (with newArgs, when given, instead of its extra args), calling
    // between() while it is down.
    async restart(between = async () => {}, newArgs = args) {
      await halt(proc);
      await between();
      const s = serve(url.replace('http://', ''), newArgs);
      proc = s.proc;
      await s.url;
    },
    async stop() {
      await halt(proc);
      rmSync(data, { recursive: true, force: true });
    },
  };
}

// launch starts headless chromium with the flags this machine needs and a
// fresh profile (playwright makes a new temp --user-data-dir per launch).
export async function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
}

// newPage opens a page in a new context (its own cookies) that blocks
// every request not to 127.0.0.1 and records console errors, page errors,
// CSP violations and blocked requests in page.problems.
export async function newPage(browser, options = {}) {
  const context = await browser.newContext({ timezoneId: 'UTC', locale: 'en-US', viewport: { width: 1280, height: 900 }, ...options });
  const problems = [];
  await context.route('**/*', (route) => {
    const u = new URL(route.request().url());
    if (u.hostname === '127.0.0.1' || u.protocol === 'data:') return route.continue();
    problems.push(`blocked request to ${u.href}`);
    return route.abort('blockedbyclient');
  });
  const page = await context.newPage();
  page.problems = problems;
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    // Failed requests are recorded by path below.
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(`console: ${m.text()}`);
  });
  page.on('response', (r) => {
    const u = new URL(r.url());
    // 401 from auth/status is how the page learns it must log in.
    if (r.status() >= 400 && !(r.status() === 401 && u.pathname === '/api/v1/auth/status')) {
      problems.push(`${r.status()} ${r.request().method()} ${u.pathname}`);
    }
  });
  return page;
}

// ready waits for <body data-ready=name>.
export async function ready(page, name) {
  await page.waitForSelector(`body[data-ready="${name}"]`, { timeout: 30000 });
}

export async function login(page, url, password = PASSWORD) {
  await page.goto(url + '/');
  await ready(page, 'login');
  await page.fill('#password', password);
  await page.click('form.login button[type=submit]');
}

export async function screenshot(page, name) {
  mkdirSync(shots, { recursive: true });
  const path = join(shots, name + '.png');
  await page.screenshot({ path, fullPage: true });
  return path;
}

// apiClient logs in like an API client (the ENC: password under the wallet
// of the fixture's config) and returns a function that calls the API with
// its bearer token: "another client" next to the browser.
export async function apiClient(url, wallet, password = PASSWORD) {
  const { createCipheriv } = await import('node:crypto');
  const key = Buffer.from(wallet, 'utf8').subarray(0, 16);
  const c = createCipheriv('aes-128-cbc', key, key);
  const enc = 'ENC:' + Buffer.concat([c.update(password, 'utf8'), c.final()]).toString('base64');
  const login = await fetch(url + '/api/v1/auth/login', {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ password: enc }) });
  const { token } = await login.json();
  if (!token) throw new Error(`API login failed: ${login.status}`);
  return async (method, path, body) => {
    const r = await fetch(url + '/api/v1' + path, {
      method, headers: { Authorization: 'Bearer ' + token, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined });
    const data = await r.json();
    if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${data.message}`);
    return data;
  };
}

// untilCycling waits until the core has collected market data for key (the
// first cycle after system/start runs on the core's own schedule, after the
// exchange's reconcile), polling the API; it fails after timeoutMs.
export async function untilCycling(api, key, timeoutMs = 20000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await api('GET', '/market/candles?key=' + encodeURIComponent(key));
      return;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`no market data for ${key} after ${timeoutMs} ms: ${err.message}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
