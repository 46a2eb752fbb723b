// Browser scenario of the log's proofs (DESIGN §13): the Audit page shows
// the last signed checkpoint and its verifier key, checks a checkpoint kept
// earlier against the log in the browser (signature and consistency
// proof), and refuses an edited one and another log's; every order offers
// its proof bundle, which `tradeledger verify-proof` checks with the key
// alone.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, launch, newPage, ready, login, screenshot, apiClient, bin } from './harness.mjs';

let server, browser, api;

// Checkpoints every second while the log grows, instead of every minute.
process.env.TRADELEDGER_CHECKPOINT_INTERVAL = '1s';

let token;

before(async () => {
  server = await startServer({ fixture: 'testdata/dashboard-history' });
  browser = await launch();
  api = await apiClient(server.url, server.wallet);
  token = execFileSync(bin, ['token', 'create', '--scope', 'read', '--name', 'tlog-e2e', '--data', server.data], { encoding: 'utf8' }).trim().split(/\s+/).pop();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

const text = (page, sel) => page.locator(sel).innerText();

// checkpointStatus reads audit/checkpoint as JSON (the Accept header asks
// for it) with the API client's login.
async function checkpointStatus() {
  const r = await fetch(server.url + '/api/v1/audit/checkpoint', { headers: { Accept: 'application/json', Authorization: 'Bearer ' + token } });
  if (!r.ok) throw new Error(`audit/checkpoint: ${r.status}`);
  return r.json();
}

// untilCheckpoint polls the API until the last checkpoint covers more than
// `over` records, and returns it.
async function untilCheckpoint(over, timeoutMs = 20000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const st = await checkpointStatus();
    if (st.checkpoint && st.checkpoint.size > over) return st;
    if (Date.now() > deadline) throw new Error(`no checkpoint over ${over} records after ${timeoutMs} ms: ${JSON.stringify(st)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test('audit: the last checkpoint, a kept one checked in the browser, an edited or foreign one refused; orders offer their proof', async () => {
  const first = await untilCheckpoint(0);
  const page = await newPage(browser);
  await login(page, server.url);
  await ready(page, 'overview');
  await page.goto(server.url + '/#/audit');
  await ready(page, 'audit');
  await page.waitForSelector('#checkpoint[data-done=checkpoint]');
  const key = (await page.evaluate(() => fetch('/api/v1/audit/checkpoint/key').then((r) => r.text()))).trim();
  assert.equal(await text(page, '#cp-key'), key);
  assert.ok(!key.includes('PRIVATE'));
  // Keep the checkpoint shown now, as an auditor would. The login grew
  // the log, so the service may sign a newer one between the page's read
  // and this one: then the page is looked at again.
  let kept, keptSize;
  for (let look = 1; ; look++) {
    kept = await page.evaluate(() => fetch('/api/v1/audit/checkpoint').then((r) => r.text()));
    keptSize = Number(kept.split('\n')[1]);
    if (await text(page, '#cp-size') === String(keptSize) || look === 20) break;
    await page.reload();
    await ready(page, 'audit');
    await page.waitForSelector('#checkpoint[data-done=checkpoint]');
  }
  assert.ok(keptSize >= first.checkpoint.size);
  assert.equal(await text(page, '#cp-size'), String(keptSize));
  assert.equal(await text(page, '#cp-root'), kept.split('\n')[2]);

  // The log grows; the service signs a later checkpoint.
  await api('POST', '/config/strategy/add', { name: 'tlog-e2e', settings: {} });
  await untilCheckpoint(keptSize);
  await page.fill('#saved-checkpoint', kept);
  await page.click('#check-checkpoint');
  await page.waitForSelector('#check-result[data-done]');
  assert.equal(await page.getAttribute('#check-result', 'data-done'), 'ok', await text(page, '#check-result'));
  assert.match(await text(page, '#check-verdict'), new RegExp(`^✔ The log extends the saved checkpoint: its ${keptSize} records are the first of the \\d+ in the last checkpoint`));
  assert.notEqual(await text(page, '#cp-size'), String(keptSize), 'the check showed the later checkpoint');
  await screenshot(page, 'audit-checkpoint');

  // Edited (its size), it no longer carries the signature.
  const edited = kept.replace(`\n${keptSize}\n`, `\n${keptSize - 1}\n`);
  await page.fill('#saved-checkpoint', edited);
  await page.click('#check-checkpoint');
  await page.waitForSelector('#check-result[data-done]');
  assert.equal(await page.getAttribute('#check-result', 'data-done'), 'fail');
  assert.match(await text(page, '#check-verdict'), /signature .* does not check/);

  // Another log's checkpoint (another data dir, another key).
  const other = mkdtempSync(join(tmpdir(), 'tl-e2e-other-'));
  try {
    const env = { ...process.env, TRADELEDGER_PASSWORD: 'other log' };
    const foreign = execFileSync(bin, ['checkpoint', '--data', other], { env, encoding: 'utf8' });
    await page.fill('#saved-checkpoint', foreign);
    await page.click('#check-checkpoint');
    await page.waitForSelector('#check-result[data-done]');
    assert.equal(await page.getAttribute('#check-result', 'data-done'), 'fail');
    assert.match(await text(page, '#check-verdict'), /not signed by .*'s key/);
  } finally {
    rmSync(other, { recursive: true, force: true });
  }

  // Every order offers its proof bundle; verify-proof checks it with the
  // verifier key alone.
  await page.goto(server.url + '/#/orders');
  await ready(page, 'orders');
  const link = page.locator('#orders-table a[data-proof]').first();
  const id = await link.getAttribute('data-proof');
  assert.equal(await page.locator('#orders-table tr.order').count(), await page.locator('#orders-table a[data-proof]').count(), 'a proof link on every order');
  const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
  assert.equal(download.suggestedFilename(), `order-${id}.proof.json`);
  const file = await download.path();
  const out = execFileSync(bin, ['verify-proof', file, '--key', key], { encoding: 'utf8' });
  assert.match(out, new RegExp(`^OK: The \\d+ events of order ${id} \\(`));
  assert.deepEqual(page.problems, []);
  await page.context().close();
});
