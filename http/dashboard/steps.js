// Next steps: what an empty page says to do, with the button to do it.
// A data dir with no pair needs one added (Settings); a stopped system
// collects no market data and trades nothing until it is started.

import { h } from './dom.js';
import { get, post } from './api.js';

// setupState reads what a new user may still have to do: pairs (enabled
// ones, by key) and whether the system runs (null when unknown).
export async function setupState() {
  const [{ config }, status] = await Promise.all([get('/config/full'), get('/system/status').catch(() => null)]);
  const pairs = [];
  for (const [ex, list] of Object.entries(config.pairs || {})) {
    for (const [p, v] of Object.entries(list || {})) if (v?.enabled !== false) pairs.push(`${ex}/${p}`);
  }
  return { pairs: pairs.sort(), running: status ? status.running : null, config };
}

// nextSteps returns a block for an empty state: message (what is empty),
// then what to do about it given state (setupState): add a pair, start the
// system, each with its button; onStarted runs after a successful start.
export function nextSteps(message, state, { onStarted } = {}) {
  const error = h('p', { class: 'error', role: 'alert' });
  const items = [];
  if (state.pairs.length === 0) {
    items.push(h('li', null, 'Add a pair to trade (an exchange and a QUOTE-BASE pair such as USDT-BTC). ',
      h('a', { class: 'button primary', href: '#/settings/add-pair', id: 'next-add-pair' }, 'Add a pair')));
  }
  if (state.running === false) {
    const start = h('button', {
      type: 'button', class: 'primary', id: 'next-start',
      onclick: async () => {
        start.disabled = true;
        error.textContent = '';
        try {
          await post('/system/start');
          state.running = true;
          start.replaceWith(h('span', { class: 'ok', id: 'next-started' }, 'Started.'));
          await onStarted?.();
        } catch (err) {
          start.disabled = false;
          error.textContent = err.message;
        }
      },
    }, 'Start the system');
    items.push(h('li', null, 'Start the system: it then collects market data for the enabled pairs and trades. ', start));
  }
  return h('div', { class: 'empty panel', id: 'next-steps' },
    h('p', null, message),
    items.length ? h('ul', { class: 'steps' }, items) : null,
    error);
}
