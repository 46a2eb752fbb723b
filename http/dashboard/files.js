// Files: custom strategies (list, view, edit, delete, new) and
// autoconfig.json with its backups. The API has no read of the current
// autoconfig.json: its editor starts from a chosen backup (or empty), and a
// write keeps the previous content as a new backup.

import { h, replace } from './dom.js';
import { get, post, postText } from './api.js';
import { dateTime } from './fmt.js';

export async function render(view, ctx) {
  const status = h('p', { id: 'files-status', role: 'status' });
  const say = (msg, ok = true) => { status.textContent = msg; status.className = ok ? 'ok' : 'error'; };
  const list = h('ul', { id: 'strategy-files', class: 'files' });
  const name = h('input', { id: 'file-name', autocomplete: 'off', spellcheck: 'false', placeholder: 'my-strategy.js' });
  const editor = h('textarea', { id: 'file-editor', spellcheck: 'false', 'aria-label': 'Strategy file content' });
  const err = h('p', { class: 'field-error', id: 'file-error', role: 'alert' });
  const del = h('button', { type: 'button', id: 'file-delete', class: 'danger', disabled: true, onclick: () => remove() }, 'Delete');
  let current = '';

  async function loadList() {
    const { result } = await get('/files/strategy');
    replace(list, (result || []).length === 0 ? h('li', { class: 'muted' }, 'No custom strategies yet.') :
      result.map(f => h('li', { dataset: { file: f } }, h('button', {
        type: 'button', class: 'link', 'aria-current': f === current ? 'true' : null, onclick: () => open(f),
      }, f))));
  }

  async function open(f) {
    err.textContent = '';
    try {
      editor.value = await postText('/files/strategy/get', { filename: f });
      name.value = f;
      current = f;
      del.disabled = false;
      editor.dataset.loaded = f;
      await loadList();
    } catch (e) { err.textContent = e.message; }
  }

  async function save(e) {
    e.preventDefault();
    err.textContent = '';
    const f = name.value.trim();
    try {
      await post('/files/strategy/write', { filename: f, document: editor.value });
      current = f;
      del.disabled = false;
      await loadList();
      say(`${f} saved.`);
    } catch (x) { err.textContent = x.message; say(`Saving ${f} failed.`, false); }
  }

  async function remove() {
    if (!current) return;
    if (!confirmDelete.checked) { err.textContent = 'Tick "really delete" first.'; return; }
    try {
      await post('/files/strategy/delete', { filename: current });
      const gone = current;
      current = ''; name.value = ''; editor.value = ''; del.disabled = true; confirmDelete.checked = false;
      await loadList();
      say(`${gone} deleted.`);
    } catch (x) { err.textContent = x.message; }
  }
  const confirmDelete = h('input', { type: 'checkbox', id: 'confirm-delete' });

  // autoconfig.json and backups
  const backups = h('select', { id: 'backups', 'aria-label': 'Backups of autoconfig.json' });
  const acEditor = h('textarea', { id: 'autoconfig-editor', spellcheck: 'false', 'aria-label': 'autoconfig.json content' });
  const acErr = h('p', { class: 'field-error', id: 'autoconfig-error', role: 'alert' });
  async function loadBackups() {
    const { result } = await post('/files/backup');
    const names = (result || []).slice().sort().reverse();
    replace(backups, names.length ? names.map(n => {
      const ms = Number(n.split('.').pop());
      // The backup's time, in the chosen zone as every time here.
      return h('option', { value: n }, Number.isFinite(ms) && ms > 0 ? `${dateTime(ms, ctx.tz)} (${ctx.tz}) · ${n}` : n);
    }) : h('option', { value: '' }, 'no backups'));
    backups.dataset.count = String(names.length);
  }
  async function showBackup() {
    acErr.textContent = '';
    if (!backups.value) return;
    try {
      const doc = await post('/files/backup/get', { filename: backups.value });
      acEditor.value = JSON.stringify(doc, null, 2);
    } catch (x) { acErr.textContent = x.message; }
  }
  async function writeAutoconfig(e) {
    e.preventDefault();
    acErr.textContent = '';
    let doc;
    try { doc = JSON.parse(acEditor.value); } catch (x) { acErr.textContent = `Not JSON: ${x.message}`; return; }
    try {
      await post('/files/autoconfig/write', { document: doc });
      await loadBackups();
      say('autoconfig.json written (the previous content is kept as a backup).');
    } catch (x) { acErr.textContent = x.message; }
  }

  replace(view, h('h1', null, 'Files'), status,
    h('section', { class: 'panel', 'aria-labelledby': 'f-strategies' }, h('h2', { id: 'f-strategies' }, 'Custom strategies'),
      h('div', { class: 'files-grid' },
        h('nav', { 'aria-label': 'Strategy files' }, list,
          h('button', { type: 'button', id: 'file-new', onclick: () => { current = ''; name.value = ''; editor.value = ''; del.disabled = true; name.focus(); } }, 'New file')),
        h('form', { id: 'file-form', onsubmit: save },
          h('label', { for: 'file-name' }, 'File name (.js)'), name,
          h('label', { for: 'file-editor' }, 'Content'), editor, err,
          h('div', { class: 'row' }, h('button', { type: 'submit', class: 'primary', id: 'file-save' }, 'Save'),
            h('label', { class: 'inline', for: 'confirm-delete' }, confirmDelete, ' really delete'), del)))),
    h('section', { class: 'panel', 'aria-labelledby': 'f-autoconfig' }, h('h2', { id: 'f-autoconfig' }, 'autoconfig.json'),
      h('form', { id: 'autoconfig-form', onsubmit: writeAutoconfig },
        h('div', { class: 'row' }, h('div', { class: 'grow' }, h('label', { for: 'backups' }, 'Backups'), backups),
          h('button', { type: 'button', id: 'backup-show', onclick: showBackup }, 'Load into the editor')),
        h('label', { for: 'autoconfig-editor' }, 'New autoconfig.json (JSON)'), acEditor, acErr,
        h('button', { type: 'submit', id: 'autoconfig-write' }, 'Write autoconfig.json'))));

  await Promise.all([loadList(), loadBackups()]);
}
