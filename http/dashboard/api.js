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
