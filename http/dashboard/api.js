// The API client: same origin, the session cookie goes along by itself;
// writes carry the CSRF token, read from its (non-HttpOnly) cookie.

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

let unauthorized = () => {};

// onUnauthorized sets what happens when the session is gone (a 401).
export function onUnauthorized(fn) { unauthorized = fn; }

function csrfToken() {
  const m = document.cookie.match(/(?:^|;\s*)tl_csrf=([^;]*)/);
  return m ? decodeURIComponent(m[1]) : '';
}

// query builds a query string; arrays repeat their name.
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v == null || v === '') continue;
    if (Array.isArray(v)) v.forEach(x => q.append(k, x));
    else q.append(k, v);
  }
  return q.toString();
}

// call sends a request to /api/v1<path> and returns the JSON answer (the
// text as is with asText), or throws ApiError with the server's message.
export async function call(method, path, body, asText = false) {
  const init = { method, headers: {}, credentials: 'same-origin', cache: 'no-store' };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  if (method !== 'GET') init.headers['X-CSRF-Token'] = csrfToken();
  let resp;
  try {
    resp = await fetch('/api/v1' + path, init);
  } catch (e) {
    throw new ApiError(0, 'the server cannot be reached');
  }
  let data = null;
  const text = await resp.text();
  if (text && !(asText && resp.ok)) {
    try { data = JSON.parse(text); } catch { data = text; }
  } else if (asText) {
    data = text;
  }
  if (!resp.ok) {
    const msg = data && typeof data === 'object' && data.message ? data.message : `${resp.status} ${resp.statusText}`;
    if (resp.status === 401 && !path.startsWith('/dashboard/login')) unauthorized();
    throw new ApiError(resp.status, msg);
  }
  return data;
}

export const get = (path, params) => call('GET', path + (params ? '?' + query(params) : ''));
export const post = (path, body) => call('POST', path, body);
export const postText = (path, body) => call('POST', path, body, true);

// As-of reads: the API answers a read as of a past time with asOf=<ms>
// (the read models rebuilt from the log up to then). asOfRoutes names the
// routes that take it; pages pass ctx.asOf through withAsOf (GET
// parameters) or atAsOf (the path of a POST), which add it for those
// routes only. Orders (to, and each order's own times) answers for a past
// time with the parameters it has.
export const asOfRoutes = new Set(['/pnl/overview', '/pnl/sum', '/balances', '/reports/realized', '/reports/statement',
  '/export/fills.csv', '/export/koinly.csv', '/export/cointracking.csv', '/export/cointracker.csv', '/export/realized.csv']);

// withAsOf returns params with asOf added when path takes it.
export function withAsOf(path, params, asOf) {
  return asOf && asOfRoutes.has(path) ? { ...params, asOf } : params;
}

// atAsOf returns path with ?asOf= when path takes it (a POST route's
// query: its body is the route's own).
export function atAsOf(path, asOf) {
  return asOf && asOfRoutes.has(path) ? `${path}?asOf=${encodeURIComponent(asOf)}` : path;
}

// remote calls another Tradeledger instance's API (base: its origin) with
// a bearer token, no cookies: the multi-bot page. That instance must allow
// this page's origin (--cors-origins), and this server must list that
// instance in its own --cors-origins for the page's policy to connect.
export async function remote(base, token, method, path, body) {
  const init = { method, headers: { Authorization: 'Bearer ' + token }, credentials: 'omit', cache: 'no-store', mode: 'cors' };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let resp;
  try {
    resp = await fetch(base.replace(/\/+$/, '') + '/api/v1' + path, init);
  } catch {
    throw new ApiError(0, `${base} cannot be reached (is it running, does its --cors-origins list this dashboard's origin, and this server's --cors-origins list it?)`);
  }
  const text = await resp.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = text; }
  if (!resp.ok) throw new ApiError(resp.status, data && data.message ? data.message : `${resp.status} ${resp.statusText}`);
  return data;
}
