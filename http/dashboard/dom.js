// DOM helpers. Server data only ever reaches the page as text nodes or
// attribute values: nothing here (or anywhere in the dashboard) parses
// markup from strings (a Go test checks the scripts for such sinks).

const props = new Set(['value', 'checked', 'disabled', 'selected', 'readOnly', 'hidden', 'open']);

// h(tag, attrs, ...children) builds an element. attrs: on* = listener,
// class, dataset (object), value/checked/disabled/… as properties, the
// rest as attributes (null/false leaves one out). Children: nodes, strings
// (as text), arrays, null/false (skipped).
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (props.has(k)) el[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c == null || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

// replace empties el and appends children.
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

const numberFormats = new Map();

// num formats a number with at most `digits` decimals (grouped).
export function num(n, digits = 2) {
  if (n == null || Number.isNaN(Number(n))) return '–';
  let f = numberFormats.get(digits);
  if (!f) {
    f = new Intl.NumberFormat('en-US', { maximumFractionDigits: digits, minimumFractionDigits: Math.min(digits, 2) });
    numberFormats.set(digits, f);
  }
  return f.format(Number(n));
}

// signed is num with an explicit + for gains.
export function signed(n, digits = 2) {
  const s = num(n, digits);
  return Number(n) > 0 ? '+' + s : s;
}

// tone is the CSS class of a figure's sign.
export function tone(n) {
  n = Number(n);
  return n > 0 ? 'pos' : n < 0 ? 'neg' : 'zero';
}

// dateTime formats ms since the epoch in zone tz.
export function dateTime(ms, tz) {
  if (!ms) return '–';
  return new Intl.DateTimeFormat('en-CA', {
    timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit',
    hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false,
  }).format(new Date(ms)).replace(',', '');
}

// table builds a table: columns [{key, label, num?, render?(row)}], rows.
export function table(columns, rows, attrs = {}) {
  return h('div', { class: 'table-wrap' },
    h('table', attrs,
      h('thead', null, h('tr', null, columns.map(c => h('th', { scope: 'col', class: c.num ? 'num' : null }, c.label)))),
      h('tbody', null, rows.map(r => h('tr', null, columns.map(c => {
        const v = c.render ? c.render(r) : r[c.key];
        return h('td', { class: [c.num ? 'num' : '', c.tone ? tone(r[c.key]) : ''].join(' ').trim() || null, 'data-col': c.key }, v);
      }))))));
}

// pairKey splits "<exchange>/<pair>".
export function splitKey(key) {
  const i = key.indexOf('/');
  return { exchange: key.slice(0, i), pair: key.slice(i + 1) };
}
