// Formatting: the one place numbers, money and times become text.
//
// Prices and amounts follow their market's precision: the price tick and
// the lot step of pairs/detailed when the exchange has them; otherwise
// (the paper exchange) a precision from the pair's price: prices with
// about five significant digits, amounts so that the last digit is worth
// about a hundredth of a quote unit or less. An amount never loses a digit
// it has (a quantity is exact: a fill of 0.00421 BTC shows so even where
// the step would show three decimals). Money goes by its currency: fiat
// and stablecoins with 2 decimals, BTC with 8, ETH with 6, others with up
// to 8 (trailing zeros dropped, at least 2). Every figure is grouped
// (1,234.50) and signs use a true minus.

import { get } from './api.js';

const MINUS = '\u2212';
const fiat2 = new Set(['USD', 'USDT', 'USDC', 'BUSD', 'FDUSD', 'TUSD', 'DAI', 'USDP', 'EUR', 'EURI', 'GBP', 'CHF', 'AUD', 'CAD',
  'TRY', 'BRL', 'ZAR', 'PLN', 'RUB', 'UAH', 'NGN', 'ARS', 'MXN', 'IDR', 'INR', 'KRW', 'JPY']);
const fixed = { BTC: 8, ETH: 6, BNB: 6, XBT: 8 };

const formats = new Map();
function format(min, max) {
  const k = min * 100 + max;
  let f = formats.get(k);
  if (!f) {
    f = new Intl.NumberFormat('en-US', { minimumFractionDigits: min, maximumFractionDigits: max });
    formats.set(k, f);
  }
  return f;
}

// decimalsOf returns how many decimals a number written in JS has
// (1e-7 → 7), at most 12.
export function decimalsOf(n) {
  if (n == null || !Number.isFinite(Number(n))) return 0;
  const s = Math.abs(Number(n)).toFixed(12).replace(/0+$/, '');
  const i = s.indexOf('.');
  return i < 0 ? 0 : s.length - i - 1;
}

// fixedText is n with exactly d decimals, grouped, with a true minus.
function fixedText(n, d, { sign = false, trim = false } = {}) {
  n = Number(n);
  let s = format(trim ? Math.min(2, d) : d, d).format(Math.abs(n));
  if (/^[0.,]+$/.test(s) && n !== 0 && !trim) {
    // Never round a non-zero figure to 0.00: show its own digits.
    s = format(d, Math.min(12, Math.max(d, decimalsOf(n)))).format(Math.abs(n));
  }
  const zero = /^[0.,]+$/.test(s);
  if (n < 0 && !zero) return MINUS + s;
  if (sign && n > 0 && !zero) return '+' + s;
  return s;
}

// moneyDecimals is how many decimals currency cur shows.
export function moneyDecimals(cur) {
  cur = String(cur || '').toUpperCase();
  if (fiat2.has(cur)) return 2;
  return fixed[cur] ?? 8;
}

// money formats an amount of currency cur (no unit; see withUnit). Options:
// sign (an explicit + for gains).
export function money(n, cur, { sign = false } = {}) {
  if (n == null || n === '' || !Number.isFinite(Number(n))) return '–';
  const d = moneyDecimals(cur);
  return fixedText(n, d, { sign, trim: !fiat2.has(String(cur).toUpperCase()) && !(String(cur).toUpperCase() in fixed) });
}

// withUnit is money(n, cur) followed by the currency.
export function withUnit(n, cur, opts) {
  const s = money(n, cur, opts);
  return s === '–' || !cur ? s : `${s} ${cur}`;
}

// count formats a whole number (trades, orders).
export function count(n) {
  return n == null ? '–' : format(0, 0).format(Number(n));
}

// percent formats n (already in percent) with 2 decimals.
export function percent(n) {
  return n == null ? '–' : `${fixedText(n, 2)} %`;
}

// tone is the CSS class of a figure's sign.
export function tone(n) {
  n = Number(n);
  return n > 0 ? 'pos' : n < 0 ? 'neg' : 'zero';
}

// Market precision. A Market knows a pair's price and amount decimals.
export class Market {
  constructor(key, { tickSize, stepSize, last } = {}) {
    this.key = key;
    const i = key.indexOf('/');
    const pair = key.slice(i + 1);
    [this.quote, this.base] = pair.split('-');
    this.tick = tickSize || 0;
    this.step = stepSize || 0;
    this.last = last || 0;
    this.fromRules = !!(tickSize || stepSize);
    this.setReference(last);
  }

  // setReference derives the precision of a pair without rules from a
  // price of it (the last, or a fill's).
  setReference(price) {
    price = Math.abs(Number(price)) || 0;
    if (price > 0) this.last = price;
    const mag = this.last > 0 ? Math.floor(Math.log10(this.last)) : 0;
    this.priceDecimals = this.tick ? decimalsOf(this.tick) : clamp(4 - mag, 2, 8);
    const quoteShift = moneyDecimals(this.quote) - 2;
    this.amountDecimals = this.step ? decimalsOf(this.step) : this.last > 0 ? clamp(mag + 1 + quoteShift, 0, 8) : 4;
  }

  // price formats a price of the pair (no unit).
  price(n, opts) {
    if (n == null || n === '' || !Number.isFinite(Number(n))) return '–';
    return fixedText(n, this.priceDecimals, opts);
  }

  // amount formats a quantity of the pair's base asset (no unit), never
  // dropping a digit it has.
  amount(n, opts) {
    if (n == null || n === '' || !Number.isFinite(Number(n))) return '–';
    return fixedText(n, Math.max(this.amountDecimals, Math.min(8, decimalsOf(n))), opts);
  }

  // priceFormat is the chart library's price format for the pair
  // (grouped, as everywhere else).
  priceFormat() {
    return { type: 'custom', minMove: 10 ** -this.priceDecimals, formatter: (v) => this.price(v) };
  }
}

function clamp(v, lo, hi) { return Math.min(hi, Math.max(lo, v)); }

// chartMoneyFormat is the chart library's format for amounts of cur.
export function chartMoneyFormat(cur) {
  const d = moneyDecimals(cur);
  return { type: 'custom', minMove: 10 ** -d, formatter: (v) => money(v, cur) };
}

const exchangeMarkets = new Map(); // exchange → Promise<Map<pair, detail>>

// market returns the Market of a pair key, from pairs/detailed (fetched
// once per exchange and page load; a failure gives a Market without rules).
export async function market(key, referencePrice) {
  const i = key.indexOf('/');
  const exchange = key.slice(0, i), pair = key.slice(i + 1);
  if (!exchangeMarkets.has(exchange)) {
    exchangeMarkets.set(exchange, get('/pairs/detailed', { exchange }).then((r) => {
      const m = new Map();
      for (const list of Object.values(r.pairList || {})) for (const d of list) m.set(d.pairName, d);
      return m;
    }).catch(() => new Map()));
  }
  const d = (await exchangeMarkets.get(exchange)).get(pair) || {};
  const mk = new Market(key, d);
  if (!mk.last && referencePrice) mk.setReference(referencePrice);
  return mk;
}

// markets returns the Markets of several keys (a Map by key).
export async function markets(keys, referencePrices = {}) {
  const list = await Promise.all(keys.map((k) => market(k, referencePrices[k])));
  return new Map(list.map((m) => [m.key, m]));
}

// dateTime formats ms since the epoch in zone tz: 2024-03-10 12:00:00.
export function dateTime(ms, tz) {
  if (!ms) return '–';
  return dtFormat(tz).format(new Date(ms)).replace(',', '');
}

const dtFormats = new Map();
function dtFormat(tz) {
  let f = dtFormats.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-CA', {
      timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit',
      hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23',
    });
    dtFormats.set(tz, f);
  }
  return f;
}

const partFormats = new Map();

// zoneParts returns the wall-clock fields of ms in zone tz.
export function zoneParts(ms, tz) {
  let f = partFormats.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
    });
    partFormats.set(tz, f);
  }
  const p = {};
  for (const x of f.formatToParts(new Date(ms))) p[x.type] = x.value;
  return { year: +p.year, month: +p.month, day: +p.day, hour: +p.hour, minute: +p.minute, second: +p.second };
}

// zoneTime returns the ms of a wall-clock time in zone tz (DST included:
// two corrections settle the zone's offset).
export function zoneTime(year, month, day, hour = 0, minute = 0, second = 0, tz = 'UTC') {
  const want = Date.UTC(year, month - 1, day, hour, minute, second);
  let t = want;
  for (let i = 0; i < 2; i++) {
    const p = zoneParts(t, tz);
    t += want - Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  }
  return t;
}

// dayStart returns the ms of 00:00 of date (YYYY-MM-DD) in zone tz.
export function dayStart(date, tz) {
  const [y, m, d] = date.split('-').map(Number);
  return zoneTime(y, m, d, 0, 0, 0, tz);
}

// duration says a length of time in words a trader reads: "2 y 8 mo",
// "5 d 3 h", "40 min".
export function duration(ms) {
  const DAY = 864e5, HOUR = 36e5, MINUTE = 6e4, SECOND = 1e3;
  const d = ms / DAY;
  if (d >= 365) { const y = Math.floor(d / 365.25), mo = Math.floor((d - y * 365.25) / 30.44); return mo ? `${y} y ${mo} mo` : `${y} y`; }
  if (d >= 60) return `${Math.round(d / 30.44)} mo`;
  if (d >= 2) { const h = Math.round((d % 1) * 24); return h && d < 10 ? `${Math.floor(d)} d ${h} h` : `${Math.round(d)} d`; }
  if (ms >= HOUR) return `${Math.round(ms / HOUR)} h`;
  if (ms >= MINUTE) return `${Math.round(ms / MINUTE)} min`;
  return `${Math.round(ms / SECOND)} s`;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

// axisTime labels a time axis's tick t (ms) in zone tz for ticks a unit
// apart ('y', 'M', 'd', 'h', 'm' or 's'): with its month always ("10 Mar",
// "Apr", "14:00" under a day already named), the year on an axis part's
// first label (first) and at each new year.
export function axisTime(t, unit, first, tz) {
  const p = zoneParts(t, tz);
  const z = (n) => String(n).padStart(2, '0');
  const date = `${p.day} ${MONTHS[p.month - 1]}`;
  switch (unit) {
    case 'y': return String(p.year);
    case 'M': return first || p.month === 1 ? `${MONTHS[p.month - 1]} ${p.year}` : MONTHS[p.month - 1];
    case 'd': return first || (p.month === 1 && p.day === 1) ? `${date} ${p.year}` : date;
    default: {
      const time = unit === 's' ? `${z(p.hour)}:${z(p.minute)}:${z(p.second)}` : `${z(p.hour)}:${z(p.minute)}`;
      if (first) return `${date} ${p.year} ${time}`;
      return p.hour === 0 && p.minute === 0 && p.second === 0 ? date : time;
    }
  }
}
