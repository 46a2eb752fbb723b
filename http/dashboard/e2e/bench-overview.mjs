// Measures the overview's time to interactive over a large history:
// generates a Gunbot-style folder with ORDERS fills (default 200,000) over
// four pairs and a year, imports it, serves it, and loads the overview in
// headless chromium with a session cookie. The figure is the 'overview-ready'
// performance mark (set when cards, chart, daily table and pair table are
// drawn), measured from navigation start, best and median of RUNS reloads;
// plus the bytes the page transferred. Run: make e2e-bench.

import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, launch, newPage, login, ready } from './harness.mjs';

const ORDERS = Number(process.env.ORDERS || 200000);
const RUNS = Number(process.env.RUNS || 5);
const pairs = ['USDT-BTC', 'USDT-ETH', 'USDT-SOL', 'USDT-ADA'];

const dir = mkdtempSync(join(tmpdir(), 'tl-bench-'));
mkdirSync(join(dir, 'json'));
writeFileSync(join(dir, 'config.js'), 'module.exports = ' + JSON.stringify({
  pairs: { binance: Object.fromEntries(pairs.map((p) => [p, { strategy: 'manual', enabled: true, override: {} }])) },
  strategies: { manual: { STRATEGY: 'manual' } },
  exchanges: { binance: { isEncrypted: false, delay: 5 } },
  bot: { service_wallet: '0xbench000000000000000000000000000001', SIMULATOR: true },
}) + ';\n');
const start = Date.UTC(2025, 0, 1);
const step = Math.floor((365 * 86400000) / (ORDERS / pairs.length));
let seed = 42;
const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
pairs.forEach((pair, pi) => {
  const n = ORDERS / pairs.length;
  const orders = [];
  let price = [60000, 3000, 150, 0.5][pi];
  for (let i = 0; i < n; i++) {
    price *= 1 + (rnd() - 0.5) * 0.01;
    const buy = i % 2 === 0;
    const amount = Number((100 / price).toPrecision(6));
    const rate = Number(price.toPrecision(8));
    orders.push({ time: start + i * step + pi * 1000, pair, type: buy ? 'buy' : 'sell', rate, amount, id: pi * 10_000_000 + i + 1, cost: Number((rate * amount).toFixed(8)) });
  }
  writeFileSync(join(dir, 'json', `binance-${pair}-state.json`), JSON.stringify({ orders, balances: {} }));
});

let t = Date.now();
const server = await startServer({ fixture: dir });
console.log(`imported ${ORDERS} fills and started serve in ${((Date.now() - t) / 1000).toFixed(1)} s`);
const browser = await launch();
try {
  const page = await newPage(browser);
  await login(page, server.url);
  await ready(page, 'overview');
  const times = [];
  let bytes = 0;
  for (let i = 0; i < RUNS; i++) {
    await page.reload();
    await ready(page, 'overview');
    const m = await page.evaluate(() => ({
      ready: performance.getEntriesByName('overview-ready')[0].startTime,
      marks: performance.getEntriesByType('mark').map((e) => `${e.name}@${Math.round(e.startTime)}`).join(' '),
      bytes: performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource')).reduce((n, e) => n + e.transferSize, 0),
      api: performance.getEntriesByType('resource').filter((e) => e.name.includes('/pnl/overview')).map((e) => Math.round(e.duration)),
      total: document.querySelector('#m-total .value').textContent,
    }));
    times.push(m.ready);
    bytes = m.bytes;
    console.log(`run ${i + 1}: overview interactive at ${Math.round(m.ready)} ms after navigation start (pnl/overview ${m.api} ms), total ${m.total}; marks ${m.marks}`);
  }
  times.sort((a, b) => a - b);
  console.log(`overview over ${ORDERS} fills: best ${Math.round(times[0])} ms, median ${Math.round(times[Math.floor(times.length / 2)])} ms; reload transferred ${bytes} bytes (with the API answers; cached files revalidate with 304)`);
} finally {
  await browser.close();
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
