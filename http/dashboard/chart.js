// Charts: the vendored TradingView Lightweight Charts™ (see footer and
// vendor/lightweight-charts/NOTICE), themed from the stylesheet's colours.

import * as LWC from './vendor/lightweight-charts/lightweight-charts.mjs';
import { dateTime } from './fmt.js';

export { LWC };

function css(name) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
}

export function colors() {
  return {
    text: css('--fg'), muted: css('--muted'), grid: css('--grid'), border: css('--border'),
    pos: css('--pos'), neg: css('--neg'), accent: css('--accent'), accent2: css('--accent-2'),
  };
}

function themeOptions() {
  const c = colors();
  return {
    layout: { background: { type: 'solid', color: 'transparent' }, textColor: c.text, attributionLogo: false,
      fontFamily: getComputedStyle(document.body).fontFamily },
    grid: { vertLines: { color: c.grid }, horzLines: { color: c.grid } },
    rightPriceScale: { borderColor: c.border },
    leftPriceScale: { borderColor: c.border },
    timeScale: { borderColor: c.border },
  };
}

// makeChart creates a chart in el that follows the theme and the element's
// size; destroy() removes it.
export function makeChart(el, options = {}) {
  const chart = LWC.createChart(el, { autoSize: true, ...themeOptions(), ...options });
  const onTheme = () => chart.applyOptions(themeOptions());
  window.addEventListener('themechange', onTheme);
  // A narrower window (a phone turned, a resized window) shows all the data
  // again rather than a slice of it.
  let width = el.clientWidth;
  const ro = new ResizeObserver(() => {
    if (el.clientWidth !== width) { width = el.clientWidth; chart.timeScale().fitContent(); }
  });
  ro.observe(el);
  chart.destroy = () => { ro.disconnect(); window.removeEventListener('themechange', onTheme); chart.remove(); };
  return chart;
}

// zoneTimes returns the options that label a chart's times (UTC seconds)
// in zone tz: the crosshair's time and the time axis's ticks (the library
// itself shows UTC).
export function zoneTimes(tz) {
  const f = (o) => new Intl.DateTimeFormat('en-GB', { timeZone: tz, ...o });
  const year = f({ year: 'numeric' }), month = f({ month: 'short', year: '2-digit' }), day = f({ day: 'numeric', month: 'short' });
  const time = f({ hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
  const seconds = f({ hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' });
  const fmts = [year, month, day, time, seconds]; // by LWC.TickMarkType
  return {
    localization: { timeFormatter: (t) => dateTime(t * 1000, tz).slice(0, 16) },
    timeScale: { timeVisible: true, tickMarkFormatter: (t, type) => (fmts[type] || time).format(new Date(t * 1000)) },
  };
}
