import { rpc, xdr } from '@stellar/stellar-sdk';
import { RpcUnavailableError } from '../errors.ts';
import { scanStellarEvents } from './event-scan.ts';
import { decodeBridgeTopics } from './events.ts';
import { stellarView } from './views.ts';

/** One deposit as a Stellar OrderPortal's `OrderCreated` event reports it (same fields as on EVM). */
export interface StellarPortalDeposit {
  orderHash: string;
  reqHash: string;
  leafIndex: number;
  leaf: bigint;
  secretCommitment: bigint;
  root: bigint;
  ledger: number;
  txHash: string;
}

/**
 * The portal's deposits in ledgers `fromLedger..toLedger` (inclusive), in leaf order, read with
 * Soroban RPC `getEvents` (paged by cursor across the RPC's per-request scan limit: event-scan.ts). Data fields `leafIndex`, `leaf`, `secretCommitment`
 * and `root` are required; an OrderCreated event without them is a contract bug and throws.
 * The RPC only keeps recent ledgers (its retention window); older gaps need an archive.
 */
export async function readStellarPortalDeposits(
  server: rpc.Server,
  portal: string,
  fromLedger: number,
  toLedger: number,
  pageSize = 200,
): Promise<StellarPortalDeposit[]> {
  const filters: rpc.Api.EventFilter[] = [
    { type: 'contract', contractIds: [portal], topics: [[xdr.ScVal.scvSymbol('OrderCreated').toXDR('base64'), '*', '*']] },
  ];
  const deposits: StellarPortalDeposit[] = [];
  const outcome = await scanStellarEvents(server, { filters, fromLedger, toLedger, pageSize }, (event) => {
    const decoded = decodeBridgeTopics(portal, event.topic, event.value);
    if (!decoded || decoded.event !== 'OrderCreated') return;
    const field = (name: string) => {
      const value = decoded.args[name];
      if (value === undefined) throw new Error(`OrderCreated in ${event.txHash} lacks ${name}`);
      return BigInt(value);
    };
    deposits.push({
      orderHash: decoded.args.orderHash!,
      reqHash: decoded.args.reqHash!,
      leafIndex: Number(field('leafIndex')),
      leaf: field('leaf'),
      secretCommitment: field('secretCommitment'),
      root: field('root'),
      ledger: event.ledger,
      txHash: event.txHash,
    });
  });
  if (outcome === 'outside-retention') {
    throw new RpcUnavailableError(`Soroban RPC no longer holds ledger ${fromLedger} (before its retention window): ` +
      `the portal's deposits from there need an archive`);
  }
  return deposits.sort((a, b) => a.leafIndex - b.leafIndex);
}

/**
 * The portal's current root and leaf count (its `current_root` and `next_leaf_index` views), as
 * `readPortalRoot` reads them on EVM. Two simulations: if a deposit lands between them they
 * disagree, which the caller sees as a tree out of sync and retries. Throws `RpcUnavailableError`.
 */
export async function readStellarPortalRoot(server: rpc.Server, portal: string): Promise<{ root: bigint; leafCount: number }> {
  try {
    const [root, count] = await Promise.all([stellarView(server, portal, 'current_root'), stellarView(server, portal, 'next_leaf_index')]);
    return { root: BigInt(root.value as bigint), leafCount: Number(count.value) };
  } catch (error) {
    throw new RpcUnavailableError(`Soroban RPC failed to read the portal's root: ${(error as Error).message}`, { cause: error });
  }
}
