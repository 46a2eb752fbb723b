// Audit: the event log, opening at its newest events (newest first),
// paged and filtered by stream and type, with secrets
// redacted as the API does (audit/events); a verify button showing the
// result and the heads digest, with a copy button; the last signed
// checkpoint of the log's Merkle tree with its verifier key, and a box that
// checks a saved checkpoint against it in the browser (tlog.js), its
// witnesses' cosignatures included; the witnesses the checkpoints are sent
// to, the size each last cosigned and when; a live tail of new events from
// the shared event stream.

import { h, replace } from './dom.js';
import { dateTime } from './fmt.js';
import { get } from './api.js';
import { openCheckpoint, checkTree, cosignatures } from './tlog.js';

// checkpointStatus reads audit/checkpoint as JSON (the readiness of the
// tree, the verifier key, the last checkpoint or null).
async function checkpointStatus() {
  const r = await fetch('/api/v1/audit/checkpoint', { headers: { Accept: 'application/json' }, credentials: 'same-origin', cache: 'no-store' });
  const data = await r.json();
  if (!r.ok) throw new Error(data.message || `${r.status} ${r.statusText}`);
  return data;
}

// copyButton copies what value() returns, saying so in a status next to it.
function copyButton(id, label, value) {
  const said = h('span', { role: 'status', class: 'muted small', id: id + '-status' });
  const b = h('button', {
    type: 'button', id,
    onclick: async () => {
      try { await navigator.clipboard.writeText(value()); said.textContent = 'Copied.'; } catch (e) { said.textContent = `Copy failed: ${e.message}`; }
    },
  }, label);
  return [b, said];
}

// checkpointSection shows the last signed checkpoint and checks a saved
// one against it: its signature under the verifier key (the one shown, or
// one the auditor kept), then the consistency proof from its size to the
// last checkpoint's, both in this browser.
function checkpointSection(tz) {
  const box = h('div', { id: 'checkpoint', 'aria-live': 'polite' }, h('p', { class: 'muted' }, 'Loading the last checkpoint…'));
  const saved = h('textarea', { id: 'saved-checkpoint', rows: 6, class: 'mono', spellcheck: 'false', placeholder: 'tradeledger/log/…\n12345\nbase64 root hash\n\n— tradeledger/log/… signature' });
  const keptKey = h('input', { id: 'kept-key', type: 'text', class: 'mono', autocomplete: 'off', placeholder: 'the verifier key you kept (empty: the one above)' });
  const result = h('div', { id: 'check-result', 'aria-live': 'polite' });
  const witnessKeys = h('textarea', { id: 'witness-keys', rows: 2, class: 'mono', spellcheck: 'false', placeholder: 'witness verifier keys you trust, one per line (empty: the witnesses listed above)' });
  const quorum = h('input', { id: 'witness-quorum', type: 'number', min: '1', step: '1', placeholder: 'all' });
  const witnessResult = h('div', { id: 'witness-result', 'aria-live': 'polite' });
  let status = null;
  let listed = []; // the witnesses' keys audit/witnesses gives

  async function load() {
    try {
      status = await checkpointStatus();
    } catch (err) {
      replace(box, h('p', { class: 'error', role: 'alert' }, err.message));
      return;
    }
    const c = status.checkpoint;
    const [copyKey, keySaid] = copyButton('copy-key', 'Copy verifier key', () => status.key);
    replace(box,
      c ? h('dl', { class: 'facts', id: 'checkpoint-facts' },
        h('dt', null, 'Records'), h('dd', { id: 'cp-size', class: 'num' }, String(c.size)),
        h('dt', null, 'Root hash'), h('dd', { id: 'cp-root', class: 'mono digest' }, c.root),
        h('dt', null, 'Signed'), h('dd', { id: 'cp-time' }, dateTime(c.time, tz)),
        h('dt', null, 'Log'), h('dd', { id: 'cp-origin', class: 'mono' }, c.origin))
        : h('p', { class: 'muted', id: 'cp-none' }, status.ready ? 'No checkpoint signed yet: the service signs one once the log grows.' : `Not ready: ${status.message}.`),
      h('div', { class: 'row' },
        h('div', { class: 'grow' }, h('label', { for: 'cp-key' }, 'Verifier key (keep it with your checkpoints: it checks their signatures)'),
          h('output', { id: 'cp-key', class: 'mono digest' }, status.key)),
        copyKey, keySaid),
      c ? h('div', { class: 'row' }, ...copyButton('copy-checkpoint', 'Copy checkpoint', () => c.note),
        h('a', { href: '/api/v1/audit/checkpoint', download: `checkpoint-${c.size}.txt`, id: 'download-checkpoint' }, 'Download checkpoint')) : null,
      h('p', { class: 'muted small' }, 'Keep checkpoints where the operator cannot change them (another party, a webhook): a checkpoint only its signer kept proves nothing against that signer.'));
    box.dataset.done = c ? 'checkpoint' : 'none';
  }

  // checkWitnesses checks the saved checkpoint's cosignatures by the
  // witness keys given (or listed) against the quorum.
  async function checkWitnesses() {
    delete witnessResult.dataset.done;
    const keys = witnessKeys.value.split('\n').map(k => k.trim()).filter(Boolean);
    const use = keys.length ? keys : listed;
    if (!use.length) { replace(witnessResult); return; }
    const want = quorum.value ? Number(quorum.value) : use.length;
    try {
      if (!Number.isInteger(want) || want < 1 || want > use.length) throw new Error(`the quorum must be from 1 to the ${use.length} witness keys`);
      const got = await cosignatures(saved.value, use);
      const ok = got.filter(c => c.ok);
      const forged = got.filter(c => !c.ok && c.problem !== 'no cosignature');
      const pass = ok.length >= want && !forged.length;
      replace(witnessResult,
        h('p', { id: 'witness-verdict', class: pass ? 'ok' : 'error' }, (pass ? '✔ ' : '✘ ') +
          `Cosigned by ${ok.length} of the ${use.length} witnesses (quorum ${want})` + (forged.length ? `; ${forged.length} cosignature${forged.length > 1 ? 's' : ''} forged` : '') + '.'),
        h('ul', { id: 'witness-checks' }, got.map(c => h('li', { dataset: { witness: c.name, ok: String(c.ok) } },
          h('span', { class: 'mono' }, c.name), ': ', c.ok ? `cosigned at ${dateTime(c.time, tz)}` : c.problem))));
      witnessResult.dataset.done = pass ? 'ok' : 'fail';
    } catch (err) {
      replace(witnessResult, h('p', { id: 'witness-verdict', class: 'error' }, '✘ ' + err.message));
      witnessResult.dataset.done = 'fail';
    }
  }

  async function check() {
    checkButton.disabled = true;
    delete result.dataset.done;
    replace(witnessResult);
    replace(result, h('p', { class: 'muted' }, 'Checking…'));
    const say = (ok, text) => {
      replace(result, h('p', { id: 'check-verdict', class: ok ? 'ok' : 'error' }, (ok ? '✔ ' : '✘ ') + text));
      result.dataset.done = ok ? 'ok' : 'fail';
    };
    try {
      await load();
      const c = status?.checkpoint;
      if (!c) throw new Error('the service has no checkpoint to compare with yet');
      const key = keptKey.value.trim() || status.key;
      const old = await openCheckpoint(saved.value, key);
      const now = await openCheckpoint(c.note, key);
      if (old.size > now.size) {
        say(false, `The saved checkpoint covers ${old.size} records, the log's last only ${now.size}: the log was cut, or the checkpoint is another log's.`);
      } else if (old.size === now.size) {
        if (old.rootB64 === now.rootB64) say(true, `The log is the saved checkpoint's: the same ${now.size} records, the same root.`);
        else say(false, `The saved checkpoint and the log's last both cover ${now.size} records but have different roots: the log was rewritten (a fork signed with the same key).`);
      } else if (old.size === 0) {
        say(true, `Every log extends an empty one: the log now holds ${now.size} records.`);
      } else {
        const p = await get('/audit/proof/consistency', { from: old.size, to: now.size });
        if (await checkTree(p.proof, now.size, now.root, old.size, old.root)) {
          say(true, `The log extends the saved checkpoint: its ${old.size} records are the first of the ${now.size} in the last checkpoint (consistency proof checked in this browser).`);
        } else {
          say(false, `No consistency proof links the saved checkpoint (${old.size} records) to the log's last (${now.size}): the records it covers were changed since.`);
        }
      }
    } catch (err) {
      say(false, err.message);
    }
    await checkWitnesses();
    checkButton.disabled = false;
  }
  const checkButton = h('button', { type: 'button', id: 'check-checkpoint', onclick: check }, 'Check');

  load();
  const section = h('section', { class: 'panel', 'aria-labelledby': 'checkpoint-title' },
    h('h2', { id: 'checkpoint-title' }, 'Checkpoints'), box,
    h('h3', null, 'Check against a saved checkpoint'),
    h('div', null, h('label', { for: 'saved-checkpoint' }, 'A checkpoint you saved earlier (as signed, with its cosignatures)'), saved),
    h('div', null, h('label', { for: 'kept-key' }, 'Verifier key'), keptKey),
    h('div', null, h('label', { for: 'witness-keys' }, 'Witness keys'), witnessKeys),
    h('div', null, h('label', { for: 'witness-quorum' }, 'Quorum (how many of them must have cosigned)'), quorum),
    h('div', { class: 'row' }, checkButton), result, witnessResult);
  return { section, witnessesLoaded: (rep) => { listed = rep.witnesses.map(w => w.key); } };
}

// witnessesSection lists the witnesses each checkpoint is sent to
// (audit/witnesses): the size each last cosigned and when, whether that
// is the latest checkpoint, its last failure, a refusal that stands.
// onLoad hears the report (the checkpoint check uses its keys).
function witnessesSection(tz, onLoad) {
  const box = h('div', { id: 'witnesses', 'aria-live': 'polite' }, h('p', { class: 'muted' }, 'Loading the witnesses…'));
  (async () => {
    let rep;
    try {
      rep = await get('/audit/witnesses');
    } catch (err) {
      replace(box, h('p', { class: 'error', role: 'alert' }, err.message));
      box.dataset.done = 'error';
      return;
    }
    onLoad(rep);
    if (!rep.witnesses.length) {
      replace(box, h('p', { class: 'muted', id: 'witnesses-none' }, 'No witness is configured: checkpoints are signed by the log alone. serve --witness \'VKEY URL\' sends each to a witness (docs/auditing.md).'));
      box.dataset.done = 'none';
      return;
    }
    const state = (w) => {
      if (w.refused) return h('span', { class: 'error' }, `REFUSED the checkpoint of ${w.refused.size} records as inconsistent with the ${w.refused.witnessSize} it cosigned: ${w.refused.reason}`);
      if (w.current) return h('span', { class: 'ok' }, 'cosigned the latest checkpoint');
      if (w.error) return h('span', { class: 'error' }, `not cosigned yet: ${w.error}`);
      return h('span', { class: 'muted' }, 'not cosigned yet');
    };
    replace(box,
      h('p', { id: 'witness-quorum-status', class: rep.missing > 0 ? 'error' : 'ok' },
        rep.missing > 0 ? (rep.message || `${rep.missing} more cosignatures needed`)
          : `${rep.cosigned} of ${rep.witnesses.length} witnesses cosigned the checkpoint of ${rep.size} records (quorum ${rep.quorum}).`),
      h('div', { class: 'table-wrap' }, h('table', { id: 'witness-table' },
        h('thead', null, h('tr', null, ['Witness', 'Last cosigned (records)', 'When', 'State'].map(l => h('th', { scope: 'col' }, l)))),
        h('tbody', null, rep.witnesses.map(w => h('tr', { dataset: { witness: w.name } },
          h('td', null, h('span', { class: 'mono' }, w.name), h('br'), h('span', { class: 'muted small' }, w.url)),
          h('td', { class: 'num' }, w.size ? String(w.size) : '—'),
          h('td', null, w.time ? dateTime(w.time, tz) : '—'),
          h('td', null, state(w))))))));
    box.dataset.done = 'witnesses';
  })();
  return h('section', { class: 'panel', 'aria-labelledby': 'witnesses-title' },
    h('h2', { id: 'witnesses-title' }, 'Witnesses'), box,
    h('p', { class: 'muted small' }, 'A witness cosigns a checkpoint only with a proof that it extends every checkpoint of this log it cosigned before: a log shown to someone else rewritten cannot carry the same witnesses\' cosignatures.'));
}

const PAGE = 50;

export async function render(view, ctx) {
  const tz = ctx.tz;
  const stream = h('input', { id: 'a-stream', type: 'text', placeholder: 'e.g. order- or config', autocomplete: 'off' });
  const types = h('input', { id: 'a-type', type: 'text', placeholder: 'e.g. OrderFilled,OrderCancelled', autocomplete: 'off' });
  const status = h('p', { id: 'audit-status', role: 'status', class: 'muted' });
  const tableBox = h('div');
  const verifyBox = h('div', { id: 'verify-result', 'aria-live': 'polite' });
  const tailList = h('ol', { id: 'tail', class: 'tail mono', reversed: true });
  const tailOn = h('input', { type: 'checkbox', id: 'tail-on', onchange: () => { tailList.hidden = !tailOn.checked; } });

  let from = 0;
  let last = null;

  async function load(position) {
    const q = { from: position, limit: PAGE, stream: stream.value.trim(), type: types.value.trim() };
    const r = await get('/audit/events', q);
    from = position;
    last = r;
    status.textContent = r.events.length
      ? `Positions ${r.events[0].position}–${r.events[r.events.length - 1].position} of ${r.head}`
      : `No events from position ${position} (log head ${r.head}).`;
    older.disabled = position <= 1;
    newer.disabled = !r.more;
    replace(tableBox, h('div', { class: 'table-wrap' }, h('table', { id: 'events' },
      h('thead', null, h('tr', null, ['Pos', 'Time', 'Stream', 'Type', 'Actor', 'Data'].map(l => h('th', { scope: 'col' }, l)))),
      h('tbody', null, [...r.events].reverse().map(e => h('tr', { dataset: { position: String(e.position), type: e.type } },
        h('td', { class: 'num' }, String(e.position)), h('td', null, dateTime(e.time, tz)),
        h('td', { class: 'mono' }, e.stream), h('td', null, e.type, e.redacted ? h('span', { class: 'muted small' }, ' (redacted)') : null),
        h('td', null, e.actor || h('span', { class: 'muted' }, '(none recorded)')),
        h('td', { class: 'data' }, h('details', null, h('summary', null, 'show'),
          h('pre', { class: 'mono' }, JSON.stringify(e.data, null, 2))))))))));
  }

  const older = h('button', { type: 'button', id: 'a-older', onclick: () => load(Math.max(0, from - PAGE)) }, '← Earlier');
  const newer = h('button', { type: 'button', id: 'a-newer', onclick: () => load(last.next) }, 'Later →');
  const loadLatest = async () => { const r = await get('/audit/events', { from: 0, limit: 1 }); await load(Math.max(0, r.head - PAGE + 1)); };
  const latest = h('button', { type: 'button', id: 'a-latest', onclick: loadLatest }, 'Latest');

  async function verify() {
    verifyButton.disabled = true;
    replace(verifyBox, h('p', { class: 'muted' }, 'Verifying every hash chain…'));
    delete verifyBox.dataset.done;
    try {
      const v = await get('/audit/verify');
      const digest = String(v.headsDigest || '');
      const copied = h('span', { role: 'status', id: 'copied', class: 'muted small' });
      replace(verifyBox,
        h('p', { id: 'verify-ok', class: v.ok ? 'ok' : 'error' },
          v.ok ? `✔ Log verified: ${v.events} events in ${v.streams} streams, up to position ${v.lastPosition}.`
            : v.faultCount > 0 ? `✘ Log does not verify: ${v.faultCount} faulty event${v.faultCount > 1 ? 's' : ''} among ${v.events} events in ${v.streams} streams.`
              : `✘ Log does not verify (${v.events} events in ${v.streams} streams).`),
        // The verdict's reason in plain words (a log cut at its end, a tree
        // that differs from the events, a checkpoint the log no longer
        // extends), and the sizes the tree and the last checkpoint cover.
        v.ok || !v.problem ? null : h('p', { id: 'verify-problem', class: 'error' }, v.problem),
        v.ok || !v.tree ? null : h('p', { id: 'verify-tree', class: 'muted small' },
          `Merkle tree: ${v.tree.records} records; last checkpoint: ${v.tree.checkpoint} events; the log: ${v.tree.logEvents} events.`),
        v.ok ? null : h('ul', { id: 'verify-faults' }, (v.faults || (v.fault ? [v.fault] : [])).map(f =>
          h('li', { class: 'mono small' }, `${f.stream} v${f.version} (position ${f.position}, ${f.type}): ${f.problem}`))),
        v.ok || !(v.faultCount > (v.faults || []).length) ? null
          : h('p', { class: 'muted small' }, `The first ${(v.faults || []).length} are listed; tradeledger verify --max-faults N lists more.`),
        h('div', { class: 'row' },
          h('div', { class: 'grow' }, h('label', { for: 'digest' }, 'Heads digest (record it to prove later that the log was not rewritten)'),
            h('output', { id: 'digest', class: 'mono digest' }, digest)),
          h('button', {
            type: 'button', id: 'copy-digest',
            onclick: async () => {
              try { await navigator.clipboard.writeText(digest); copied.textContent = 'Copied.'; } catch (e) { copied.textContent = `Copy failed: ${e.message}`; }
            },
          }, 'Copy digest'), copied));
      verifyBox.dataset.done = v.ok ? 'ok' : 'fault';
    } catch (err) {
      replace(verifyBox, h('p', { class: 'error', role: 'alert' }, err.message));
      verifyBox.dataset.done = 'error';
    } finally {
      verifyButton.disabled = false;
    }
  }
  const verifyButton = h('button', { type: 'button', class: 'primary', id: 'verify', onclick: verify }, 'Verify the log');

  const checkpoints = checkpointSection(tz);
  replace(view,
    h('h1', null, 'Audit'),
    h('section', { class: 'panel', 'aria-labelledby': 'verify-title' }, h('h2', { id: 'verify-title' }, 'Verify'), verifyButton, verifyBox),
    checkpoints.section,
    witnessesSection(tz, checkpoints.witnessesLoaded),
    h('section', { 'aria-labelledby': 'events-title' }, h('h2', { id: 'events-title' }, 'Events'),
      h('form', { class: 'row', id: 'audit-filters', onsubmit: (e) => { e.preventDefault(); load(0); } },
        h('div', null, h('label', { for: 'a-stream' }, 'Stream (prefix)'), stream),
        h('div', null, h('label', { for: 'a-type' }, 'Types (comma-separated)'), types),
        h('button', { type: 'submit', id: 'a-apply' }, 'Filter')),
      h('div', { class: 'row toolbar' }, older, newer, latest, status),
      tableBox),
    h('section', { 'aria-labelledby': 'tail-title' }, h('h2', { id: 'tail-title' }, 'Live tail'),
      h('label', { class: 'inline', for: 'tail-on' }, tailOn, ' Show new events as they are appended (same filters)'),
      tailList));
  tailList.hidden = true;

  const off = ctx.live?.on((e) => {
    if (!tailOn.checked) return;
    const s = stream.value.trim();
    const t = types.value.split(',').map(x => x.trim()).filter(Boolean);
    if (s && !e.stream.startsWith(s)) return;
    if (t.length && !t.includes(e.type)) return;
    tailList.prepend(h('li', { dataset: { position: String(e.position), type: e.type } },
      `${e.position} ${dateTime(e.time, tz)} ${e.stream} ${e.type} by ${e.actor}${e.redacted ? ' (redacted)' : ''}`));
    while (tailList.children.length > 200) tailList.lastElementChild.remove();
  });

  await loadLatest();
  return () => off?.();
}
