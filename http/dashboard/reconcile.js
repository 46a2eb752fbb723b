// Reconciliation: each exchange account, per asset, the balance the
// ledger implies against the exchange's (GET reconciliation/accounts: as
// the exchange last reported it, the discrepancies open and since when,
// how far each history has been read), and, on demand, the reconciliation
// of the last day (GET reconciliation: the account's history read from
// the exchange and what the log lacked recorded, the balances compared
// now, the service's fills against the exchange's list, the activity). As
// of a past time, the reconciliation as the log held it then. Below, the
// account's latest activity as the log holds it (GET
// reconciliation/activity): trades this service did not place marked
// external, deposits, withdrawals, conversions. Amounts go by their
// asset, times by the chosen zone.

import { h, replace } from './dom.js';
import { get } from './api.js';
import { debounce } from './live.js';
import { money, count, dateTime } from './fmt.js';

// counted says n of a thing: "1 trade", "2 trades", "0 deposits".
const counted = (n, thing) => `${count(n)} ${thing}${Number(n) === 1 ? '' : 's'}`;

const DAY = 24 * 3600 * 1000;

export async function render(view, ctx) {
  const tz = ctx.tz;
  const { config } = await get('/config/full');
  const exchanges = Object.keys(config.exchanges || {}).sort();
  const box = h('div', { id: 'reconcile-box' });
  replace(view, h('h1', null, 'Reconciliation'),
    h('p', { class: 'muted' }, ctx.asOf
      ? `As the log held each account on ${dateTime(ctx.asOf, tz)} (${tz}).`
      : 'Per asset, the balance the ledger implies (the opening, then every trade, fee, deposit, withdrawal and conversion) against the exchange\'s.'),
    box);

  // One section per configured exchange; its last reconciliation now, kept
  // across redraws.
  const results = new Map();

  function assetTable(ex, rows, withSince) {
    return h('div', { class: 'table-wrap' }, h('table', { class: 'reconcile stack', dataset: { exchange: ex } },
      h('thead', null, h('tr', null, ['Asset', 'Ledger', 'Exchange', 'Difference', ...(withSince ? ['Since'] : [])].map((l, i) =>
        h('th', { scope: 'col', class: i && i < 4 ? 'num' : null }, l)))),
      h('tbody', null, rows.map((a) => {
        const differs = Number(a.difference) !== 0;
        return h('tr', { dataset: { asset: a.asset, differs: differs ? 'yes' : 'no' }, class: differs ? 'differs' : null },
          h('td', { 'data-label': 'Asset' }, a.asset),
          h('td', { class: 'num', 'data-label': 'Ledger' }, money(a.ledger, a.asset)),
          h('td', { class: 'num', 'data-label': 'Exchange' }, money(a.exchange, a.asset)),
          h('td', { class: differs ? 'num neg' : 'num', 'data-label': 'Difference', 'data-col': 'difference' }, differs ? money(a.difference, a.asset, { sign: true }) : 'matched'),
          ...(withSince ? [h('td', { 'data-label': 'Since', 'data-col': 'since' }, a.since ? dateTime(Date.parse(a.since), tz) : '')] : []));
      }))));
  }

  function resultView(ex, r) {
    if (!r) return h('p', { class: 'muted' }, 'Not reconciled from this page yet.');
    if (r.error) return h('p', { class: 'error', role: 'alert' }, r.error);
    const f = r.fills, a = r.activity;
    return h('div', { class: 'reconciled', dataset: { status: r.status } },
      h('p', { class: r.status === 'ok' ? 'pos' : 'neg', 'data-col': 'status' },
        r.status === 'ok' ? 'Reconciled: every balance matches to the unit.' : 'Discrepancy: a balance differs from the one the ledger implies.',
        ` Checked ${dateTime(Date.parse(r.checkedAt), tz)} (${tz}), the last 24 hours.`),
      assetTable(ex, r.assets, false),
      h('dl', { class: 'facts', dataset: { exchange: ex } },
        h('dt', null, 'This service\'s fills'),
        h('dd', { 'data-col': 'fills' }, `${count(f.matched)} matched, ${count(f.missing)} missing then recorded, ${count(f.extra)} extra (in the log, not listed), ${count(f.mismatched)} mismatched`),
        h('dt', null, 'Activity'),
        h('dd', { 'data-col': 'activity' }, `${counted(a.trades, 'trade')} (${count(a.externalTrades)} not placed by this service), ${counted(a.deposits, 'deposit')}, ${counted(a.withdrawals, 'withdrawal')}, ${counted(a.conversions, 'conversion')}`)));
  }

  // What a fact of reconciliation/activity says, in a line.
  function factText(f) {
    const x = f.fact;
    switch (f.kind) {
      case 'trade': {
        const [quote, base] = (x.pair || '').split('-');
        return `${x.side} ${money(x.quantity, base)} ${base} (${x.pair}) at ${money(x.price, quote)} ${quote}, fee ${money(x.fee, x.feeAsset)} ${x.feeAsset}, trade ${x.tradeId}`;
      }
      case 'deposit':
        return `${money(x.amount, x.asset)} ${x.asset} ${x.status}${x.txid ? `, txid ${x.txid}` : ''}${x.address ? `, from ${x.address}` : ''}`;
      case 'withdrawal':
        return `${money(x.amount, x.asset)} ${x.asset} ${x.status}${x.fee ? `, network fee ${money(x.fee, x.asset)} ${x.asset}` : ''}${x.address ? `, to ${x.address}` : ''}${x.addressTag ? ` (tag ${x.addressTag})` : ''}`;
      case 'conversion':
        return `${x.kind}: ${money(x.fromAmount, x.fromAsset)} ${x.fromAsset} → ${money(x.toAmount, x.toAsset)} ${x.toAsset}${x.fee ? `, fee ${money(x.fee, x.feeAsset)} ${x.feeAsset}` : ''}`;
      case 'fillMismatch':
        return `order ${x.orderId}'s fill ${x.fillId}: ${x.field} ${x.log} in the log, ${x.listed} listed`;
      case 'fillUnlisted':
        return `order ${x.orderId}'s fill ${x.fillId}: in the log, not listed by the exchange`;
    }
    return '';
  }

  function activityTable(ex, act) {
    if (!act) return null;
    if (act.error) return h('p', { class: 'error', role: 'alert' }, act.error);
    if (!act.facts.length) return h('p', { class: 'muted small', 'data-col': 'activity-empty' }, 'No activity in the log for the last 30 days.');
    return h('details', { class: 'activity', open: true },
      h('summary', null, `Latest activity${act.more ? ` (the ${act.facts.length} newest)` : ''}`),
      h('div', { class: 'table-wrap' }, h('table', { class: 'account-activity stack', dataset: { exchange: ex } },
        h('thead', null, h('tr', null, ['Time', 'Kind', 'What'].map((l) => h('th', { scope: 'col' }, l)))),
        h('tbody', null, act.facts.map((f) => h('tr', { dataset: { kind: f.kind, external: f.external ? 'yes' : 'no' } },
          h('td', { 'data-label': 'Time' }, dateTime(f.time, tz)),
          h('td', { 'data-label': 'Kind' }, f.kind,
            f.external ? [' ', h('span', { class: 'badge external', title: 'A trade on the account that this service did not place' }, 'external')] : null,
            f.inOpening ? [' ', h('span', { class: 'badge muted', title: 'At or before the opening: already in its stated balances' }, 'in opening')] : null),
          h('td', { 'data-label': 'What', 'data-col': 'what' }, factText(f))))))));
  }

  async function activity(ex) {
    const params = { exchange: ex, limit: 20 };
    if (ctx.asOf) params.to = ctx.asOf;
    try {
      return await get('/reconciliation/activity', params);
    } catch (err) {
      return { error: err.message };
    }
  }

  async function reconcile(ex) {
    const params = { exchange: ex, from: (ctx.asOf || Date.now()) - DAY };
    if (ctx.asOf) params.asOf = ctx.asOf;
    try {
      results.set(ex, await get('/reconciliation', params));
    } catch (err) {
      results.set(ex, { error: err.message });
    }
    await draw();
  }

  async function draw() {
    const { accounts } = await get('/reconciliation/accounts');
    const byEx = new Map(accounts.map((a) => [a.exchange, a]));
    const acts = new Map(await Promise.all(accounts.filter((a) => exchanges.includes(a.exchange)).map(async (a) => [a.exchange, await activity(a.exchange)])));
    if (exchanges.length === 0) {
      replace(box, h('p', { class: 'muted' }, 'No exchange configured.'));
      return;
    }
    replace(box, exchanges.map((ex) => {
      const acc = byEx.get(ex);
      const button = h('button', {
        type: 'button', class: 'primary', id: `reconcile-${ex}`,
        onclick: async () => { button.disabled = true; button.textContent = 'Reconciling…'; await reconcile(ex); },
      }, ctx.asOf ? 'Reconcile as of then' : 'Reconcile now');
      const open = acc ? acc.assets.filter((a) => a.since) : [];
      return h('section', { 'aria-labelledby': `rc-${ex}`, class: 'account', dataset: { exchange: ex, status: acc?.status || 'unknown' } },
        h('h2', { id: `rc-${ex}` }, ex, ' ', h('span', { class: `badge ${acc?.status === 'discrepancy' ? 'neg' : acc ? 'pos' : 'muted'}` },
          acc ? (acc.status === 'ok' ? 'matched' : 'differs') : 'not synced yet')),
        acc
          ? h('p', { class: 'muted small' }, `Opening stated ${dateTime(Date.parse(acc.openedAt), tz)}; balances compared as the exchange reported them ${acc.reportedAt ? dateTime(Date.parse(acc.reportedAt), tz) : '–'} (${tz}).`,
            open.length ? ` ${open.length} discrepanc${open.length === 1 ? 'y' : 'ies'} open.` : '')
          : h('p', { class: 'muted small' }, 'The system reads the account\'s activity while it runs; reconcile now to read it at once.'),
        acc ? assetTable(ex, acc.assets, true) : null,
        acc && acc.synced.length ? h('details', null, h('summary', null, 'Histories read'),
          h('ul', { class: 'small mono' }, acc.synced.map((s) => h('li', null, `${s.history}: ${dateTime(Date.parse(s.from), tz)} – ${dateTime(Date.parse(s.through), tz)}`)))) : null,
        h('div', { class: 'row' }, button),
        h('div', { class: 'result', id: `result-${ex}` }, resultView(ex, results.get(ex))),
        activityTable(ex, acts.get(ex)));
    }));
  }

  await draw();
  const refresh = debounce(() => { draw().catch(() => {}); }, 1000);
  const off = ctx.live?.on((e) => {
    if (['BalanceDiscrepancy', 'BalanceDiscrepancyCleared', 'BalancesObserved', 'AccountOpened', 'ActivitySynced',
      'ExternalFill', 'Deposit', 'Withdrawal', 'Conversion', 'FillMismatch', 'FillUnlisted'].includes(e.type)) refresh();
  });
  return () => { if (off) off(); };
}
