import { h } from './dom.ts';
import { formatAmount } from './amounts.ts';

/**
 * An ad's pool (all that was put in) as a bar: the available part, the locked part (tokens reserved
 * for an order in progress) and the rest (reserved for orders not locked yet, being withdrawn, or
 * already paid out to Bridgers), with the numbers beside it (a bar alone says nothing to a screen
 * reader: it is a labelled image of the same numbers).
 */
export function balanceBar(ad: { poolAmount: string; availableAmount: string; lockedAmount: string }, decimals: number, symbol: string): HTMLElement {
  const pool = BigInt(ad.poolAmount);
  const available = BigInt(ad.availableAmount);
  const locked = BigInt(ad.lockedAmount);
  const other = pool - available - locked > 0n ? pool - available - locked : 0n;
  const share = (part: bigint): string => (pool === 0n ? '0%' : `${Number((part * 10_000n) / pool) / 100}%`);
  const text = `pool ${formatAmount(pool, decimals)} ${symbol}: available ${formatAmount(available, decimals)}, locked ${formatAmount(locked, decimals)}, the rest reserved, being withdrawn or paid out`;
  return h('div', { class: 'balances' },
    h('div', { class: 'bar', role: 'img', 'aria-label': text },
      h('span', { class: 'available', style: { width: share(available) } }),
      h('span', { class: 'locked', style: { width: share(locked) } }),
      h('span', { class: 'rest', style: { width: share(other) } })),
    h('dl', { class: 'numbers' },
      h('dt', null, 'Pool'), h('dd', { 'data-field': 'pool' }, `${formatAmount(pool, decimals)} ${symbol}`),
      h('dt', null, 'Available'), h('dd', { 'data-field': 'available' }, `${formatAmount(available, decimals)} ${symbol}`),
      h('dt', null, 'Locked'), h('dd', { 'data-field': 'locked' }, `${formatAmount(locked, decimals)} ${symbol}`)));
}
