// Audit: the event log, opening at its newest events (newest first),
// paged and filtered by stream and type, with secrets
// redacted as the API does (audit/events); a verify button showing the
// result and the heads digest, with a copy button; a live tail of new
// events from the shared event stream.

import { h, replace } from './dom.js';
import { dateTime } from './fmt.js';
import { get } from './api.js';

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
            : `✘ Log does not verify: ${v.faultCount || 1} faulty event${v.faultCount > 1 ? 's' : ''} among ${v.events} events in ${v.streams} streams.`),
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

  replace(view,
    h('h1', null, 'Audit'),
    h('section', { class: 'panel', 'aria-labelledby': 'verify-title' }, h('h2', { id: 'verify-title' }, 'Verify'), verifyButton, verifyBox),
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
