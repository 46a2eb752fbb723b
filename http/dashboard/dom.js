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
    else if (k === 'dataset') { for (const [dk, dv] of Object.entries(v)) if (dv != null) el.dataset[dk] = dv; }
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

// pairKey splits "<exchange>/<pair>".
export function splitKey(key) {
  const i = key.indexOf('/');
  return { exchange: key.slice(0, i), pair: key.slice(i + 1) };
}
