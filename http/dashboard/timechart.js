// Charts on a time axis proportional to time: the overview's PNL, a pair's
// fill prices over its history, the value of the balances. (The live
// candles, evenly spaced by nature, stay on the chart library.)
//
// A point sits where its time is: an hour is the same width anywhere on an
// axis, one point per item (two fills in the same second are two points,
// each at its own price). A stretch with no data much longer than the rest
// (a history imported from 2024 and trading resumed in 2026) is cut out of
// the axis and marked there with how long it lasted, so that what
// surrounds it stays readable; each part of the axis is proportional to
// time (one scale for all, unless a part is too short to read), and the
// line across a cut is dashed. Shorter pauses stay on the axis, the line
// across them dashed when they are long against the data's usual
// spacing. Every label is fmt.js's: times in the chosen zone with their
// month (axisTime), a cut's length (duration), values by the page's
// formatter, the unit at the top of their axis.
//
// The last layout is on the element as el.chartLayout (segments, cuts,
// ticks, points with their x and y): the browser tests read it.

import { zoneParts, zoneTime, axisTime, duration } from './fmt.js';

const SECOND = 1000, MINUTE = 60 * SECOND, HOUR = 60 * MINUTE, DAY = 24 * HOUR;
// Tick steps: [unit, count, approximate ms].
const steps = [
  ['s', 1, SECOND], ['s', 5, 5 * SECOND], ['s', 15, 15 * SECOND], ['s', 30, 30 * SECOND],
  ['m', 1, MINUTE], ['m', 5, 5 * MINUTE], ['m', 15, 15 * MINUTE], ['m', 30, 30 * MINUTE],
  ['h', 1, HOUR], ['h', 2, 2 * HOUR], ['h', 3, 3 * HOUR], ['h', 6, 6 * HOUR], ['h', 12, 12 * HOUR],
  ['d', 1, DAY], ['d', 2, 2 * DAY], ['d', 7, 7 * DAY], ['d', 14, 14 * DAY],
  ['M', 1, 30.4 * DAY], ['M', 3, 91 * DAY], ['M', 6, 182 * DAY],
  ['y', 1, 365 * DAY], ['y', 2, 730 * DAY], ['y', 5, 1826 * DAY], ['y', 10, 3652 * DAY],
];
const CUT_WIDTH = 34; // px an axis cut takes
const TICK_SPACING = 78; // px between time labels at least

function css(name) { return getComputedStyle(document.documentElement).getPropertyValue(name).trim(); }

function colors() {
  return {
    fg: css('--fg'), muted: css('--muted'), grid: css('--grid'), border: css('--border'), panel: css('--panel'),
    pos: css('--pos'), neg: css('--neg'), accent: css('--accent'), accent2: css('--accent-2'), bg: css('--bg'),
  };
}

// niceTicks returns the round values (about n) within [lo, hi].
function niceTicks(lo, hi, n = 5) {
  const raw = (hi - lo) / n;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((x) => x >= raw) || 10 * mag;
  const out = [];
  for (let v = Math.ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step) out.push(Math.abs(v) < step * 1e-9 ? 0 : v);
  return out;
}

// wallTicks returns the tick times of step [unit, k] in [a, b], at round
// wall-clock times of zone tz.
function wallTicks(a, b, [unit, k, ms], tz) {
  const out = [];
  const p = zoneParts(a, tz);
  let y = p.year, mo = p.month, d = p.day, hh = p.hour, mi = p.minute, s = p.second;
  switch (unit) {
    case 'y': y = Math.floor(y / k) * k; mo = 1; d = 1; hh = mi = s = 0; break;
    case 'M': mo = Math.floor((mo - 1) / k) * k + 1; d = 1; hh = mi = s = 0; break;
    case 'd': hh = mi = s = 0; if (k === 7 || k === 14) d -= (new Date(Date.UTC(y, mo - 1, d)).getUTCDay() + 6) % 7; break; // weeks from Monday
    case 'h': hh = Math.floor(hh / k) * k; mi = s = 0; break;
    case 'm': mi = Math.floor(mi / k) * k; s = 0; break;
    case 's': s = Math.floor(s / k) * k; break;
  }
  for (let i = 0; i < 2000; i++) {
    const t = zoneTime(y, mo, d, hh, mi, s, tz);
    if (t > b) break;
    if (t >= a) out.push(t);
    switch (unit) {
      case 'y': y += k; break;
      case 'M': mo += k; break;
      case 'd': d += k; break;
      case 'h': hh += k; break;
      case 'm': mi += k; break;
      case 's': s += k; break;
    }
    if (unit !== 'y' && unit !== 'M' && unit !== 'd' && ms < DAY) {
      // Sub-day steps: normalise the wall clock (Date.UTC carries over).
      const n = new Date(Date.UTC(y, mo - 1, d, hh, mi, s));
      y = n.getUTCFullYear(); mo = n.getUTCMonth() + 1; d = n.getUTCDate(); hh = n.getUTCHours(); mi = n.getUTCMinutes(); s = n.getUTCSeconds();
    }
  }
  return out;
}

// timeChart draws into el (a block with a height). opts:
//   tz            the zone of the time labels
//   scales        {left?, right?}: {format(v) → text, unit (its title,
//                 drawn in the plot's top corner), fromZero}
//   minPad        ms of margin at least around each part of the axis
//                 (default a minute; a day's bars want half a day)
//   minStep       ms between time ticks at least (a day for daily data)
//   legend(item)  called with the item under the crosshair (or the
//                 keyboard's), null when none
//   empty         text drawn when there is no data
// setData(series, markers) draws:
//   series  [{kind: 'line'|'area'|'bars', scale: 'left'|'right', color,
//             hover (false: the crosshair skips it), points: [{t, v, t1?,
//             color?, item?}]}] (bars span t to t1)
//   markers [{t, v, side: 'buy'|'sell', scale, item?}]: one per item
export function timeChart(el, opts = {}) {
  const tz = opts.tz || 'UTC';
  const canvas = document.createElement('canvas');
  const overlay = document.createElement('canvas'); // the crosshair, over the drawing
  canvas.className = 'timechart';
  overlay.className = 'timechart-overlay';
  el.classList.add('has-timechart');
  el.replaceChildren(canvas, overlay);
  if (!el.hasAttribute('tabindex')) el.tabIndex = 0;
  const ctx = canvas.getContext('2d');
  let series = [], markers = [];
  let hover = -1; // index into items
  let items = []; // what the crosshair moves over, by time: {t, v, scale, item}
  let layout = null;

  function font(size = 11, weight = 'normal') {
    const family = getComputedStyle(document.body).fontFamily || 'sans-serif';
    return `${weight} ${size}px ${family}`;
  }

  // plan cuts the axis into segments at the long pauses and places each
  // segment's times.
  function plan(width) {
    const times = [];
    const pause = []; // [from, to] of data: bars span
    for (const s of series) for (const p of s.points) { times.push(p.t); if (p.t1 != null) times.push(p.t1); pause.push([p.t, p.t1 ?? p.t]); }
    for (const m of markers) { times.push(m.t); pause.push([m.t, m.t]); }
    if (times.length === 0) return null;
    pause.sort((a, b) => a[0] - b[0]);
    // Stretches without data between consecutive items.
    const gaps = [];
    let reach = pause[0][1];
    for (let i = 1; i < pause.length; i++) {
      if (pause[i][0] > reach) gaps.push([reach, pause[i][0]]);
      reach = Math.max(reach, pause[i][1]);
    }
    const lo = pause[0][0], hi = reach;
    // Cut the pauses that take more than 30% of the axis and are over 20
    // times the data's usual spacing (three at most, the longest).
    // The usual spacing: the median step between items that differ in
    // time (a day for daily bars, whatever the fills' pace).
    const sizes = [];
    for (let i = 1; i < pause.length; i++) if (pause[i][0] > pause[i - 1][0]) sizes.push(pause[i][0] - pause[i - 1][0]);
    sizes.sort((a, b) => a - b);
    const usual = sizes.length ? sizes[Math.floor(sizes.length / 2)] : 0;
    const cuts = gaps.filter((g) => g[1] - g[0] > 0.3 * (hi - lo) && g[1] - g[0] > 20 * usual)
      .sort((a, b) => (b[1] - b[0]) - (a[1] - a[0])).slice(0, 3).sort((a, b) => a[0] - b[0]);
    const minPad = opts.minPad ?? MINUTE;
    const segs = [];
    let from = lo;
    for (const c of cuts) { segs.push({ a: from, b: c[0] }); from = c[1]; }
    segs.push({ a: from, b: hi });
    for (const s of segs) {
      // A margin of 4% each side (a second at least); a part that is one
      // instant gets minPad.
      const pad = s.b > s.a ? Math.max((s.b - s.a) * 0.04, Math.min(minPad, SECOND)) : minPad;
      s.from = s.a - pad; s.to = s.b + pad;
    }
    // Widths by duration, one scale for every part, except that a part
    // too short to read gets a floor (and says its own times).
    const avail = Math.max(40, width - cuts.length * CUT_WIDTH);
    const floor = Math.min(90, avail / segs.length / 2);
    const fixed = new Set();
    for (let round = 0; round < segs.length; round++) {
      const rest = segs.filter((s) => !fixed.has(s));
      const total = rest.reduce((n, s) => n + (s.to - s.from), 0);
      const room = avail - floor * fixed.size;
      for (const s of rest) s.w = room * (s.to - s.from) / total;
      const small = rest.filter((s) => s.w < floor);
      if (small.length === 0) break;
      for (const s of small) { s.w = floor; fixed.add(s); }
    }
    let x = 0;
    segs.forEach((s, i) => {
      s.x = x;
      x += s.w + (i < cuts.length ? CUT_WIDTH : 0);
    });
    // Pauses left on the axis that are far longer than the data's usual
    // spacing: the line across them is dashed.
    const pauses = gaps.filter((g) => !cuts.includes(g) && usual > 0 && g[1] - g[0] > 10 * usual &&
      g[1] - g[0] > 0.1 * (hi - lo));
    return { segs, cuts, pauses };
  }

  function xOf(segs, t) {
    for (const s of segs) {
      if (t <= s.to + 1) return s.x + (Math.max(s.from, t) - s.from) / (s.to - s.from) * s.w;
    }
    const s = segs[segs.length - 1];
    return s.x + s.w;
  }

  function draw() {
    const c = colors();
    const dpr = window.devicePixelRatio || 1;
    const W = el.clientWidth, H = el.clientHeight;
    if (W === 0 || H === 0) return; // hidden: drawn when shown (resize)
    canvas.width = Math.round(W * dpr); canvas.height = Math.round(H * dpr);
    canvas.style.width = W + 'px'; canvas.style.height = H + 'px';
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, W, H);
    ctx.font = font();
    // Value scales: the data's range, room for the markers above and
    // below it, 0 included for bars (and fromZero); with two scales, their
    // zeros on one line.
    const top = 18, bottom = 36;
    const plotH = Math.max(20, H - top - bottom);
    const scales = {};
    for (const name of ['left', 'right']) {
      const sc = opts.scales?.[name];
      if (!sc) continue;
      const vals = [];
      for (const s of series) if ((s.scale || 'left') === name) for (const p of s.points) vals.push(p.v);
      for (const m of markers) if ((m.scale || 'left') === name) vals.push(m.v);
      if (vals.length === 0) continue;
      let lo = Math.min(...vals), hi = Math.max(...vals);
      const zero = sc.fromZero || series.some((s) => s.kind === 'bars' && (s.scale || 'left') === name);
      if (zero) { lo = Math.min(0, lo); hi = Math.max(0, hi); }
      if (!(hi > lo)) { const d = Math.abs(hi) * 0.01 || 1; if (!(zero && lo === 0)) lo -= d; hi += d; }
      const room = (hi - lo) * 16 / Math.max(1, plotH - 32); // 16 px for a marker
      if (!(zero && lo === 0 && sc.fromZero)) lo -= room;
      hi += room;
      scales[name] = { ...sc, lo, hi };
    }
    if (scales.left && scales.right && [scales.left, scales.right].every((x) => x.lo <= 0 && x.hi >= 0)) {
      // The zero's height from the bottom, as a share of the axis: the
      // larger of the two for both.
      const f = Math.max(...[scales.left, scales.right].map((x) => Math.min(0.95, Math.max(0, -x.lo / (x.hi - x.lo)))));
      for (const x of [scales.left, scales.right]) {
        if (x.hi <= 0) continue;
        const lo = -f * x.hi / (1 - f);
        if (lo < x.lo) x.lo = lo;
        else x.hi = -x.lo * (1 - f) / f || x.hi;
      }
    }
    for (const sc of Object.values(scales)) {
      sc.ticks = niceTicks(sc.lo, sc.hi, Math.max(2, Math.floor(plotH / 55)));
      sc.labels = sc.ticks.map((v) => sc.format(v));
      sc.width = Math.max(...sc.labels.map((l) => ctx.measureText(l).width)) + 12;
    }
    const left = scales.left ? scales.left.width : 8;
    const right = scales.right ? scales.right.width : 8;
    const plotW = Math.max(40, W - left - right);
    const p = plan(plotW);
    const yOf = (name, v) => {
      const sc = scales[name || 'left'] || scales.left || scales.right;
      return top + plotH - (v - sc.lo) / (sc.hi - sc.lo) * plotH;
    };
    // Value grid and labels.
    ctx.textBaseline = 'middle';
    for (const [name, sc] of Object.entries(scales)) {
      ctx.fillStyle = c.muted;
      ctx.textAlign = name === 'left' ? 'right' : 'left';
      const x = name === 'left' ? left - 6 : left + plotW + 6;
      sc.ticks.forEach((v, i) => {
        const y = yOf(name, v);
        if (name === 'left' || !scales.left) {
          ctx.strokeStyle = v === 0 ? c.border : c.grid;
          ctx.beginPath(); ctx.moveTo(left, Math.round(y) + 0.5); ctx.lineTo(left + plotW, Math.round(y) + 0.5); ctx.stroke();
        }
        ctx.fillText(sc.labels[i], x, y);
      });
      ctx.font = font(11, '600');
      ctx.textBaseline = 'top';
      ctx.textAlign = name === 'left' ? 'left' : 'right';
      ctx.fillText(sc.unit || '', name === 'left' ? left : left + plotW, 2);
      ctx.textBaseline = 'middle';
      ctx.font = font();
    }
    if (!p) {
      ctx.fillStyle = c.muted; ctx.textAlign = 'center';
      ctx.fillText(opts.empty || 'No data yet.', left + plotW / 2, top + plotH / 2);
      layout = { segments: [], cuts: [], ticks: [], points: [] };
      el.chartLayout = layout;
      el.dataset.points = '0';
      return;
    }
    const X = (t) => left + xOf(p.segs, t);
    // The cuts.
    const cuts = p.cuts.map((g, i) => {
      const x0 = left + p.segs[i].x + p.segs[i].w, x1 = x0 + CUT_WIDTH;
      ctx.fillStyle = c.bg;
      ctx.fillRect(x0, top, CUT_WIDTH, plotH);
      ctx.strokeStyle = c.muted;
      for (const x of [x0 + 3, x1 - 3]) { // a broken axis: two slanted strokes
        ctx.beginPath(); ctx.moveTo(x - 4, top + plotH + 6); ctx.lineTo(x + 4, top + plotH - 6); ctx.stroke();
      }
      const label = duration(g[1] - g[0]);
      ctx.save();
      ctx.fillStyle = c.muted; ctx.font = font(10);
      ctx.translate((x0 + x1) / 2, top + plotH / 2);
      ctx.rotate(-Math.PI / 2);
      ctx.textAlign = 'center';
      ctx.fillText(`${label} without data`, 0, 0);
      ctx.restore();
      return { from: g[0], to: g[1], x: x0, width: CUT_WIDTH, label };
    });
    // Time ticks per segment.
    const ticks = [];
    ctx.textAlign = 'center'; ctx.textBaseline = 'top';
    for (const s of p.segs) {
      const dur = s.to - s.from;
      const step = steps.find((st) => st[2] >= (opts.minStep || 0) && st[2] / dur * s.w >= TICK_SPACING) || steps[steps.length - 1];
      let ts = wallTicks(s.from, s.to, step, tz);
      let unit = step[0];
      if (ts.length === 0) {
        // A short part (fills within a minute): its data's time, in full.
        const t = Math.round((s.a + s.b) / 2000) * 1000;
        ts = [t];
        unit = zoneParts(t, tz).second ? 's' : 'm';
      }
      let lastRight = -Infinity;
      const segRight = left + s.x + s.w + (s === p.segs[p.segs.length - 1] ? right : 0);
      for (const t of ts) {
        const x = X(t);
        ctx.strokeStyle = c.grid;
        ctx.beginPath(); ctx.moveTo(Math.round(x) + 0.5, top); ctx.lineTo(Math.round(x) + 0.5, top + plotH); ctx.stroke();
        // The segment's first label names the date (and year) in full.
        const label = axisTime(t, unit, lastRight === -Infinity, tz);
        const w = ctx.measureText(label).width;
        let lx = x;
        if (ts.length === 1) lx = Math.min(W - w / 2 - 2, Math.max(left + s.x + w / 2 - (s.x ? CUT_WIDTH : 0), x)); // alone: shown whole
        else if (x - w / 2 < lastRight + 8 || x - w / 2 < left + s.x - 4 || x + w / 2 > segRight + 4) continue;
        ctx.fillStyle = c.muted;
        ctx.fillText(label, lx, top + plotH + 6);
        lastRight = lx + w / 2;
        ticks.push({ t, x, label });
      }
    }
    ctx.strokeStyle = c.border;
    ctx.beginPath(); ctx.moveTo(left, top + plotH + 0.5); ctx.lineTo(left + plotW, top + plotH + 0.5); ctx.stroke();
    // Series.
    const segOf = (t) => p.segs.findIndex((s) => t <= s.to + 1);
    const points = [];
    for (const s of series) {
      const color = s.color || c.accent;
      if (s.kind === 'bars') {
        const zero = yOf(s.scale, 0);
        for (const q of s.points) {
          const x0 = X(q.t), x1 = X(q.t1 ?? q.t);
          const w = Math.max(1, x1 - x0 - 1);
          const y = yOf(s.scale, q.v);
          ctx.fillStyle = q.color || color;
          ctx.globalAlpha = 0.6;
          ctx.fillRect(x0, Math.min(y, zero), w, Math.max(1, Math.abs(zero - y)));
          ctx.globalAlpha = 1;
        }
        continue;
      }
      const pts = s.points.map((q) => ({ x: X(q.t), y: yOf(s.scale, q.v), seg: segOf(q.t) }));
      if (s.kind === 'area' && pts.length) {
        const zero = Math.min(top + plotH, yOf(s.scale, Math.max(0, scales[s.scale || 'left']?.lo ?? 0)));
        ctx.fillStyle = color; ctx.globalAlpha = 0.15;
        let start = 0;
        for (let i = 1; i <= pts.length; i++) {
          if (i < pts.length && pts[i].seg === pts[start].seg) continue;
          ctx.beginPath(); ctx.moveTo(pts[start].x, zero);
          for (let j = start; j < i; j++) ctx.lineTo(pts[j].x, pts[j].y);
          ctx.lineTo(pts[i - 1].x, zero); ctx.closePath(); ctx.fill();
          start = i;
        }
        ctx.globalAlpha = 1;
      }
      ctx.strokeStyle = color; ctx.lineWidth = s.width || 1.5;
      const paused = (a, b) => p.pauses.some((g) => a <= g[0] && b >= g[1]);
      for (let i = 1; i < pts.length; i++) {
        const across = pts[i].seg !== pts[i - 1].seg || paused(s.points[i - 1].t, s.points[i].t);
        ctx.setLineDash(across ? [3, 4] : []);
        ctx.beginPath(); ctx.moveTo(pts[i - 1].x, pts[i - 1].y); ctx.lineTo(pts[i].x, pts[i].y); ctx.stroke();
      }
      ctx.setLineDash([]); ctx.lineWidth = 1;
      if (pts.length === 1 || s.dots) {
        ctx.fillStyle = color;
        for (const q of pts) { ctx.beginPath(); ctx.arc(q.x, q.y, 2.5, 0, 2 * Math.PI); ctx.fill(); }
      }
      if (!markers.length) s.points.forEach((q, i) => points.push({ t: q.t, v: q.v, x: pts[i].x, y: pts[i].y }));
    }
    for (const m of markers) {
      const x = X(m.t), y = yOf(m.scale, m.v);
      const buy = m.side === 'buy';
      ctx.fillStyle = buy ? c.pos : c.neg;
      ctx.beginPath();
      if (buy) { ctx.moveTo(x, y + 2); ctx.lineTo(x - 5, y + 10); ctx.lineTo(x + 5, y + 10); } // ▲ under its price
      else { ctx.moveTo(x, y - 2); ctx.lineTo(x - 5, y - 10); ctx.lineTo(x + 5, y - 10); } // ▼ over it
      ctx.closePath(); ctx.fill();
      ctx.beginPath(); ctx.arc(x, y, 2, 0, 2 * Math.PI); ctx.fill();
      points.push({ t: m.t, v: m.v, x, y, side: m.side });
    }
    layout = {
      left, top, plotW, plotH,
      segments: p.segs.map((s) => ({ from: s.from, to: s.to, x: left + s.x, width: s.w })),
      cuts, ticks, points,
      pauses: p.pauses.map((g) => ({ from: g[0], to: g[1] })),
    };
    layout.xOf = (t) => X(t);
    layout.yOf = yOf;
    el.chartLayout = layout;
    el.dataset.points = String(points.length);
    el.dataset.cuts = String(cuts.length);
    drawHover();
  }

  // drawHover draws the crosshair at the hovered item on the overlay.
  function drawHover() {
    const dpr = window.devicePixelRatio || 1;
    const W = el.clientWidth, H = el.clientHeight;
    if (overlay.width !== Math.round(W * dpr) || overlay.height !== Math.round(H * dpr)) {
      overlay.width = Math.round(W * dpr); overlay.height = Math.round(H * dpr);
      overlay.style.width = W + 'px'; overlay.style.height = H + 'px';
    }
    const o = overlay.getContext('2d');
    o.setTransform(dpr, 0, 0, dpr, 0, 0);
    o.clearRect(0, 0, W, H);
    if (!layout || hover < 0 || !items[hover]) return;
    const c = colors();
    const it = items[hover];
    const x = layout.xOf(it.t);
    o.strokeStyle = c.muted; o.setLineDash([4, 3]);
    o.beginPath(); o.moveTo(Math.round(x) + 0.5, layout.top); o.lineTo(Math.round(x) + 0.5, layout.top + layout.plotH); o.stroke();
    o.setLineDash([]);
    if (it.v != null) {
      const y = layout.yOf(it.scale, it.v);
      o.strokeStyle = c.fg; o.lineWidth = 1.5; o.beginPath(); o.arc(x, y, 5, 0, 2 * Math.PI); o.stroke();
    }
  }

  // The crosshair follows the pointer to the nearest item (by x, then y:
  // of two fills in the same second, the one nearer the pointer).
  function nearest(px, py) {
    if (!layout || items.length === 0) return -1;
    let lo = 0, hi = items.length - 1;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (layout.xOf(items[mid].t) < px) lo = mid + 1; else hi = mid; }
    let best = -1, dist = Infinity;
    for (let i = Math.max(0, lo - 3); i <= Math.min(items.length - 1, lo + 3); i++) {
      const it = items[i];
      const dx = Math.abs(layout.xOf(it.t) - px);
      const dy = it.v != null && py != null ? Math.abs(layout.yOf(it.scale, it.v) - py) / 50 : 0;
      if (dx + dy < dist) { dist = dx + dy; best = i; }
    }
    return best;
  }
  function setHover(i) {
    hover = i;
    drawHover();
    opts.legend?.(i >= 0 ? items[i].item : null);
  }
  const onMove = (e) => {
    const r = canvas.getBoundingClientRect();
    const i = nearest(e.clientX - r.left, e.clientY - r.top);
    if (i !== hover) setHover(i);
  };
  const onLeave = () => setHover(-1);
  const onKey = (e) => {
    if (items.length === 0) return;
    const moves = { ArrowLeft: -1, ArrowRight: 1 };
    if (e.key in moves) { setHover(Math.min(items.length - 1, Math.max(0, (hover < 0 ? items.length : hover) + moves[e.key]))); e.preventDefault(); }
    else if (e.key === 'Home') { setHover(0); e.preventDefault(); }
    else if (e.key === 'End') { setHover(items.length - 1); e.preventDefault(); }
    else if (e.key === 'Escape') setHover(-1);
  };
  overlay.addEventListener('pointermove', onMove);
  overlay.addEventListener('pointerleave', onLeave);
  el.addEventListener('keydown', onKey);
  el.addEventListener('blur', onLeave);
  let width = 0, height = 0;
  const ro = new ResizeObserver(() => {
    if (el.clientWidth !== width || el.clientHeight !== height) { width = el.clientWidth; height = el.clientHeight; draw(); }
  });
  ro.observe(el);
  const onTheme = () => draw();
  window.addEventListener('themechange', onTheme);

  return {
    // setData replaces what is drawn (see above).
    setData(s, m = []) {
      series = s || [];
      markers = m || [];
      if (markers.length) {
        // One item per marker (per fill), in time order.
        items = markers.map((x) => ({ t: x.t, v: x.v, scale: x.scale, item: x.item ?? x })).sort((a, b) => a.t - b.t);
      } else {
        // One item per time (a day's bar and its line point are one),
        // the line's value for the crosshair's dot.
        const byT = new Map();
        for (const x of series) {
          if (x.hover === false) continue;
          for (const q of x.points) {
            const cur = byT.get(q.t);
            if (!cur || (cur.v == null && x.kind !== 'bars')) byT.set(q.t, { t: q.t, v: x.kind === 'bars' ? null : q.v, scale: x.scale, item: q.item ?? q });
          }
        }
        items = [...byT.values()].sort((a, b) => a.t - b.t);
      }
      hover = -1;
      draw();
    },
    // setScales changes the value formats (a currency picked).
    setScales(scales) { opts.scales = scales; draw(); },
    get layout() { return layout; },
    destroy() {
      ro.disconnect();
      window.removeEventListener('themechange', onTheme);
      el.removeEventListener('keydown', onKey);
      el.replaceChildren();
    },
  };
}

