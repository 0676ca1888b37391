import { nativeToScVal, scValToNative, xdr } from '@stellar/stellar-sdk';
import type { Lies } from './rpc-fault-proxy.ts';

/**
 * What a lying provider tells (DOUBLES of a compromised RPC, each made from the real answer): a
 * receipt or transaction whose status is flipped, a forged log or event for a real order (another
 * leaf, another amount), another balance or state in a contract read.
 */

const flipLastHexDigit = (hex: string) => (hex.length > 2 ? `${hex.slice(0, -1)}${hex.endsWith('0') ? '1' : '0'}` : hex);

/** EVM JSON-RPC lies. */
export const evmLies: Lies = {
  eth_getTransactionReceipt: (receipt: { status: string; logs?: Array<{ data: string }> }) => ({
    ...receipt,
    status: receipt.status === '0x1' ? '0x0' : '0x1',
  }),
  // A forged log: the real order's event with its data (amount, leaf, root) altered.
  eth_getLogs: (logs: Array<{ data: string }>) => (logs.length > 0 ? logs.map((log) => ({ ...log, data: flipLastHexDigit(log.data) })) : undefined),
  // Another balance, another state, another root.
  eth_call: (result: string) => (result.length > 2 ? flipLastHexDigit(result) : undefined),
};

/** Stellar RPC lies. */
export const stellarLies: Lies = {
  getTransaction: (tx: { status: string }) => (tx.status === 'SUCCESS' ? { ...tx, status: 'FAILED' } : undefined),
  // Another balance or state: an integer a view returns, one more.
  simulateTransaction: (sim: { results?: Array<{ xdr: string }> }) => {
    const first = sim.results?.[0];
    if (!first) return undefined;
    const value = xdr.ScVal.fromXDR(first.xdr, 'base64');
    const kind = value.switch().name;
    if (kind !== 'scvI128' && kind !== 'scvU32' && kind !== 'scvU64') return undefined;
    const type = kind === 'scvI128' ? 'i128' : kind === 'scvU32' ? 'u32' : 'u64';
    const next = BigInt(scValToNative(value) as bigint | number) + 1n;
    const forged = nativeToScVal(type === 'u32' ? Number(next) : next, { type });
    return { ...sim, results: [{ ...first, xdr: forged.toXDR('base64') }, ...sim.results!.slice(1)] };
  },
  // Events the portal emitted, withheld.
  getEvents: (page: { events?: unknown[] }) => (page.events && page.events.length > 0 ? { ...page, events: [] } : undefined),
};
