// Browser scenario of witnessed checkpoints (DESIGN §19): serve sends each
// checkpoint to a witness (`tradeledger witness serve`, a process of its
// own); the Audit page lists the witness with the size it last cosigned
// and when, and checks a kept checkpoint's cosignature in the browser:
// accepted with the witness's key, refused when the cosignature is edited
// or missing (quorum not met).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, launch, newPage, ready, login, screenshot, apiClient, bin } from './harness.mjs';

process.env.TRADELEDGER_CHECKPOINT_INTERVAL = '1s';

let server, browser, api, witness, witnessDir, witnessURL, witnessKey;

// startWitness runs `tradeledger witness serve` on 127.0.0.1:0 and reads
// its address and verifier key from what it prints.
async function startWitness() {
  witnessDir = mkdtempSync(join(tmpdir(), 'tl-e2e-witness-'));
  witness = spawn(bin, ['witness', 'serve', '--data', witnessDir, '--listen', '127.0.0.1:0', '--name', 'e2e.test/witness'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  await new Promise((ok, fail) => {
    witness.stdout.on('data', (c) => {
      out += c;
      const url = out.match(/serving on (http:\/\/127\.0\.0\.1:\d+)/);
      const key = out.match(/verifier key: (\S+)/);
      if (url && key) { witnessURL = url[1]; witnessKey = key[1]; ok(); }
    });
    witness.stderr.on('data', (c) => { out += c; });
    witness.on('exit', (code) => fail(new Error(`witness exited (${code}):\n${out}`)));
  });
}

before(async () => {
  await startWitness();
  server = await startServer({ fixture: 'testdata/dashboard-history', args: ['--witness', `${witnessKey} ${witnessURL}`] });
  // The auditor's witness follows this log by its verifier key.
  const logKey = server.cli('checkpoint', 'key');
  execFileSync(bin, ['witness', 'add-log', '--data', witnessDir, '--key', logKey], { encoding: 'utf8' });
  browser = await launch();
  api = await apiClient(server.url, server.wallet);
});

after(async () => {
  await browser?.close();
  await server?.stop();
  witness?.kill('SIGTERM');
  if (witnessDir) rmSync(witnessDir, { recursive: true, force: true });
});

const text = (page, sel) => page.locator(sel).innerText();

// untilCosigned polls audit/witnesses until the witness cosigned the latest
// checkpoint, and returns the report.
async function untilCosigned(timeoutMs = 30000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rep = await api('GET', '/audit/witnesses');
    if (rep.witnesses?.[0]?.current) return rep;
    if (Date.now() > deadline) throw new Error(`not cosigned after ${timeoutMs} ms: ${JSON.stringify(rep)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

test('audit: the witness and the size it cosigned; a kept checkpoint\'s cosignature checked in the browser, an edited or missing one refused', async () => {
  const rep = await untilCosigned();
  const page = await newPage(browser);
  await login(page, server.url);
  await ready(page, 'overview');
  await page.goto(server.url + '/#/audit');
  await ready(page, 'audit');
  await page.waitForSelector('#witnesses[data-done=witnesses]');
  const row = page.locator('#witness-table tr[data-witness="e2e.test/witness"]');
  assert.equal(await row.count(), 1);
  const cells = await row.locator('td').allInnerTexts();
  assert.ok(Number(cells[1]) >= rep.witnesses[0].size, `cosigned size shown ${cells[1]}`);
  assert.match(cells[2], /\d/, 'when it cosigned');
  assert.match(await text(page, '#witness-quorum-status'), /1 of 1 witnesses cosigned the checkpoint of \d+ records/);

  // Kept as served: the log's signature and the witness's cosignature.
  const kept = await page.evaluate(() => fetch('/api/v1/audit/checkpoint').then((r) => r.text()));
  assert.ok(kept.includes('\n— e2e.test/witness '), kept);
  await page.fill('#saved-checkpoint', kept);
  await page.fill('#witness-keys', witnessKey);
  await page.fill('#witness-quorum', '1');
  await page.click('#check-checkpoint');
  await page.waitForSelector('#witness-result[data-done]');
  assert.equal(await page.getAttribute('#witness-result', 'data-done'), 'ok', await text(page, '#witness-result'));
  assert.match(await text(page, '#witness-verdict'), /^✔ Cosigned by 1 of the 1 witnesses \(quorum 1\)/);
  await screenshot(page, 'audit-witnesses');

  // The cosignature edited (a byte of its signature): refused as forged.
  const lines = kept.split('\n');
  const i = lines.findIndex((l) => l.startsWith('— e2e.test/witness '));
  const sig = lines[i].slice(lines[i].lastIndexOf(' ') + 1);
  const flipped = sig.slice(0, 30) + (sig[30] === 'A' ? 'B' : 'A') + sig.slice(31);
  const forged = [...lines.slice(0, i), lines[i].replace(sig, flipped), ...lines.slice(i + 1)].join('\n');
  await page.fill('#saved-checkpoint', forged);
  await page.click('#check-checkpoint');
  await page.waitForSelector('#witness-result[data-done]');
  assert.equal(await page.getAttribute('#witness-result', 'data-done'), 'fail');
  assert.match(await text(page, '#witness-checks'), /does not verify/);

  // Without the cosignature (the log's signature alone): the quorum is not met.
  const bare = [...lines.slice(0, i), ...lines.slice(i + 1)].join('\n');
  await page.fill('#saved-checkpoint', bare);
  await page.fill('#witness-keys', ''); // the listed witnesses' keys
  await page.click('#check-checkpoint');
  await page.waitForSelector('#witness-result[data-done]');
  assert.equal(await page.getAttribute('#witness-result', 'data-done'), 'fail');
  assert.match(await text(page, '#witness-verdict'), /^✘ Cosigned by 0 of the 1 witnesses \(quorum 1\)/);
  // The log's own signature still checks.
  assert.notEqual(await page.getAttribute('#check-result', 'data-done'), 'fail', await text(page, '#check-result'));
  assert.deepEqual(page.problems, []);
  await page.context().close();
});
